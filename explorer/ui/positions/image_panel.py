"""One colour-mapped matrix in a plot, with a colour bar: a position table,
a cosine matrix, or a text's vectors. Items are made once and updated."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFontMetrics

from explorer.core.matrix.axis_labels import label_step
from explorer.ui.common.column_numbers import spaced_column_ticks
from explorer.ui.positions.plot_frame import PlotPanel
from explorer.ui.style import DIVERGING, style_plot

__all__ = ["ImagePanel"]


class ImagePanel(PlotPanel):
    """A heatmap of a (rows, cols) matrix on a diverging map centred on 0."""

    def __init__(self, colorbar_label: str = "", parent=None):
        super().__init__(parent)
        self.plot.invertY(True)
        self.image = pg.ImageItem()
        self.image.setColorMap(pg.colormap.get(DIVERGING))
        self.plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get(DIVERGING), interactive=False,
                                        width=10)
        self.colorbar.setImageItem(self.image, insert_in=self.plot)
        self.colorbar.axis.enableAutoSIPrefix(False)
        if colorbar_label:
            self.colorbar.setLabel("right", colorbar_label)
        style_plot(self.colorbar)
        self.message = pg.TextItem("", color=self._fg, anchor=(0.5, 0.5))
        self.plot.addItem(self.message)
        self.shape = (0, 0)
        self._row_labels: list[tuple[int, str]] | None = None
        self._label_step = 0
        self._column_ticks: list | None = None
        self.plot.getViewBox().sigResized.connect(self._on_view_resized)

    def set_labels(self, bottom: str, left: str) -> None:
        self.plot.setLabel("bottom", bottom)
        self.plot.setLabel("left", left)

    def set_matrix(self, values: np.ndarray, levels: tuple[float, float], finite: bool = False) -> None:
        """Draw ``values`` (rows, cols) with colour ``levels``; ``finite``: they are float32 with no
        NaN or infinity already (a job's :func:`~explorer.core.input_layer.report.finite_image`)."""
        rows, cols = values.shape
        self.shape = (rows, cols)
        self.message.setText("")
        image = values if finite else np.nan_to_num(values.astype(np.float32, copy=False))
        self.image.setImage(image, levels=levels, autoLevels=False)
        self.image.setRect(QRectF(0, 0, cols, rows))
        self.image.show()
        self.colorbar.setLevels(levels)
        self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)
        self._apply_column_ticks()

    def set_row_labels(self, labels: list[tuple[int, str]] | None) -> None:
        """Tick labels at the centre of rows (None: numbers); as many as fit
        the plot's height without overlapping, thinned again on resize."""
        self._row_labels = labels
        self._label_step = 0
        self._apply_row_labels()

    @property
    def row_label_step(self) -> int:
        """Every how many rows a label is drawn (0: numbers, no labels)."""
        return self._label_step

    def _apply_row_labels(self) -> None:
        ax = self.plot.getAxis("left")
        labels = self._row_labels
        if labels is None:
            self._label_step = 0
            ax.setTicks(None)
            return
        rows = max(1, self.shape[0])
        line = QFontMetrics(ax.style["tickFont"] or self.font()).height()
        step = label_step(max(1.0, self.plot.getViewBox().height()) / rows, line, gap=4)
        if step == self._label_step:
            return
        self._label_step = step
        ax.setTicks([[(i + 0.5, text) for i, text in labels if i % step == 0], []])

    def _apply_column_ticks(self) -> None:
        """Round column numbers as far apart as the widest one needs (:func:`spaced_column_ticks`)."""
        axis = self.plot.getAxis("bottom")
        cols, width = self.shape[1], self.plot.getViewBox().width()
        if cols <= 0 or width <= 0:
            ticks = None
        else:
            ticks = spaced_column_ticks(axis, cols, width / (cols * 1.04))  # the range's padding: 2 % each side
        if ticks != self._column_ticks:
            self._column_ticks = ticks
            axis.setTicks(None if ticks is None else [ticks, []])

    def _on_view_resized(self, *_args) -> None:
        if self._row_labels is not None:
            self._apply_row_labels()
        self._apply_column_ticks()

    def clear(self, message: str = "") -> None:
        self.shape = (0, 0)
        self._apply_column_ticks()
        self.image.hide()
        self.set_row_labels(None)
        self.message.setText(message)
        self.message.setPos(0.5, 0.5)
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
