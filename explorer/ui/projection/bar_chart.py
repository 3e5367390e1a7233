"""One linked chart beside the projection: a bar per category or bin of one
metadata column (:mod:`explorer.core.projection.crossfilter`), all the drawn
points faint behind, the points the other charts keep solid in front, the
chosen bars full and the rest pale. A click on a bar chooses it (or no
longer); a drag across bars chooses that range. The chart only draws and
reports: the filter lives in the view's PointSelection."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF

from explorer.ui.style import REFERENCE, plot_colors, style_plot

__all__ = ["BarChart", "BAR_HEIGHT_PX", "CountAxis", "compact_count"]

#: pixels per bar (the chart's height follows its bars)
BAR_HEIGHT_PX = 13
#: pixels between two count labels on the bottom axis, at least
LABEL_GAP_PX = 10
#: characters of a bar's label on the left axis
LABEL_CHARS = 14


def compact_count(v: float) -> str:
    """A count in at most about four characters: 800, 2k, 2.5k, 20k, 1.2M."""
    a = abs(v)
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if a >= div:
            q = v / div
            return f"{q:.0f}{unit}" if abs(q) >= 10 or q == int(q) else f"{q:.1f}{unit}"
    return f"{v:.0f}"


class CountAxis(pg.AxisItem):
    """The counts along a chart's bottom: as many ticks as their labels leave room for,
    each label short (:func:`compact_count`), so that numbers never run together in a
    narrow chart (pyqtgraph's own spacing ignores the labels' width: "2000400060008000")."""

    def tickValues(self, minVal, maxVal, size):  # noqa: N802, N803 (pyqtgraph's names)
        if not maxVal > minVal or size <= 0:
            return []
        fm = QFontMetricsF(self.style.get("tickFont") or self.font())
        widest = max(fm.horizontalAdvance(compact_count(v)) for v in (minVal, maxVal, (minVal + maxVal) / 2))
        fit = max(1, int(size // (widest + LABEL_GAP_PX)) - 1)  # labels that fit side by side, less one
        step = _nice_step((maxVal - minVal) / fit)
        first = np.ceil(minVal / step) * step
        values = [float(v) for v in np.arange(first, maxVal + step * 1e-9, step)]
        return [(step, values)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        return [compact_count(v * scale) for v in values]


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k at least ``raw`` (and at least 1: counts are whole)."""
    if not raw > 0:
        return 1.0
    k = 10 ** np.floor(np.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * k >= raw:
            return float(max(1.0, m * k))
    return float(max(1.0, 10 * k))


class _BrushBox(pg.ViewBox):
    """A view box that reports clicks and vertical drags in bar numbers instead of panning."""

    def __init__(self, chart):
        super().__init__(enableMenu=False)
        self._chart = chart
        self.setMouseEnabled(False, False)
        self.region = pg.LinearRegionItem(orientation="horizontal", movable=False,
                                          brush=pg.mkBrush(QColor(0, 114, 178, 40)))
        self.region.hide()
        self.addItem(self.region, ignoreBounds=True)

    def mouseClickEvent(self, ev):  # noqa: N802 (Qt's name)
        if ev.button() != Qt.LeftButton:
            return
        ev.accept()
        self._chart.click_at(self.mapSceneToView(ev.scenePos()).y())

    def mouseDragEvent(self, ev, axis=None):  # noqa: N802 (Qt's name)
        if ev.button() != Qt.LeftButton:
            ev.ignore()
            return
        ev.accept()
        a, b = self.mapToView(ev.buttonDownPos()).y(), self.mapToView(ev.pos()).y()
        self.region.setRegion((min(a, b), max(a, b)))
        self.region.setVisible(not ev.isFinish())
        if ev.isFinish():
            self._chart.brush_between(a, b)


class BarChart(pg.PlotWidget):
    """One chart; ``show(column, totals, counts, chosen)`` draws it.

    Signals
    -------
    bar_clicked(str, int)
        A bar was clicked: the chart's key and the bar's number.
    bars_brushed(str, object)
        A range of bars was dragged across: the chart's key and the tuple of bar numbers.
    """

    bar_clicked = Signal(str, int)
    bars_brushed = Signal(str, object)

    def __init__(self, parent=None):
        bg, fg = plot_colors()
        super().__init__(parent, background=bg, viewBox=_BrushBox(self), axisItems={"bottom": CountAxis("bottom")})
        self.setMenuEnabled(False)
        self.key, self._n = "", 0
        self._fg = fg
        pi = self.getPlotItem()
        style_plot(pi)
        pi.hideButtons()
        pi.getViewBox().invertY(True)
        pi.getAxis("left").setWidth(96)
        pi.getAxis("bottom").setHeight(22)
        # the title over the whole chart, the bar labels' column too: over the bars alone it was cut
        pi.layout.removeItem(pi.titleLabel)
        pi.layout.addItem(pi.titleLabel, 0, 0, 1, 3)
        faint = QColor(fg)
        faint.setAlpha(45)
        self.totals = pg.BarGraphItem(x0=[], y=[], width=[], height=0.8, brush=faint, pen=None)
        self.counts = pg.BarGraphItem(x0=[], y=[], width=[], height=0.8, brushes=[], pen=None)
        pi.addItem(self.totals)
        pi.addItem(self.counts)
        self.setCursor(Qt.PointingHandCursor)
        pale = QColor(REFERENCE)
        pale.setAlpha(90)
        self._full, self._pale = pg.mkBrush(REFERENCE), pg.mkBrush(pale)  # made once: a click recolours bars
        self._shown: tuple = ("", [], ())  # the title, bar labels and ranges drawn

    def show_counts(self, column, totals: np.ndarray, counts: np.ndarray, chosen: tuple[int, ...]) -> None:
        """Draw ``column`` (ChartColumn): ``totals`` and ``counts`` per bar, ``chosen`` bars full."""
        self.key, self._n = column.key, len(column.labels)
        y = np.arange(self._n, dtype=np.float64)
        brushes = [self._full if (k in chosen or not chosen) else self._pale for k in range(self._n)]
        if not np.array_equal(self.totals.opts.get("width"), totals):  # the drawn points changed, not a filter
            self.totals.setOpts(x0=np.zeros(self._n), y=y, width=totals.astype(np.float64))
        self.counts.setOpts(x0=np.zeros(self._n), y=y, width=counts.astype(np.float64), brushes=brushes)
        kept = int(counts.sum())
        pi = self.getPlotItem()
        # each click counts again: only what changed is set (pyqtgraph lays out an axis or a title anew
        # for each setTicks, setTitle and range, even to the same value)
        title = f"{column.title} · {kept:,}"  # of the total: in the tooltip
        labels = [(k, _short(label) + (" ✓" if k in chosen else "")) for k, label in enumerate(column.labels)]
        ranges = (max(1, int(totals.max()) if self._n else 1), self._n)
        if title != self._shown[0]:
            pi.setTitle(title, color=self._fg, size="8pt")
        if labels != self._shown[1]:
            pi.getAxis("left").setTicks([labels, []])
        if ranges != self._shown[2]:
            pi.setXRange(0, ranges[0], padding=0.02)
            pi.setYRange(-0.5, self._n - 0.5, padding=0)
        self._shown = (title, labels, ranges)
        self.setFixedHeight(46 + BAR_HEIGHT_PX * max(self._n, 2))
        self.setToolTip("\n".join(f"{lab}: {int(c):,} of {int(t):,}" for lab, c, t in
                                  zip(column.labels, counts.tolist(), totals.tolist()))
                        + "\n\nClick a bar to filter the map to it (again: no longer); drag across bars for a range.")

    def _bar(self, y: float) -> int:
        return int(np.clip(round(y), 0, max(self._n - 1, 0)))

    def click_at(self, y: float) -> None:
        """A click at height ``y`` (in bar numbers)."""
        if self._n and -0.5 <= y <= self._n - 0.5:
            self.bar_clicked.emit(self.key, self._bar(y))

    def brush_between(self, a: float, b: float) -> None:
        """A drag from height ``a`` to ``b`` (in bar numbers): the bars it crossed."""
        if self._n:
            lo, hi = sorted((self._bar(a), self._bar(b)))
            self.bars_brushed.emit(self.key, tuple(range(lo, hi + 1)))


def _short(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[:LABEL_CHARS - 1] + "…"
