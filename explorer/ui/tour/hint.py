"""The first-run hint: a small card, once, pointing to Help → Tour."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING
from explorer.ui.tour.card import FloatingCard

__all__ = ["FirstRunHint"]

#: distance from the window's content edges
_MARGIN = 12


class FirstRunHint(FloatingCard):
    """"New here?" in the bottom right corner of the content, with the tour one click away.

    Not at the top: there it lay over the text box's Examples button and the selected row's
    facts, the first things a newcomer reaches for.

    Signals
    -------
    tour_requested()   the user took the tour
    """

    tour_requested = Signal()

    def __init__(self, window: QWidget, steps: int):
        super().__init__(window, "FirstRunHint")
        text = WrapLabel(f"<b>New here?</b> <b>Help → Tour</b> walks through the ideas in {steps} steps, each "
                         "on a real table, and gives your model and text back when you close it.")
        self.take_button = QPushButton("Take the tour")
        self.take_button.setToolTip("Start the guided tour now (Help → Tour, at any time)")
        self.close_button = QPushButton("Not now")
        self.close_button.setToolTip("Hide this hint; it does not come back (the tour stays in the Help menu)")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 1.5, SPACING, SPACING * 1.5, SPACING)
        lay.addWidget(text)
        lay.addLayout(self.button_row([], [self.close_button, self.take_button]))
        self.take_button.clicked.connect(self._on_take_button_clicked)
        self.close_button.clicked.connect(self.hide)

    def pop_up(self) -> None:
        """Show the card (bottom right, over the content, above the status bar)."""
        self.show()
        self._place()

    def _on_take_button_clicked(self) -> None:
        self.hide()
        self.tour_requested.emit()

    def _place(self) -> None:
        self.setFixedWidth(min(380, max(260, self._window.width() // 3)))
        self.adjustSize()
        central = self._window.centralWidget()
        bottom = central.geometry().bottom() if central is not None else self._window.height()
        self.move(QPoint(self._window.width() - self.width() - _MARGIN, bottom - self.height() - _MARGIN))
        self.raise_()
