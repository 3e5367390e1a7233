"""A ring around the widget a tour step points at, drawn over the window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from explorer.ui.style import ACCENT

__all__ = ["Highlight", "RING_WIDTH"]

RING_WIDTH = 3


class Highlight(QWidget):
    """A transparent layer over ``window`` that rings one widget (mouse events pass through).

    It follows the widget: a move, resize, show or hide of the widget or a
    resize of the window repaints the ring where the widget now is.
    """

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.NoFocus)
        self._window = window
        self._target: QWidget | None = None
        window.installEventFilter(self)
        self.hide()

    @property
    def target(self) -> QWidget | None:
        return self._target

    def set_target(self, widget: QWidget | None) -> None:
        """Ring ``widget`` (None: nothing)."""
        if self._target is not None:
            self._target.removeEventFilter(self)
            self._target.destroyed.disconnect(self._on_target_destroyed)
        self._target = widget
        if widget is not None:
            widget.installEventFilter(self)
            widget.destroyed.connect(self._on_target_destroyed)
        self._follow()

    def target_rect(self) -> QRect:
        """The ringed widget's rectangle in the window's coordinates (empty when hidden or none)."""
        w = self._target
        if w is None or not w.isVisible():
            return QRect()
        return QRect(w.mapTo(self._window, QPoint(0, 0)), w.size())

    def ring_rect(self) -> QRect:
        """Where the ring is drawn: just outside the ringed widget, whose own text may run
        to its edges (a ring inside it struck through "bytes read" under the lookup
        panels), and inside the window (a widget at its edge is ringed over its border)."""
        rect = self.target_rect()
        if rect.isEmpty():
            return rect
        out = RING_WIDTH + 1
        return rect.adjusted(-out, -out, out, out).intersected(self.rect())

    def _on_target_destroyed(self, *_args) -> None:
        self._target = None
        self.hide()

    def _follow(self) -> None:
        self.setGeometry(self._window.rect())
        rect = self.target_rect()
        self.setVisible(not rect.isEmpty())
        if not rect.isEmpty():
            self.raise_()
        self.update()

    def eventFilter(self, obj, event) -> bool:
        if event.type() in (QEvent.Resize, QEvent.Move, QEvent.Show, QEvent.Hide) and (
                obj is self._window or obj is self._target):
            self._follow()
        return False

    def paintEvent(self, _event) -> None:
        rect = self.ring_rect()
        if rect.isEmpty():
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        pen = QPen(QColor(ACCENT), RING_WIDTH)
        p.setPen(pen)
        p.setBrush(Qt.NoBrush)
        half = RING_WIDTH // 2 + 1
        p.drawRoundedRect(rect.adjusted(half, half, -half, -half), 6, 6)
        p.end()
