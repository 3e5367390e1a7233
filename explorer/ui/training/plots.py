"""One plot of the training grid: created once, its range and title changed
only when they differ (a new range rebuilds the axes; a new title costs
about a millisecond of HTML layout)."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem

from ..style import style_plot

__all__ = ["Chart", "nice_ceil", "TICK_TEXT_WIDTH"]

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


def _shrinkable(label: pg.LabelItem) -> None:
    """Let a plot title be narrower than its text (a long title must not widen
    the whole grid past the window; it is clipped instead)."""
    original = label.updateMin

    def update_min():
        original()
        label.setMinimumWidth(0)
        label._sizeHint[Qt.SizeHint.MinimumSize] = (0, label._sizeHint[Qt.SizeHint.MinimumSize][1])
        label._sizeHint[Qt.SizeHint.PreferredSize] = (0, label._sizeHint[Qt.SizeHint.PreferredSize][1])

    label.updateMin = update_min


class Chart:
    """A PlotItem at (row, col) of ``glw`` with a title and axis labels, ranges set by hand.

    Subclasses create their items once in ``__init__`` and change them with
    setData in their draw methods.
    """

    def __init__(self, glw: pg.GraphicsLayoutWidget, row: int, col: int, title: str, left: str, bottom: str,
                 fg: str):
        self._fg = fg
        self._range: tuple | None = None
        self._title = title
        p = glw.addPlot(row=row, col=col)
        _shrinkable(p.titleLabel)
        p.setTitle(title, color=fg, size="9pt")
        p.setLabel("left", left)
        p.setLabel("bottom", bottom)
        p.setMenuEnabled(False)
        p.disableAutoRange()  # ranges are set explicitly, in coarse steps
        p.hideButtons()
        style_plot(p)
        # axes of a fixed size: wider tick labels ("0.5" -> "0.25") must not
        # re-lay out the grid, which repaints every chart
        p.getAxis("left").setStyle(autoExpandTextSpace=False, tickTextWidth=TICK_TEXT_WIDTH)
        p.getAxis("bottom").setStyle(autoExpandTextSpace=False)
        self.plot = p
        self.set_cached(True)

    def set_cached(self, cached: bool) -> None:
        """Axes and title painted from a pixmap Qt keeps (no Python paint on
        every frame; they are redrawn when they change). Off for a vector
        export, where they must stay vectors."""
        mode = QGraphicsItem.DeviceCoordinateCache if cached else QGraphicsItem.NoCache
        for name in ("left", "bottom"):
            self.plot.getAxis(name).setCacheMode(mode)
        self.plot.titleLabel.setCacheMode(mode)

    def curve(self, pen, z: float | None = None) -> pg.PlotCurveItem:
        """A line of the plot: a bare PlotCurveItem (setData on it costs a
        quarter of a PlotDataItem's), no antialiasing, no finiteness check."""
        item = pg.PlotCurveItem(pen=pen, antialias=False, skipFiniteCheck=True)
        if z is not None:
            item.setZValue(z)
        self.plot.addItem(item)
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

    def forget_range(self) -> None:
        """The next set_range applies whatever it is (a new run)."""
        self._range = None

    def set_title(self, title: str) -> None:
        if title != self._title:
            self._title = title
            self.plot.setTitle(title, color=self._fg, size="9pt")
