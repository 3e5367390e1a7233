"""Very many points drawn as one image: :class:`DotRaster`.

pyqtgraph's ScatterPlotItem needs about 400 ms to take 128,256 points and
Qt about 150 ms to paint as many dots, on every repaint: too long for the
GUI thread. Here numpy puts each point into an image the size of the plot,
in a few milliseconds, whenever the visible range or the plot's size
changes; painting is then one image blit.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

__all__ = ["DotRaster"]


class DotRaster(pg.ImageItem):
    """Groups of points, each group in one colour, later groups on top.

    Add it to a ViewBox with ``ignoreBounds=True`` and call :meth:`attach`
    so it follows the view's range; :meth:`bounds` gives the points' extent
    for the view's auto-range.
    """

    def __init__(self, size: int = 3):
        super().__init__(axisOrder="row-major")
        self._size = int(size)
        self._groups: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._vb = None
        self._holding = False

    def attach(self, viewbox: pg.ViewBox) -> None:
        self._vb = viewbox
        viewbox.sigRangeChanged.connect(self._on_viewbox_changed)
        viewbox.sigResized.connect(self._on_viewbox_changed)

    def set_groups(self, groups) -> None:
        """``groups``: (x, y, colour) per group; non-finite points are left out."""
        out = []
        for x, y, color in groups:
            x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
            keep = np.isfinite(x) & np.isfinite(y)
            c = QColor(color)
            out.append((x[keep], y[keep], np.array([c.red(), c.green(), c.blue(), 255], np.uint8)))
        self._groups = out
        self.redraw()

    def clear_points(self) -> None:
        self._groups = []
        self.redraw()

    def point_count(self) -> int:
        return sum(len(x) for x, _, _ in self._groups)

    def bounds(self) -> tuple[float, float, float, float] | None:
        """(x0, x1, y0, y1) of all points, or None without points."""
        xs = [g[0] for g in self._groups if len(g[0])]
        if not xs:
            return None
        ys = [g[1] for g in self._groups if len(g[1])]
        return (min(float(x.min()) for x in xs), max(float(x.max()) for x in xs),
                min(float(y.min()) for y in ys), max(float(y.max()) for y in ys))

    @contextmanager
    def held(self):
        """Draw once, at the end, whatever changes inside (points, range)."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            self.redraw()

    def _on_viewbox_changed(self, *_args) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Draw the points into an image covering the visible range."""
        if self._holding:
            return
        vb = self._vb
        if vb is None or not self._groups:
            self.setImage(np.zeros((1, 1, 4), np.uint8), autoLevels=False)
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        if x1 <= x0 or y1 <= y0:
            return
        views = vb.scene().views() if vb.scene() is not None else []
        dpr = views[0].devicePixelRatioF() if views else 1.0
        w = max(1, int(vb.width() * dpr))
        h = max(1, int(vb.height() * dpr))
        s = max(1, int(round(self._size * dpr)))
        img = np.zeros((h, w, 4), np.uint8)
        for x, y, rgba in self._groups:
            px = np.floor((x - x0) * (w / (x1 - x0))).astype(np.int64)
            py = np.floor((y - y0) * (h / (y1 - y0))).astype(np.int64)
            inside = (px >= 0) & (px < w) & (py >= 0) & (py < h)
            hit = np.zeros((h, w), bool)
            hit[py[inside], px[inside]] = True
            img[_grown(hit, s)] = rgba
        self.setImage(img, autoLevels=False)
        self.setRect(QRectF(x0, y0, x1 - x0, y1 - y0))


def _grown(hit: np.ndarray, size: int) -> np.ndarray:
    """Each True pixel grown into a size x size square (centred)."""
    if size <= 1:
        return hit
    out = hit.copy()
    lo = size // 2
    for dy in range(-lo, size - lo):
        for dx in range(-lo, size - lo):
            if dx == 0 and dy == 0:
                continue
            src = hit[max(0, -dy) : hit.shape[0] - max(0, dy), max(0, -dx) : hit.shape[1] - max(0, dx)]
            out[max(0, dy) : max(0, dy) + src.shape[0], max(0, dx) : max(0, dx) + src.shape[1]] |= src
    return out
