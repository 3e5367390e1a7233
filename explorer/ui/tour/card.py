"""A card floating over the window's content (the tour's panel, the first-run hint)."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QWidget

from explorer.ui.style import ACCENT, SPACING

__all__ = ["FloatingCard"]


class FloatingCard(QFrame):
    """An accent-framed card, child of ``window``, placed again by :meth:`_place` when the window resizes."""

    def __init__(self, window: QWidget, name: str):
        super().__init__(window)
        self.setObjectName(name)
        self.setAutoFillBackground(True)
        self.setStyleSheet(f"#{name} {{ border: 2px solid {ACCENT}; border-radius: 6px; "
                           "background: palette(window); }")
        self._window = window
        window.installEventFilter(self)
        self.hide()

    @staticmethod
    def button_row(left: list[QPushButton], right: list[QPushButton]) -> QHBoxLayout:
        """The card's buttons: ``left`` ones, a stretch, then ``right`` ones (the default last)."""
        row = QHBoxLayout()
        row.setSpacing(SPACING // 2)
        for b in left:
            row.addWidget(b)
        row.addStretch(1)
        for b in right:
            row.addWidget(b)
        return row

    def _place(self) -> None:
        raise NotImplementedError

    def eventFilter(self, obj, event) -> bool:
        if obj is self._window and event.type() == QEvent.Resize and self.isVisible():
            self._place()
        return False
