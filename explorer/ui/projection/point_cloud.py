"""Plot items for tens of thousands of points, cheap to pan and zoom.

* :class:`PointCloud`: every point of the projection, a few colours (one per
  class and a faint one), drawn in one ``drawPixmapFragments`` call from a
  small atlas of pre-rendered dots. Per frame only two numpy
  multiply-adds run in Python: no per-point brushes, pens or styles.
* :class:`GridLines`: a faint grid at the axes' ticks, under the points,
  drawn opaque in a colour blended with the background (a translucent
  vertical line costs Qt's raster engine 25 times more).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen, QPixmap

from explorer.core.arrays import column_bounds
from explorer.ui.common.raster import rasterize
from explorer.ui.style import blend, plot_colors

__all__ = ["PointCloud", "GridLines"]

#: the pointer must be this close (pixels, beyond the dot's radius) to hover a point
HIT_SLACK = 3.0
#: above this many points a frame is rasterised in numpy (common.raster) instead of drawn by Qt,
#: when they have at most RASTER_GROUPS colours (each colour is a pass over the image)
RASTER_MIN, RASTER_GROUPS = 100_000, 3
#: a translucent cloud of this many points is drawn into an image first (its opacity then applies
#: to the whole, not to each dot)
TRANSLUCENT_LAYER_MIN = 2_000


class PointCloud(pg.GraphicsObject):
    """Points of a few colours, pixel-sized, in view coordinates.

    Signals
    -------
    hovered(int)
        Index (into the points given) of the point under the pointer, -1 when none.
    clicked(int)
        Index of the point the user clicked.
    """

    hovered = Signal(int)
    clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._xy = np.zeros((0, 2), np.float64)  # in drawing order
        self._x = self._y = np.zeros(0, np.float64)
        self._order = np.zeros(0, np.int64)  # drawing position -> index given
        self._group = np.zeros(0, np.int64)
        self._colors: list[QColor] = []
        self._size = 4.0
        self._dpr = 1.0
        self._atlas: QPixmap | None = None
        self._frags = internals.PrimitiveArray(QPainter.PixmapFragment, 10)
        self._frags_stale = False  # the points or the atlas changed since _fill_frags
        self._visible = internals.PrimitiveArray(QPainter.PixmapFragment, 10)
        self._bounds = QRectF()
        self._hover = -1
        self._export = False
        self._n_groups = 0
        self._finite = True
        self._raster: np.ndarray | None = None
        # the last raster frame and what it was made of: a repaint with the same points, colours and
        # view (a label moved over the cloud, a resize settling in several passes) only draws it again
        self._raster_image: QImage | None = None
        self._raster_key: tuple | None = None
        self._version = 0  # counts set_points (the points, their colours and size): part of the key
        self._layer: QImage | None = None  # the translucent cloud's image, kept for the next frame

    # -- data ----------------------------------------------------------------------------
    def set_points(self, xy: np.ndarray, group: np.ndarray, colors: list[QColor], size: float) -> None:
        """Draw ``xy`` (n, 2) with colour ``colors[group[i]]`` and diameter ``size`` pixels.

        Points of group 0 are drawn first, so the other groups stay on top.
        """
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        group = np.asarray(group, np.int64).reshape(-1)
        if len(group) != len(xy) or (len(group) and (group.min() < 0 or group.max() >= len(colors))):
            raise ValueError("one colour group per point, each a valid index into colors")
        self.prepareGeometryChange()
        self._version += 1
        # a filter change lands here with every click: a radix sort of small group numbers, a count
        # of the groups and the old atlas when the colours stay (a stable argsort of int64 and
        # np.unique took a millisecond of the 16 ms a click may take)
        small = group.astype(np.int16) if len(colors) <= np.iinfo(np.int16).max else group
        self._order = np.argsort(small, kind="stable")
        self._xy = np.ascontiguousarray(xy[self._order])
        self._x = np.ascontiguousarray(self._xy[:, 0])  # contiguous columns: a frame reads each once
        self._y = np.ascontiguousarray(self._xy[:, 1])
        self._group = group[self._order]
        self._n_groups = int(np.count_nonzero(np.bincount(group, minlength=len(colors))))
        colors = [QColor(c) for c in colors]
        same_atlas = self._atlas is not None and float(size) == self._size and \
            [c.rgba() for c in colors] == [c.rgba() for c in self._colors]
        self._colors = colors
        self._size = float(size)
        # on the contiguous columns: a reduction down the (n, 2) array's axis 0 took 20 of the 45 ms
        # 256,000 points took here
        self._finite = bool(np.isfinite(self._x).all() and np.isfinite(self._y).all())
        bounds = column_bounds((self._x, self._y))
        if bounds is not None:
            (x0, y0), (x1, y1) = bounds
            self._bounds = QRectF(float(x0), float(y0), float(x1 - x0), float(y1 - y0))
        else:
            self._bounds = QRectF()
        self._hover = -1
        if same_atlas:
            self._frags_stale = True
        else:
            self._build_atlas(self._dpr)
        self.update()

    def positions(self) -> np.ndarray:
        """The points (n, 2) in the order they were given."""
        out = np.empty_like(self._xy)
        out[self._order] = self._xy
        return out

    def groups(self) -> np.ndarray:
        """The colour group (n,) of each point, in the order they were given."""
        out = np.empty_like(self._group)
        out[self._order] = self._group
        return out

    def colors(self) -> list[QColor]:
        return list(self._colors)

    def clear(self) -> None:
        self.set_points(np.zeros((0, 2)), np.zeros(0, np.int64), [QColor(0, 0, 0)], self._size)

    def __len__(self) -> int:
        return len(self._xy)

    def _sprite(self) -> int:
        return int(np.ceil(self._size)) + 2  # a pixel of margin for the antialiased edge

    def _build_atlas(self, dpr: float) -> None:
        """One dot per colour, side by side, and each point's source rectangle."""
        self._dpr = dpr
        s = self._sprite()
        sp = int(np.ceil(s * dpr))
        img = QImage(max(1, sp * len(self._colors)), sp, QImage.Format_ARGB32_Premultiplied)
        img.fill(0)
        p = QPainter(img)
        p.setRenderHint(QPainter.Antialiasing)
        p.setPen(Qt.NoPen)
        d = self._size * dpr
        for k, color in enumerate(self._colors):
            p.setBrush(color)
            p.drawEllipse(QRectF(k * sp + (sp - d) / 2, (sp - d) / 2, d, d))
        p.end()
        self._atlas = QPixmap.fromImage(img)
        self._frags_stale = True

    def _fill_frags(self, dpr: float) -> None:
        """Each point's source rectangle in the atlas (its colour's dot) and scale: filled when
        Qt is first to draw the points (a cloud drawn in numpy never needs them, and 256,000 of
        them took 12 ms of a projection's landing)."""
        self._frags_stale = False
        sp = int(np.ceil(self._sprite() * dpr))
        n = len(self._xy)
        self._frags.resize(n)
        frags = self._frags.ndarray()
        if n:
            frags[:, 2] = self._group * sp
            frags[:, 3] = 0
            frags[:, 4:6] = sp
            frags[:, 6:8] = 1 / dpr
            frags[:, 8] = 0
            frags[:, 9] = 1

    # -- geometry ------------------------------------------------------------------------
    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        if not len(self._xy) or self._bounds.isNull():
            return None, None
        if ax == 0:
            return self._bounds.left(), self._bounds.right()
        return self._bounds.top(), self._bounds.bottom()

    def pixelPadding(self) -> float:
        return self._sprite() / 2

    def boundingRect(self) -> QRectF:
        if self._bounds.isNull() and not len(self._xy):
            return QRectF()
        px, py = self.pixelWidth() or 0.0, self.pixelHeight() or 0.0
        pad = self._sprite() / 2
        return self._bounds.adjusted(-pad * px, -pad * py, pad * px, pad * py)

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()  # the padding is in pixels

    # -- drawing -------------------------------------------------------------------------
    def setExportMode(self, export, opts=None):
        self._export = bool(export)
        return super().setExportMode(export, opts)

    def paint(self, p: QPainter, *_args) -> None:
        n = len(self._xy)
        if not n:
            return
        t = p.transform()
        if self._export or t.isRotating():
            self._paint_vector(p)
            return
        widget = _args[1] if len(_args) > 1 else None
        dpr = widget.devicePixelRatioF() if widget is not None else 1.0
        if dpr != self._dpr:
            self._build_atlas(dpr)
        device = QRectF(p.viewport()) if p.viewport().isValid() else None
        translucent = p.opacity() < 1 and n > TRANSLUCENT_LAYER_MIN and device is not None
        # the numpy rasteriser also for a translucent cloud: pan/zoom over a density map of 50k
        # points ran at 99-157 frames/s with it against 73-91 drawn by Qt into a layer (bench --gui)
        if (n > RASTER_MIN or translucent) and device is not None and self._n_groups <= RASTER_GROUPS:
            self._paint_raster(p, t, device, dpr)
            return
        args = self._fragments(t, device)
        p.resetTransform()
        if translucent:
            self._paint_layer(p, args, device, dpr)
        else:
            p.drawPixmapFragments(*args, self._atlas)

    def _fragments(self, t, device: QRectF | None) -> tuple:
        """The points' fragments on the device (``drawPixmapFragments`` arguments)."""
        if self._frags_stale:
            self._fill_frags(self._dpr)
        frags = self._frags.ndarray()
        np.multiply(self._x, t.m11(), out=frags[:, 0])
        frags[:, 0] += t.dx()
        np.multiply(self._y, t.m22(), out=frags[:, 1])
        frags[:, 1] += t.dy()
        if device is None or device.contains(t.mapRect(self._bounds)):
            return self._frags.drawargs()
        # zoomed in: hand Qt only the points on screen (tested in view coordinates, contiguous)
        m = self._sprite()
        view = t.inverted()[0].mapRect(device.adjusted(-m, -m, m, m))
        keep = ((self._x > view.left()) & (self._x < view.right())
                & (self._y > view.top()) & (self._y < view.bottom()))
        self._visible.resize(int(np.count_nonzero(keep)))
        self._visible.ndarray()[:] = frags[keep]
        return self._visible.drawargs()

    def _paint_layer(self, p: QPainter, args: tuple, device: QRectF, dpr: float) -> None:
        """Translucent (over a density map): the dots drawn opaque-as-given into one image, and
        the image at the cloud's opacity. Qt would apply the opacity to each dot, and thousands
        of overlapping dots would still add up to black. (For more colours than the numpy
        rasteriser takes, RASTER_GROUPS.)"""
        w, h = int(device.width()), int(device.height())
        layer = self._layer
        if layer is None or layer.width() != w or layer.height() != h:
            layer = self._layer = QImage(max(1, w), max(1, h), QImage.Format_ARGB32_Premultiplied)
        layer.setDevicePixelRatio(dpr)
        layer.fill(0)
        q = QPainter(layer)
        q.drawPixmapFragments(*args, self._atlas)
        q.end()
        p.drawImage(QPointF(0, 0), layer)

    def _paint_raster(self, p: QPainter, t, device: QRectF, dpr: float) -> None:
        """The frame as one image made in numpy (many points: see common.raster); the same frame
        again is not made again."""
        w, h = int(device.width()), int(device.height())
        # points, colours and size change only in set_points, which counts _version
        key = (self._version, w, h, dpr, t.m11(), t.m22(), t.dx(), t.dy())
        if key == self._raster_key and self._raster_image is not None:
            p.resetTransform()
            p.drawImage(QPointF(0, 0), self._raster_image)
            return
        rgba = np.array([[c.redF(), c.greenF(), c.blueF(), c.alphaF()] for c in self._colors], np.float64)
        px = self._x * (t.m11() * dpr)  # device pixels, contiguous
        px += t.dx() * dpr
        py = self._y * (t.m22() * dpr)
        py += t.dy() * dpr
        if not self._finite:
            px[~np.isfinite(px) | ~np.isfinite(py)] = -1e9  # off the image
        self._raster = rasterize(px, py, self._group, rgba, w, h, self._size * dpr)  # kept alive while drawn
        img = QImage(self._raster.data, w, h, 4 * w, QImage.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        self._raster_image, self._raster_key = img, key
        p.resetTransform()
        p.drawImage(QPointF(0, 0), img)

    def _paint_vector(self, p: QPainter) -> None:
        """Dots as vector shapes (SVG export): one path per colour."""
        t = p.transform()
        p.resetTransform()
        p.setRenderHint(QPainter.Antialiasing)
        p.setPen(Qt.NoPen)
        r = self._size / 2
        for k, color in enumerate(self._colors):
            path = QPainterPath()
            for x, y in self._xy[self._group == k]:
                pt = t.map(QPointF(float(x), float(y)))
                path.addEllipse(pt, r, r)
            if not path.isEmpty():
                p.fillPath(path, color)

    # -- the pointer ---------------------------------------------------------------------
    def index_at(self, pos: QPointF) -> int:
        """Index (as given) of the point nearest ``pos`` (view coordinates) under the pointer, or -1."""
        if not len(self._xy):
            return -1
        px, py = self.pixelWidth(), self.pixelHeight()
        if not px or not py:
            return -1
        dx = (self._xy[:, 0] - pos.x()) / px
        dy = (self._xy[:, 1] - pos.y()) / py
        d2 = dx * dx + dy * dy
        i = int(np.nanargmin(d2)) if np.isfinite(d2).any() else -1
        reach = self._size / 2 + HIT_SLACK
        if i < 0 or d2[i] > reach * reach:
            return -1
        return int(self._order[i])

    def hoverEvent(self, ev) -> None:
        i = -1 if ev.isExit() else self.index_at(ev.pos())
        if i >= 0:
            ev.acceptClicks(Qt.LeftButton)
        if i != self._hover:
            self._hover = i
            self.hovered.emit(i)

    def mouseClickEvent(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            return
        i = self.index_at(ev.pos())
        if i >= 0:
            ev.accept()
            self.clicked.emit(i)


class GridLines(pg.GraphicsObject):
    """Lines at the plot's major and minor ticks, under everything else.

    Parameters
    ----------
    plot : pg.PlotItem
        Its bottom and left axes choose the tick values.
    major, minor : float
        How much of the plot's foreground each level's (opaque) colour has over its background.
    """

    def __init__(self, plot: pg.PlotItem, major: float, minor: float):
        super().__init__()
        self._plot = plot
        self._weights = (major, minor)
        self._pens: list[QPen] = []
        self.recolour()
        self.setZValue(-1000)

    def recolour(self, _swapped=None) -> None:
        """The levels' colours from the palette's plot colours (again after a theme change)."""
        bg, fg = plot_colors()
        self._pens = [QPen(blend(fg, bg, w), 0) for w in self._weights]
        for pen in self._pens:
            pen.setCosmetic(True)
        self.update()

    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        return vb.viewRect() if vb is not None else QRectF()

    def viewRangeChanged(self) -> None:
        self.prepareGeometryChange()

    def paint(self, p: QPainter, *_args) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        rect = vb.viewRect()
        size = vb.size()
        p.setRenderHint(QPainter.Antialiasing, False)
        lines: list[list[QLineF]] = [[], []]
        for name, lo, hi, pixels in (("bottom", rect.left(), rect.right(), size.width()),
                                     ("left", rect.top(), rect.bottom(), size.height())):
            if not hi > lo or pixels <= 0:
                continue
            # the axis's own spacing (cheap), so grid and ticks agree; the values are plain arithmetic
            spacing = self._plot.getAxis(name).tickSpacing(lo, hi, pixels)
            for level, values in enumerate(_grid_values(lo, hi, [s for s, _ in spacing[:2]])):
                for v in values:
                    if name == "bottom":
                        lines[level].append(QLineF(v, rect.top(), v, rect.bottom()))
                    else:
                        lines[level].append(QLineF(rect.left(), v, rect.right(), v))
        for level in (1, 0):  # major lines over minor ones
            if lines[level]:
                p.setPen(self._pens[level])
                p.drawLines(lines[level])


def _grid_values(lo: float, hi: float, steps: list[float]) -> list[list[float]]:
    """Multiples of each step inside [lo, hi]; a finer level leaves out the coarser one's values."""
    out: list[list[float]] = []
    coarse = None
    for step in steps:
        if not step > 0 or (hi - lo) / step > 500:
            break
        first = math.ceil(lo / step)
        values = [k * step for k in range(first, math.floor(hi / step) + 1)]
        if coarse is not None:
            values = [v for v in values if abs(v / coarse - round(v / coarse)) > 1e-6]
        out.append(values)
        coarse = step
    return out
