"""Very many points drawn as one image, in numpy: the one rasteriser of the
projection's cloud and the Health view's vocabulary plot.

Handing each point to Qt costs more than a frame once there are many
(pyqtgraph's ScatterPlotItem needs about 400 ms for 128,256 points; Qt's
raster engine about 30 ms for 256,000 pixmap fragments). :func:`rasterize`
does it in a few milliseconds: each colour group's dots are counted per
device pixel (``numpy.bincount``), spread over the dot's footprint, and
composited as that many translucent dots of the group's colour would be:
opacity ``1 - (1 - a) ** count``, groups over one another in order. Points
snap to whole pixels, which no one sees when there are more points than
pixels.

* :func:`rasterize`: device pixel positions -> a premultiplied image; the
  point cloud (``explorer.ui.projection.point_cloud``) paints it itself.
* :class:`DotRaster`: a pyqtgraph image item that follows a ViewBox and
  redraws its point groups with :func:`rasterize` before the first paint after
  the visible range or the plot's size changed (the Health view's vocabulary plot).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

__all__ = ["rasterize", "footprint", "DotRaster"]


def footprint(size: float) -> list[tuple[int, int]]:
    """Pixel offsets (dy, dx) a dot of diameter ``size`` pixels covers, around its own pixel."""
    r = max(0.0, size / 2)
    k = int(np.floor(r))
    return [(dy, dx) for dy in range(-k, k + 1) for dx in range(-k, k + 1)
            if dy * dy + dx * dx <= r * r + 0.5] or [(0, 0)]


def rasterize(px: np.ndarray, py: np.ndarray, group: np.ndarray, rgba: np.ndarray, width: int, height: int,
              size: float) -> np.ndarray:
    """An image (height, width, 4) uint8 of the points, premultiplied B, G, R, A (QImage's
    ARGB32_Premultiplied on little-endian machines).

    ``px``, ``py`` are device pixel positions, ``group`` (sorted, as the cloud keeps it)
    indexes ``rgba`` (k, 4) straight colours in 0..1.
    """
    width, height = int(width), int(height)
    offsets = footprint(size)
    pad = max(max(abs(dy), abs(dx)) for dy, dx in offsets)
    border = pad + 1  # points off the image pile up in a border the dots cannot reach in from
    bw, bh = width + 2 * border, height + 2 * border
    ix = np.clip(px, -border, width + border - 1).astype(np.int32)  # finite positions (the caller's)
    iy = np.clip(py, -border, height + border - 1).astype(np.int32)
    flat = iy + border
    flat *= bw
    flat += ix
    flat += border
    canvas = np.zeros(height * width, np.uint32)  # a pixel's premultiplied B, G, R, A in one word
    first = True
    bounds = np.searchsorted(group, np.arange(len(rgba) + 1))
    for k in range(len(rgba)):
        lo, hi = bounds[k], bounds[k + 1]
        a = float(rgba[k, 3])
        if hi <= lo or a <= 0:
            continue
        counts = np.bincount(flat[lo:hi], minlength=bw * bh).astype(np.int32).reshape(bh, bw)
        covered = _spread(counts, offsets, border, width, height).reshape(-1)
        np.minimum(covered, 255, out=covered)
        # a pixel under c dots of opacity a lets (1 - a) ** c through: premultiplied LUTs by c
        through = np.power(np.float32(1 - a), np.arange(256, dtype=np.float32)) if a < 1 else \
            np.r_[np.float32(1), np.zeros(255, np.float32)]
        colour = np.array([rgba[k, 2], rgba[k, 1], rgba[k, 0], 1.0], np.float32)
        lut = np.floor(255 * (1 - through)[:, None] * colour + 0.5).astype(np.uint8)
        lut32 = lut.view(np.uint32).reshape(-1)
        if first:  # nothing under it yet
            canvas = lut32[covered]
            first = False
        elif a >= 1:  # opaque: its colour replaces whatever its dots cover
            np.copyto(canvas, lut32[1], where=covered > 0)
        else:  # over what earlier groups drew, only where its dots are (elsewhere nothing changes)
            at = np.flatnonzero(covered)
            c = covered[at]
            under = canvas[at].view(np.uint8).reshape(-1, 4) * through[c][:, None]
            canvas[at] = np.minimum(under + lut[c] + 0.5, 255).astype(np.uint8).view(np.uint32).reshape(-1)
    return canvas.view(np.uint8).reshape(height, width, 4)


def _spread(counts: np.ndarray, offsets: list[tuple[int, int]], border: int, width: int,
            height: int) -> np.ndarray:
    """Dots covering each pixel: ``counts`` (with ``border``) summed over the footprint's offsets."""
    k = max(max(abs(dy), abs(dx)) for dy, dx in offsets)
    if len(offsets) == (2 * k + 1) ** 2:  # a square: a row of sums, then a column of them
        rows = np.zeros((height + 2 * k, width), np.int32)
        for dx in range(-k, k + 1):
            rows += counts[border - k:border + height + k, border - dx:border - dx + width]
        out = np.zeros((height, width), np.int32)
        for dy in range(-k, k + 1):
            out += rows[k - dy:k - dy + height]
        return out
    out = np.zeros((height, width), np.int32)
    for dy, dx in offsets:
        out += counts[border - dy:border - dy + height, border - dx:border - dx + width]
    return out



class DotRaster(pg.ImageItem):
    """Groups of opaque points, each group in one colour, later groups on top.

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
        self._scene = None
        self._stale = False

    def attach(self, viewbox: pg.ViewBox) -> None:
        """Follow ``viewbox`` (already in its plot's scene)."""
        self._vb = viewbox
        viewbox.sigRangeChanged.connect(self._on_viewbox_changed)
        viewbox.sigResized.connect(self._on_viewbox_changed)
        self._scene = viewbox.scene()
        if self._scene is not None:
            self._scene.sigPrepareForPaint.connect(self._draw_if_stale)

    def set_groups(self, groups) -> None:
        """``groups``: (x, y, colour) per group; non-finite points are left out."""
        out = []
        for x, y, color in groups:
            x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
            keep = np.isfinite(x) & np.isfinite(y)
            c = QColor(color)
            out.append((x[keep], y[keep], np.array([c.redF(), c.greenF(), c.blueF(), 1.0])))
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
        """A window's resize settles in several layout passes, each resizing the view, and a
        drag moves the range many times a frame: the points are drawn once, just before the
        next paint (they were drawn at every pass, 10 ms each on the Health view)."""
        if self._scene is None:
            self.redraw()
            return
        self._stale = True
        self.update()

    def _draw_if_stale(self) -> None:
        if self._stale:
            self.redraw()

    def redraw(self) -> None:
        """Draw the points into an image covering the visible range."""
        if self._holding:
            return
        self._stale = False
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
        # image row 0 is y0: the item's rect maps it onto the view's range
        px = np.floor((np.concatenate([g[0] for g in self._groups]) - x0) * (w / (x1 - x0)))
        py = np.floor((np.concatenate([g[1] for g in self._groups]) - y0) * (h / (y1 - y0)))
        group = np.repeat(np.arange(len(self._groups)), [len(g[0]) for g in self._groups])
        rgba = np.array([g[2] for g in self._groups])
        bgra = rasterize(px, py, group, rgba, w, h, max(1, int(round(self._size * dpr))))
        self.setImage(bgra[..., [2, 1, 0, 3]], autoLevels=False)  # opaque: premultiplied is straight RGBA
        self.setRect(QRectF(x0, y0, x1 - x0, y1 - y0))
