"""One square heatmap of an n x n matrix: the image, the selection outlines,
values written in the cells (in the largest font that fits them, or not at
all) and token labels on both axes that never overlap."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QGraphicsRectItem

from explorer.ui.common.cell_texts import FIT_POINT_SIZES, CellTextLayer
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.similarity.token_axis import TokenAxis
from explorer.ui.style import ACCENT, cell_text_colors, style_plot

#: values are written in the cells up to this many tokens
CELL_TEXT_MAX = 14


class Heatmap:
    """A square heatmap in a pyqtgraph plot; its items are made once and updated."""

    def __init__(self, plot: pg.PlotItem, title: str, colorbar_label: str | None = None, small: bool = False):
        self.plot = plot
        # a small map's labels are shorter and a point smaller
        self.left_axis = TokenAxis("left", max_label_px=64 if small else 96, point_delta=-1 if small else 0)
        self.bottom_axis = TokenAxis("bottom", max_label_px=80, point_delta=-1 if small else 0)
        plot.setAxisItems({"left": self.left_axis, "bottom": self.bottom_axis})
        # a small map's title may run over its token axis: "Scalar ids: |i − j|" whole, not "Scalar ids:…"
        self.title = FittedTitle(plot, span=small)
        self.title.set(title)
        plot.invertY(True)
        plot.setAspectLocked(True)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(False, False)
        style_plot(plot)
        self.image = pg.ImageItem()
        plot.addItem(self.image)
        pen = pg.mkPen(ACCENT, width=2)
        pen.setCosmetic(True)
        self.row_rect = QGraphicsRectItem()
        self.row_rect.setPen(pen)
        self.col_rect = QGraphicsRectItem()
        self.col_rect.setPen(pen)
        cell_pen = pg.mkPen(ACCENT, width=3.5)
        cell_pen.setCosmetic(True)
        self.cell_rect = QGraphicsRectItem()
        self.cell_rect.setPen(cell_pen)
        for r in (self.row_rect, self.col_rect, self.cell_rect):
            r.setZValue(10)
            plot.addItem(r)
            r.hide()
        # the values written in the cells, one painted item, in the largest font that fits them
        self.layer = CellTextLayer(z=5, fit=FIT_POINT_SIZES)
        plot.addItem(self.layer, ignoreBounds=True)
        self.values = np.zeros((0, 0))
        self.colorbar: pg.ColorBarItem | None = None
        self._bar_fitted: tuple[float, float] | None = None  # the levels the colour bar's width was fitted to
        if colorbar_label is not None:
            self.colorbar = pg.ColorBarItem(values=(0, 1), interactive=False, width=10)
            self.colorbar.setImageItem(self.image)
            self.colorbar.axis.enableAutoSIPrefix(False)
            if colorbar_label:
                self.colorbar.setLabel("right", colorbar_label)
            style_plot(self.colorbar)

    def set_title(self, title: str) -> None:
        self.title.set(title)

    def set_values(self, values: np.ndarray, levels: tuple[float, float], cmap) -> None:
        self.values = values
        n = values.shape[0]
        self.image.setColorMap(cmap)
        if n:
            self.image.setImage(np.nan_to_num(values), levels=levels, autoLevels=False)
            self.image.setRect(QRectF(0, 0, n, n))
            self.image.show()
        else:
            self.image.hide()
        if self.colorbar is not None:
            self.colorbar.setColorMap(cmap)
            self.colorbar.setLevels(levels)
            self._fit_colorbar_axis()
        self.plot.setRange(xRange=(0, max(n, 1)), yRange=(0, max(n, 1)), padding=0.0)

    def _fit_colorbar_axis(self) -> None:
        """Room for the colour bar's widest tick value and its title side by side
        (pyqtgraph sizes the axis from values already drawn, so a wider range
        such as -0.04 would run into the title)."""
        ax = self.colorbar.axis
        lo, hi = self.colorbar.levels()
        if self._bar_fitted == (lo, hi):
            return
        self._bar_fitted = (lo, hi)
        strings = [s for spacing, values in ax.tickValues(lo, hi, max(ax.height(), 100.0))
                   for s in ax.tickStrings(values, 1.0, spacing)]
        metrics = QFontMetricsF(ax.style["tickFont"] or QApplication.font())
        text = max((metrics.horizontalAdvance(s) for s in strings), default=0.0)
        title = ax.label.boundingRect().height() if ax.label.isVisible() else 0.0
        offset = ax.style["tickTextOffset"][0] + max(0, ax.style["tickLength"])
        ax.setWidth(int(math.ceil(text + offset + title + 2)))

    def clear(self) -> None:
        self.values = np.zeros((0, 0))
        self.image.hide()
        self.layer.clear()
        self.set_ticks([])
        self.highlight(-1, 0, None)

    def write_cells(self, fmt: Callable[[float], str], levels: tuple[float, float], cmap,
                    limit: int = CELL_TEXT_MAX) -> None:
        """Write each value in its cell (up to ``limit`` tokens), in the text colour
        that reads best on the cell's colour."""
        n = self.values.shape[0]
        want = n * n if n <= limit else 0
        values = self.values.ravel()[:want]
        colors = cell_text_colors(np.nan_to_num(values), levels, cmap)  # the image shows NaN as 0
        texts = [fmt(float(v)) for v in values]
        self.layer.set_cells([(k % n + 0.5, k // n + 0.5, texts[k], colors[k]) for k in range(want)])

    @property
    def cell_point_size(self) -> int:
        """The point size the values are written in (0: they do not fit, or none is written)."""
        return self.layer.point_size()

    def cell_texts(self) -> list[str]:
        """The values written in the cells, row by row (shown when they fit)."""
        return self.layer.texts()

    @property
    def cell_texts_shown(self) -> bool:
        return bool(self.layer.shown_texts())

    # -- axis labels ---------------------------------------------------------------------
    def set_ticks(self, labels: list[str], bottom: bool = True) -> None:
        """Token labels on the left (and, with ``bottom``, under the columns)."""
        self.left_axis.set_labels(list(labels))
        self.bottom_axis.set_labels(list(labels) if bottom else [])

    # -- selection -----------------------------------------------------------------------
    def highlight(self, row: int, n: int, pair: tuple[int, int] | None) -> None:
        """Outline the row and column ``row`` and the cell ``pair`` (row, column)."""
        if 0 <= row < n:
            self.row_rect.setRect(QRectF(0, row, n, 1))
            self.col_rect.setRect(QRectF(row, 0, 1, n))
            self.row_rect.show()
            self.col_rect.show()
        else:
            self.row_rect.hide()
            self.col_rect.hide()
        if pair is not None and 0 <= pair[0] < n and 0 <= pair[1] < n:
            self.cell_rect.setRect(QRectF(pair[1], pair[0], 1, 1))
            self.cell_rect.show()
        else:
            self.cell_rect.hide()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        """(row, column) of the cell under a scene position, or None."""
        vb = self.plot.getViewBox()
        if not self.plot.isVisible() or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        n = self.values.shape[0]
        if 0 <= r < n and 0 <= c < n:
            return r, c
        return None

