"""Axis labels that are always drawn: a label too wide for its axis is
shortened (its piece first, with "…"), and one near the axis ends is moved
inward, where pyqtgraph's AxisItem would leave it out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF

__all__ = ["RowLabelAxis", "fit_label"]

ELLIPSIS = "…"


def fit_label(piece: str, suffix: str, width: Callable[[str], float], available: float) -> str:
    """``piece + suffix``, with the piece cut short (ending in "…") until the
    label is at most ``available`` wide; the suffix is kept whole.

    ``width`` measures a string. When even "…" + suffix is too wide, that is
    what is returned: shortened as far as it goes, never dropped.
    """
    text = piece + suffix
    if not piece or width(text) <= available:
        return text
    lo, hi = 0, len(piece) - 1  # the longest prefix that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if width(piece[:mid] + ELLIPSIS + suffix) <= available:
            lo = mid
        else:
            hi = mid - 1
    return piece[:lo] + ELLIPSIS + suffix


class RowLabelAxis(pg.AxisItem):
    """A left or right axis whose labels are set per row and all drawn.

    Labels are ``(value, piece, suffix)``: the text ``piece + suffix`` at
    ``value`` on the axis. :attr:`drawn` holds the texts of the last paint
    and :attr:`drawn_rects` where they went (for tests and for the curious).
    """

    def __init__(self, orientation: str = "left", **kwargs):
        super().__init__(orientation, **kwargs)
        self._labels: list[tuple[float, str, str]] = []
        self.drawn: list[str] = []
        self.drawn_rects: list[QRectF] = []

    def set_labels(self, labels: Sequence[tuple[float, str, str]]) -> None:
        self._labels = [(float(v), str(p), str(s)) for v, p, s in labels]
        self.setTicks([[(v, "") for v, _p, _s in self._labels], []])

    def natural_width(self, metrics: QFontMetricsF) -> float:
        """Pixels the widest label needs, unshortened, with the tick and gap."""
        widest = max((metrics.horizontalAdvance(p + s) for _v, p, s in self._labels), default=0.0)
        return widest + self._text_offset() + 4

    def _text_offset(self) -> float:
        return max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0] + 2

    def generateDrawSpecs(self, p):
        specs = super().generateDrawSpecs(p)
        view = self.linkedView()
        if specs is None or view is None:
            return specs
        axis_spec, tick_specs, _texts = specs
        metrics = QFontMetricsF(p.font())
        bounds = self.boundingRect()
        offset = self._text_offset()
        available = max(1.0, bounds.width() - offset - 2)
        left = self.orientation == "left"
        flags = (Qt.AlignRight if left else Qt.AlignLeft) | Qt.AlignVCenter | Qt.TextDontClip
        height = metrics.height()
        texts, drawn, rects = [], [], []
        for value, piece, suffix in self._labels:
            y = self.mapFromScene(view.mapViewToScene(QPointF(0, value))).y()
            text = fit_label(piece, suffix, metrics.horizontalAdvance, available)
            width = min(metrics.horizontalAdvance(text), available)
            top = min(max(y - height / 2, bounds.top()), bounds.bottom() - height)
            x = bounds.right() - offset - width if left else bounds.left() + offset
            rect = QRectF(x, top, width, height)
            texts.append((rect, flags, text))
            drawn.append(text)
            rects.append(rect)
        self.drawn, self.drawn_rects = drawn, rects
        return axis_spec, tick_specs, texts
