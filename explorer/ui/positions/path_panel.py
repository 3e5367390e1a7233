"""The PCA of position rows drawn as a path through positions 0, 1, 2, ..."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from explorer.core.input_layer import PathPCA
from explorer.ui.positions.plot_frame import PlotPanel
from explorer.ui.style import ACCENT, NEIGHBORS, SEQUENTIAL, translucent

__all__ = ["PathPanel", "PATH_COLOURS", "path_colour_steps"]

#: positions labelled along the path
LABELLED = 7
#: steps of the colour ramp along the path: a smooth ramp to the eye, and few enough distinct
#: symbols for the scatter (a colour per position made it draw 8,192 symbols: 1.1 s for 8,192
#: positions, 60 ms for MiniLM's 512, on the GUI thread)
PATH_COLOURS = 64
#: a component spreading less than this fraction of the other's is drawn as flat (float noise)
FLAT = 1e-6


def path_colour_steps(n: int) -> np.ndarray:
    """Which of the PATH_COLOURS colours each of ``n`` positions takes: the first the
    first, the last the last, never going back along the path."""
    return np.arange(n) * (PATH_COLOURS - 1) // max(n - 1, 1)


class PathPanel(PlotPanel):
    """Position rows projected on their first two principal components, joined in order."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.line = pg.PlotDataItem(pen=pg.mkPen(translucent(NEIGHBORS, 150), width=1))
        self.points = pg.ScatterPlotItem(size=5, pen=None)
        self.start = pg.ScatterPlotItem(size=10, pen=pg.mkPen(ACCENT, width=2), brush=None)
        for item in (self.line, self.points, self.start):
            self.plot.addItem(item)
        self.labels = [pg.TextItem("", color=self._fg, anchor=(0, 1)) for _ in range(LABELLED)]
        for t in self.labels:
            self.plot.addItem(t)
        ramp = pg.colormap.get(SEQUENTIAL).map(np.linspace(0, 1, PATH_COLOURS), mode="qcolor")
        self._brushes = np.array([pg.mkBrush(c) for c in ramp], dtype=object)
        self.n_points = 0

    def set_path(self, path: PathPCA | None, title: str = "", short: str | None = None) -> None:
        self.set_title(title, short)
        if path is None or len(path.points) == 0:
            self.n_points = 0
            for item in (self.line, self.points, self.start):
                item.setData([], [])
            for t in self.labels:
                t.setText("")
            return
        pts = path.points
        n = len(pts)
        self.n_points = n
        self.line.setData(pts[:, 0], pts[:, 1])
        self.points.setData(pts[:, 0], pts[:, 1], brush=self._brushes[path_colour_steps(n)])
        self.start.setData(pts[:1, 0], pts[:1, 1])
        marks = sorted({0, 1, 2, n - 1} | {int(round(k * (n - 1) / (LABELLED - 3))) for k in range(1, LABELLED - 3)})
        marks = [m for m in marks if m < n][:LABELLED]
        middle = float(pts[:, 0].min() + pts[:, 0].max()) / 2
        for t, m in zip(self.labels, marks + [None] * LABELLED):
            if m is None:
                t.setText("")
                continue
            t.setText(str(m))
            t.setAnchor((1, 1) if pts[m, 0] > middle else (0, 1))  # labels stay inside the plot
            t.setPos(float(pts[m, 0]), float(pts[m, 1]))
        a, b = path.explained
        self.plot.setLabel("bottom", f"PC 1 ({a:.0%} of the variance)")
        self.plot.setLabel("left", f"PC 2 ({b:.0%})")
        self.plot.enableAutoRange()
        self._range_flat_axes(pts)

    def _range_flat_axes(self, pts: np.ndarray) -> None:
        """A component with no spread (PC 2 of a table one value wide, or of rows on a line)
        gets a range as wide as the other's spread, the path across its middle. Auto-range
        gave it its float noise: an axis from -5e-306 to 0, whose transform overflowed to
        inf while painting (RuntimeWarnings in pyqtgraph, found by the monkey)."""
        lo, hi = pts.min(axis=0).astype(np.float64), pts.max(axis=0).astype(np.float64)
        span = hi - lo
        flat = span <= FLAT * max(float(span.max()), float(np.finfo(np.float32).tiny))
        half = float(span.max()) / 2 or 1.0
        for axis in np.flatnonzero(flat).tolist():
            mid = float(lo[axis] + hi[axis]) / 2
            (self.plot.setXRange if axis == 0 else self.plot.setYRange)(mid - half, mid + half)
