"""Short texts centred on points of a plot (the values written over heatmap cells),
all drawn by one graphics item.

A ``pg.TextItem`` per value cost 0.5-1 ms to make (a QGraphicsTextItem, its
pens, a parent change, a transform update) and again at each change of the
view. The monkey caught the Matrix view's first redraw of a narrow table
making its 48 value items in 250-400 ms, and the Lookup's first numbers
likewise. :class:`CellTextLayer` keeps plain (x, y, text, colour) tuples and
paints them in one pass, in the view's pixels (the font does not scale with
the zoom, as a TextItem's does not).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

__all__ = ["CellTextLayer", "Cell"]

#: one text: its centre in the plot's data coordinates, the text, its colour
Cell = tuple[float, float, str, QColor]


class CellTextLayer(pg.GraphicsObject):
    """Texts centred on data points, drawn in one paint; add it with ``ignoreBounds=True``."""

    def __init__(self, z: float = 10.0):
        super().__init__()
        self._cells: list[Cell] = []
        self._font: QFont | None = None  # None: the application's font when painted
        self._bounds = QRectF()  # the visible part of the view, in the plot's coordinates
        self._bounds_stale = True  # the view moved since: asked again at the next use
        self.setZValue(z)

    # -- what is written -------------------------------------------------------------------
    def set_cells(self, cells: Sequence[Cell]) -> None:
        """Write these texts (and no others)."""
        cells = [(float(x), float(y), str(t), QColor(c)) for x, y, t, c in cells]
        if cells != self._cells:
            self._cells = cells
            self.update()

    def clear(self) -> None:
        self.set_cells([])

    def set_font(self, font: QFont | None) -> None:
        """The texts' font (None: the application's)."""
        if font != self._font:
            self._font = QFont(font) if font is not None else None
            self.update()

    def font(self) -> QFont:
        return QFont(self._font) if self._font is not None else QApplication.font()

    def cells(self) -> list[Cell]:
        """(x, y, text, colour) of every text written (shown or not)."""
        return list(self._cells)

    def texts(self) -> list[str]:
        """The texts written, in order."""
        return [t for _, _, t, _ in self._cells]

    def shown_texts(self) -> list[str]:
        """The texts on screen: none while the layer is hidden."""
        return self.texts() if self.isVisible() else []

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
