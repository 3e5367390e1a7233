"""One plot of the training grid and the items the charts draw with.

While a run goes flat out, the GUI thread shares the GIL with the worker:
every millisecond of Python on the GUI thread is a millisecond the training
may wait. So the charts are painted by Qt alone wherever they can be:
lines are QGraphicsPathItems (the path is built once per frame, in the
update), axes and titles come from Qt's pixmap cache, the view boxes have
no contents of their own, and (see charts.py) the grid skips pyqtgraph's
Python paintEvent. Only scatter plots keep a Python paint, and time it.

A plot's range and title change only when they differ (a new range rebuilds
the axes; a new title costs about a millisecond of HTML layout).
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem

from explorer.ui.style import plot_colors, shrinkable, style_plot

__all__ = ["Chart", "PathCurve", "TimedScatter", "PaintLog", "nice_ceil", "TICK_TEXT_WIDTH"]

#: room for the tick labels of a left axis, in pixels ("1,500", "-0.25")
TICK_TEXT_WIDTH = 34


def nice_ceil(x: float, mantissas: tuple[float, ...] = (1, 2, 5)) -> float:
    """The smallest m x 10^k (m in ``mantissas``, k integer) that is >= x (x > 0), else 1.

    Axes that grow with a run step along this ladder: each step rebuilds the
    axis (milliseconds of the GUI thread), so a coarse ladder, (1, 3), keeps
    the rebuilds to a few per decade.
    """
    if not (x > 0) or not math.isfinite(x):
        return 1.0
    k = math.floor(math.log10(x))
    for m in (*mantissas, 10):
        v = m * 10.0 ** k
        if v >= x * (1 - 1e-12):
            return v
    return 10.0 ** (k + 1)


class PathCurve(QGraphicsPathItem):
    """A polyline through (x, y), painted by Qt alone (a cosmetic pen: its
    width in pixels whatever the axes' scale)."""

    def __init__(self, pen: QPen):
        super().__init__()
        pen = QPen(pen)
        pen.setCosmetic(True)
        self.setPen(pen)
        self._x = self._y = np.zeros(0)

    def setData(self, x, y) -> None:
        self._x, self._y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        self.setPath(pg.arrayToQPath(self._x, self._y, connect="all", finiteCheck=False) if self._x.size
                     else QPainterPath())

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        return self._x, self._y


class PaintLog:
    """CPU time (ms) of the paints that run Python: the recent ones and a running total."""

    def __init__(self):
        self.recent: deque[float] = deque(maxlen=500)
        self.total = 0.0

    def add(self, ms: float) -> None:
        self.recent.append(ms)
        self.total += ms


class TimedScatter(pg.ScatterPlotItem):
    """pyqtgraph's scatter plot (painted in Python), noting the CPU time of each
    paint in ``log``, so that the frame governor counts it."""

    def __init__(self, log: PaintLog, **kwargs):
        super().__init__(**kwargs)
        self._log = log

    def paint(self, *args) -> None:
        c0 = time.thread_time()
        super().paint(*args)
        self._log.add(1000 * (time.thread_time() - c0))


def _compact_font() -> QFont:
    font = QFont()
    font.setPointSizeF(8)
    return font


class Chart:
    """A PlotItem at (row, col) of ``glw`` with a title and axis labels, ranges set by hand.

    Subclasses create their items once in ``__init__`` and change them with
    setData in their draw methods. ``paint_log`` collects the CPU time of
    the Python paints of the grid's scatter plots.
    """

    def __init__(self, glw: pg.GraphicsLayoutWidget, row: int, col: int, title: str, left: str, bottom: str,
                 fg: str, paint_log: PaintLog | None = None, short_title: str | None = None):
        self._fg = fg
        self._range: tuple | None = None
        self._title = title
        self._short = short_title
        self._compact = False
        self.paint_log = paint_log if paint_log is not None else PaintLog()
        p = glw.take_plot(row, col)  # no menu: none is built
        shrinkable(p.titleLabel)
        self._shown: tuple = (title, "9pt", None)
        p.setTitle(title, color=fg, size="9pt")
        p.setLabel("left", left)
        p.setLabel("bottom", bottom)
        p.disableAutoRange()  # ranges are set explicitly, in coarse steps
        p.hideButtons()
        style_plot(p)
        # axes of a fixed size: wider tick labels ("0.5" -> "0.25") must not
        # re-lay out the grid, which repaints every chart
        p.getAxis("left").setStyle(autoExpandTextSpace=False, tickTextWidth=TICK_TEXT_WIDTH)
        p.getAxis("bottom").setStyle(autoExpandTextSpace=False)
        self.plot = p
        self.vb = p.getViewBox()
        self.vb.setFlag(QGraphicsItem.ItemHasNoContents)  # its paint() (Python) draws no border here
        # the grid paints without pyqtgraph's prepareForPaint: keep the view's
        # transform current when its size changes (ranges: see set_range)
        self.vb.sigResized.connect(self._on_vb_resized)
        p.geometryChanged.connect(self._on_plot_resized)  # compact titles fit the chart's width
        self.set_cached(True)

    def _on_vb_resized(self, _vb) -> None:
        self.vb.updateMatrix()

    def set_cached(self, cached: bool) -> None:
        """Axes and title painted from a pixmap Qt keeps (no Python paint on
        every frame; they are redrawn when they change). Off for a vector
        export, where they must stay vectors."""
        mode = QGraphicsItem.DeviceCoordinateCache if cached else QGraphicsItem.NoCache
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setCacheMode(mode)
        self.plot.titleLabel.setCacheMode(mode)

    def curve(self, pen, z: float | None = None) -> PathCurve:
        """A line of the plot, painted by Qt alone."""
        item = PathCurve(pen)
        if z is not None:
            item.setZValue(z)
        self.plot.addItem(item, ignoreBounds=True)
        return item

    def scatter(self, **kwargs) -> TimedScatter:
        """A scatter plot (pyqtgraph's, with its paints timed)."""
        item = TimedScatter(self.paint_log, **kwargs)
        self.plot.addItem(item, ignoreBounds=True)
        return item

    @property
    def title(self) -> str:
        return self._title

    @property
    def view_range(self) -> tuple | None:
        """((x0, x1), (y0, y1)) last set, or None."""
        return self._range

    def set_range(self, xr: tuple, yr: tuple) -> None:
        key = (tuple(float(v) for v in xr), tuple(float(v) for v in yr))
        if key != self._range:
            self._range = key
            self.plot.setRange(xRange=key[0], yRange=key[1], padding=0)
            self.vb.updateMatrix()

    def forget_range(self) -> None:
        """The next set_range applies whatever it is (a new run)."""
        self._range = None

    @property
    def compact(self) -> bool:
        return self._compact

    def set_compact(self, compact: bool) -> None:
        """Compact (a small grid cell, e.g. at 1024 x 700): the short title in 8 pt over
        the whole width of the chart, no axis labels (the short title says what the axes
        are; the tooltip explains); else the full title over the plot and both labels."""
        if compact == self._compact:
            return
        self._compact = compact
        for name in ("left", "bottom"):
            self.plot.getAxis(name).showLabel(not compact)
            self.plot.getAxis(name).setTickFont(_compact_font() if compact else None)
        layout, label = self.plot.layout, self.plot.titleLabel
        label.item.document().setDocumentMargin(1 if compact else 4)  # 4: Qt's default, 6 px more per row
        layout.removeItem(label)
        if compact:
            layout.addItem(label, 0, 0, 1, 3)  # over the left axis too: ~40 px more for the words
        else:
            layout.addItem(label, 0, 1)
        self._show_title()

    def set_title(self, title: str, short: str | None = None) -> None:
        """The full title and (optional) the compact one; HTML."""
        if (title, short) != (self._title, self._short):
            self._title, self._short = title, short
            self._show_title()

    def _show_title(self) -> None:
        shown = self._short if self._compact and self._short else self._title
        size = "8pt" if self._compact else "9pt"
        width = round(self.plot.width()) if self._compact else None
        if (shown, size, width) == self._shown:
            return
        self._shown = (shown, size, width)
        label = self.plot.titleLabel
        fg = plot_colors()[1]  # the palette's now (the theme may have changed since)
        self.plot.setTitle(shown, color=fg, size=size)
        label.setToolTip("")
        if not self._compact:
            return
        # pyqtgraph holds the title's row at 30 px: only the text's height here
        height = math.ceil(label.itemRect().height())
        label.setMaximumHeight(height)
        self.plot.layout.setRowFixedHeight(0, height)
        # a short title (plain text) still wider than the chart (other fonts): shortened
        # with "…" until what is drawn fits, the whole title in the tooltip
        text = shown
        for _ in range(8):
            drawn = label.item.boundingRect().width()
            if not width or drawn <= width or len(shown) <= 2:
                break
            keep = max(1, min(len(shown) - 2, int(len(shown) * width / drawn) - 1))
            shown = text[:keep].rstrip() + "…"
            label.setText(shown, color=fg, size=size)
            label.setToolTip(self._title)

    def _on_plot_resized(self) -> None:
        if self._compact:
            self._show_title()
