"""A one-line label that never asks for its text's width.

A QLabel's minimum width is its whole text: a long status line ("t-SNE
iteration 175 of 750 · early exaggeration: neighbours gather first") made
the Projection tab 926 px wide at 1024 x 700, so the page scrolled
sideways and cut its side panel. :class:`ElidedLabel` takes the room the
layout gives it and ends its text in "…" when that is short; the tooltip
then holds the whole text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel

__all__ = ["ElidedLabel"]


class ElidedLabel(QLabel):
    """Plain text on one line, elided at the right when the label is narrower than it."""

    #: the narrowest the label asks to be (a few words)
    min_width = 60

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self._text = ""
        self.setTextFormat(Qt.PlainText)
        self.setText(text)

    def text(self) -> str:  # the whole text, not what is drawn (shown_text)
        return self._text

    def shown_text(self) -> str:
        """What is drawn: the text, or its start and "…"."""
        return super().text()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._text = text
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(self._text) + m.left() + m.right() + 4,
                     super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(self.min_width, super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._text, Qt.ElideRight, max(0, self.contentsRect().width()))
        super().setText(shown)
        self._update_tooltip(shown != self._text)

    def _update_tooltip(self, elided: bool) -> None:
        """The whole text as the tooltip while it is elided (subclasses may say more)."""
        QLabel.setToolTip(self, self._text if elided else "")
