"""Short texts centred on points of a plot (the values written over heatmap cells),
all drawn by one graphics item.

A ``pg.TextItem`` per value cost 0.5-1 ms to make (a QGraphicsTextItem, its
pens, a parent change, a transform update) and again at each change of the
view. The monkey caught the Matrix view's first redraw of a narrow table
making its 48 value items in 250-400 ms, and the Lookup's first numbers
likewise. :class:`CellTextLayer` keeps plain (x, y, text, colour) tuples and
paints them in one pass, in the view's pixels (the font does not scale with
the zoom, as a TextItem's does not).

A layer made with ``fit`` writes its texts in the largest of those point
sizes whose widest text fits a cell, and none at all when the smallest does
not: a value never runs over its neighbour's cell (the Matrix view's band at
1024 x 700 had its values touching edge to edge and the selected row's name).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

__all__ = ["CellTextLayer", "Cell", "FIT_POINT_SIZES", "FIT_MARGIN_PX"]

#: one text: its centre in the plot's data coordinates, the text, its colour
Cell = tuple[float, float, str, QColor]

#: point sizes a fitted layer tries, largest first; below the last its texts are not written
FIT_POINT_SIZES = (9, 8, 7)
#: free pixels a fitted text leaves across its cell
FIT_MARGIN_PX = 4


class CellTextLayer(pg.GraphicsObject):
    """Texts centred on data points, drawn in one paint; add it with ``ignoreBounds=True``.

    With ``fit`` (point sizes, largest first) each text sits in a cell of one data unit
    square around its point, and the layer picks the largest size whose widest text fits.
    """

    def __init__(self, z: float = 10.0, fit: Sequence[int] = ()):
        super().__init__()
        self._cells: list[Cell] = []
        self._fit = tuple(fit)
        self._boxes: dict[int, tuple[float, float]] | None = None  # size -> widest text, line height (px)
        self._bounds = QRectF()  # the visible part of the view, in the plot's coordinates
        self._bounds_stale = True  # the view moved since: asked again at the next use
        self.setZValue(z)

    # -- what is written -------------------------------------------------------------------
    def set_cells(self, cells: Sequence[Cell]) -> None:
        """Write these texts (and no others)."""
        cells = [(float(x), float(y), str(t), QColor(c)) for x, y, t, c in cells]
        if cells != self._cells:
            self._cells = cells
            self._boxes = None
            self.update()

    def clear(self) -> None:
        self.set_cells([])

    def font(self) -> QFont:
        """The texts' font: the application's (at the fitted size, for a fitted layer)."""
        return QApplication.font()

    # -- fitting --------------------------------------------------------------------------
    def fitted_size(self, cell_px: tuple[float, float]) -> int:
        """The largest fit size whose texts fit a cell of ``cell_px`` (width, height) pixels;
        0 when none does or nothing is written (a layer without ``fit``: always 0)."""
        if not self._fit or not self._cells:
            return 0
        if self._boxes is None:
            texts = {t for _, _, t, _ in self._cells}
            self._boxes = {}
            for size in self._fit:
                metrics = QFontMetricsF(self._sized_font(size))
                self._boxes[size] = (max(metrics.horizontalAdvance(t) for t in texts), metrics.height())
        width, height = cell_px
        return next((size for size in self._fit
                     if self._boxes[size][0] + FIT_MARGIN_PX <= width and self._boxes[size][1] <= height), 0)

    def cell_px(self) -> tuple[float, float]:
        """A cell's width and height on screen now, in pixels (0, 0 before the layer is shown)."""
        transform = self.deviceTransform_()  # pyqtgraph's: None before the view is shown
        return (0.0, 0.0) if transform is None else _unit_px(transform)

    def point_size(self) -> int:
        """The point size a fitted layer writes in now (0: its texts are not written)."""
        return self.fitted_size(self.cell_px())

    def _sized_font(self, size: int) -> QFont:
        font = self.font()
        font.setPointSize(size)
        return font

    def cells(self) -> list[Cell]:
        """(x, y, text, colour) of every text written (shown or not)."""
        return list(self._cells)

    def texts(self) -> list[str]:
        """The texts written, in order."""
        return [t for _, _, t, _ in self._cells]

    def shown_texts(self) -> list[str]:
        """The texts on screen: none while the layer is hidden, or fitted and too big for its cells."""
        if not self.isVisible() or (self._fit and not self.point_size()):
            return []
        return self.texts()

    # -- drawing ------------------------------------------------------------------------------
    def dataBounds(self, *_args, **_kwargs):
        return None  # the texts never widen the plot's range

    def viewTransformChanged(self) -> None:
        self._bounds_stale = True
        super().viewTransformChanged()

    def boundingRect(self) -> QRectF:
        """The visible part of the view: texts keep their pixel size at every zoom, so they may
        reach past their cells, and a repaint must cover them all."""
        if self._bounds_stale:
            self._bounds_stale = False
            view = self.viewRect()
            bounds = QRectF() if view is None else QRectF(view)
            if bounds != self._bounds:
                self.prepareGeometryChange()
                self._bounds = bounds
        return self._bounds

    def paint(self, p, *_args) -> None:
        if not self._cells:
            return
        to_device = p.transform()
        font = self.font()
        if self._fit:
            size = self.fitted_size(_unit_px(to_device))
            if not size:
                return  # even the smallest size would run over the next cell
            font = self._sized_font(size)
        metrics = QFontMetricsF(font)
        height = metrics.height()
        p.save()
        p.resetTransform()
        p.setFont(font)
        for x, y, text, color in self._cells:
            centre = to_device.map(QPointF(x, y))
            width = metrics.horizontalAdvance(text) + 2
            p.setPen(color)
            p.drawText(QRectF(centre.x() - width / 2, centre.y() - height / 2, width, height),
                       Qt.AlignmentFlag.AlignCenter, text)
        p.restore()


def _unit_px(transform) -> tuple[float, float]:
    """The pixels one data unit spans across and down under ``transform`` (plots are not rotated)."""
    return abs(transform.m11()), abs(transform.m22())
