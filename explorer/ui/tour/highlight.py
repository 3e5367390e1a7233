"""A ring around the widget a tour step points at, drawn over the window."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QRegion
from PySide6.QtWidgets import QWidget

from explorer.ui.style import ACCENT

__all__ = ["Highlight", "RING_WIDTH", "RING_BAND"]

RING_WIDTH = 3
#: the band along the ring's rectangle that the layer covers: the stroke and its rounded corners
RING_BAND = RING_WIDTH + 6


class Highlight(QWidget):
    """A transparent layer over ``window`` that rings one widget (mouse events pass through).

    It follows the widget: a move, resize, show or hide of the widget or a
    resize of the window repaints the ring where the widget now is.

    The layer covers only the ring's band (a mask): covering the whole window made
    every move of the ring repaint every widget under it, 12-18 ms a time in a real
    window, and every widget's repaint paint the layer again.
    """

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WA_NoSystemBackground)
        self.setFocusPolicy(Qt.NoFocus)
        self._window = window
        self._target: QWidget | None = None
        self._band = QRegion()  # the ring's band as last drawn
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

    def band(self) -> QRegion:
        """The part of the window the layer covers: a band along the ring, empty without one."""
        ring = self.ring_rect()
        if ring.isEmpty():
            return QRegion()
        inner = ring.adjusted(RING_BAND, RING_BAND, -RING_BAND, -RING_BAND)
        return QRegion(ring).subtracted(QRegion(inner)) if inner.isValid() else QRegion(ring)

    def _on_target_destroyed(self, *_args) -> None:
        self._target = None
        self.hide()

    def _follow(self) -> None:
        if self.geometry() != self._window.rect():
            self.setGeometry(self._window.rect())
        band = self.band()
        self.setVisible(not band.isEmpty())
        if band.isEmpty():
            self._band = band
            return
        self.raise_()
        if band != self._band:
            old, self._band = self._band, band
            self.setMask(band)
            self.update(old.united(band))  # where the ring was and where it is, not the whole window

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
