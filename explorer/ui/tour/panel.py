"""The tour's panel: the step's title, its two or three sentences, Back / Next / Close."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING
from explorer.ui.tour.card import FloatingCard

__all__ = ["TourPanel", "PANEL_WIDTH"]

#: the card's width: a third of the window, within these bounds
PANEL_WIDTH, PANEL_MIN_WIDTH = 420, 320
#: distance from the window's content edges
_MARGIN = 12


class TourPanel(FloatingCard):
    """A card floating over the window's content, always in its bottom right corner.

    Signals
    -------
    back_clicked(), next_clicked(), close_clicked()
    """

    back_clicked = Signal()
    next_clicked = Signal()
    close_clicked = Signal()

    def __init__(self, window: QWidget):
        super().__init__(window, "TourPanel")
        self.setFrameShape(QFrame.StyledPanel)
        self.heading = QLabel()  # one line (a wrapped rich-text label reserves room for more)
        self.heading.setTextFormat(Qt.RichText)
        self.body = WrapLabel()
        self.body.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.body.setTextFormat(Qt.PlainText)
        self.back_button = QPushButton("Back")
        self.back_button.setToolTip("The previous step")
        self.next_button = QPushButton("Next")
        self.next_button.setToolTip("The next step")
        self.next_button.setDefault(True)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Leave the tour: your own model, text and view come back")
        buttons = self.button_row([self.back_button], [self.close_button, self.next_button])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 1.5, SPACING, SPACING * 1.5, SPACING)
        lay.setSpacing(SPACING)
        lay.addWidget(self.heading)
        lay.addWidget(self.body)
        lay.addLayout(buttons)
        self.back_button.clicked.connect(self.back_clicked)
        self.next_button.clicked.connect(self.next_clicked)
        self.close_button.clicked.connect(self.close_clicked)

    def show_step(self, number: int, total: int, title: str, text: str) -> None:
        """Step ``number`` (from 1) of ``total``, its title and its words."""
        self.heading.setText(f"<b>{title}</b> <span style='color: palette(placeholder-text)'>"
                             f"· step {number} of {total}</span>")
        self.set_text(text)
        self.back_button.setEnabled(number > 1)
        self.next_button.setText("Finish" if number == total else "Next")
        self.show()

    def set_text(self, text: str) -> None:
        self.body.setText(text)
        self._place()

    def _content_rect(self) -> QRect:
        central = getattr(self._window, "centralWidget", lambda: None)()
        if central is None:
            return self._window.rect()
        return QRect(central.mapTo(self._window, QPoint(0, 0)), central.size())

    def _place(self) -> None:
        """The bottom right corner of the content, for every step: the buttons
        stay where the hand expects them (the card grows upwards with its words),
        so repeated clicks on Next never land in the view below."""
        self.setFixedWidth(max(PANEL_MIN_WIDTH, min(PANEL_WIDTH, self._window.width() // 3)))
        self.adjustSize()
        area = self._content_rect().adjusted(_MARGIN, _MARGIN, -_MARGIN, -_MARGIN)
        self.move(QPoint(area.right() - self.width(), area.bottom() - self.height()))
        self.raise_()
