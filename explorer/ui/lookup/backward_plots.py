"""The backward step's four plots (G, dL/dE's rows, the strip of all V rows, the
repeated row's sum), made a part a turn when the page is first shown."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF
from PySide6.QtWidgets import QGraphicsRectItem

from explorer.ui.common.binding import MadeInParts, PlotsInParts
from explorer.ui.common.integer_axis import CellAxis
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.lookup.plots import SMALL_D, CellTexts
from explorer.ui.lookup.row_labels import RowLabelAxis
from explorer.ui.style import DIVERGING, ERROR, GRADIENT_ROWS, PENDING, style_plot

__all__ = ["BackwardPlots", "MAX_LABELS"]

#: row labels drawn at most per plot (the others are skipped evenly)
MAX_LABELS = 14
#: the row-label axes: at least this wide (pixels), and at most this wide before labels are shortened
LABEL_AXIS_MIN, LABEL_AXIS_MAX = 96, 190


def _labelled_plot(glw: pg.GraphicsLayoutWidget, row: int, col: int, colspan: int = 1) -> pg.PlotItem:
    p = glw.addPlot(row=row, col=col, colspan=colspan, enableMenu=False,  # no menu: none is built
                    axisItems={"left": RowLabelAxis("left"), "bottom": CellAxis("bottom")})
    p.setMouseEnabled(False, False)
    p.hideButtons()
    style_plot(p)
    p.invertY(True)
    return p


def _outline(plot: pg.PlotItem, color: str) -> QGraphicsRectItem:
    pen = pg.mkPen(color, width=3)
    pen.setCosmetic(True)
    item = QGraphicsRectItem()
    item.setPen(pen)
    item.setZValue(8)
    item.hide()
    plot.addItem(item)
    return item


class BackwardPlots(PlotsInParts):
    """The plots of :class:`explorer.ui.lookup.backward_panel.BackwardPanel` (its ``glw``, its
    ``_fg``, and its ``_back``, ``_draw_result`` and ``render`` for what is held).

    Made at the page's first show a part a turn, so a Lookup view whose backward step is never
    opened never pays for its four plots, and the one that is is never stalled by all four at
    once (85 ms quiet, 280 ms beside a worker, in a real window)."""

    def _init_plots(self) -> None:
        # made when the page is first shown, a part a turn (the top pair, the strip, the sum, then the drawing)
        self._plot_parts = MadeInParts((self._build_pair, self._build_strip, self._build_sum, self._plots_ready), self)

    def showEvent(self, event) -> None:
        self._plot_parts.start()
        super().showEvent(event)

    def _build_pair(self) -> None:
        cmap = pg.colormap.get(DIVERGING)
        self.g_plot = _labelled_plot(self.glw, 0, 0)
        self.grad_plot = _labelled_plot(self.glw, 0, 1)
        self.g_title = FittedTitle(self.g_plot, 9)
        self.grad_title = FittedTitle(self.grad_plot, 9)
        self.g_img, self.grad_img = pg.ImageItem(), pg.ImageItem()
        for plot, img in ((self.g_plot, self.g_img), (self.grad_plot, self.grad_img)):
            img.setColorMap(cmap)
            plot.addItem(img)
        self.g_now = _outline(self.g_plot, ERROR)
        self.grad_now = _outline(self.grad_plot, GRADIENT_ROWS)

    def _build_strip(self) -> None:
        self.strip_plot = p = self.glw.addPlot(row=1, col=0, colspan=2, axisItems={"bottom": CellAxis("bottom")},
                                               enableMenu=False)
        p.setTitle("All V rows of dL/dE", color=self._fg, size="9pt")
        p.setMouseEnabled(False, False)
        p.hideButtons()
        style_plot(p)
        p.hideAxis("left")
        p.setMaximumHeight(70)
        self.strip_img = pg.ImageItem()
        self.strip_plot.addItem(self.strip_img)
        self._lut = np.array([QColor(c).getRgb()[:3] for c in (PENDING, GRADIENT_ROWS)], np.uint8)

    def _build_sum(self) -> None:
        self.sum_plot = _labelled_plot(self.glw, 2, 0, colspan=2)
        self.sum_title = FittedTitle(self.sum_plot, 9)
        self.sum_img = pg.ImageItem()
        self.sum_img.setColorMap(pg.colormap.get(DIVERGING))
        self.sum_plot.addItem(self.sum_img)
        self.sum_texts = CellTexts(self.sum_plot, (MAX_LABELS + 1) * SMALL_D)
        self.sum_line = _outline(self.sum_plot, GRADIENT_ROWS)
        rows = self.glw.ci.layout
        rows.setRowStretchFactor(0, 5)
        rows.setRowStretchFactor(1, 1)
        rows.setRowStretchFactor(2, 3)
        self._label_width = 0
        self._set_label_width(LABEL_AXIS_MIN)

    def _plots_ready(self) -> None:
        """Every plot is made: draw what is held."""
        if self._back is None:
            self._clear_plots()
            return
        self._draw_result()
        self._shown_step = -1
        self.render()

    def _fit_label_axes(self) -> None:
        """One width for the three row-label axes (their images line up), as wide as
        the labels want ("␣queen 15,731 ×2" whole) within bounds; wider ones are shortened."""
        metrics = QFontMetricsF(self.font())
        plots = (self.g_plot, self.grad_plot, self.sum_plot)
        want = max(p.getAxis("left").natural_width(metrics) for p in plots)
        self._set_label_width(int(min(max(want, LABEL_AXIS_MIN), LABEL_AXIS_MAX)))

    def _set_label_width(self, width: int) -> None:
        """The row-label axes' width, if it is new (a new width lays the plots out again). Compared
        with the width last set, not the axis' geometry, which keeps the old width until the layout
        runs: two fits in one turn (the plots made, then a result) could otherwise skip the second."""
        if width != self._label_width:
            self._label_width = width
            for p in (self.g_plot, self.grad_plot, self.sum_plot):
                p.getAxis("left").setWidth(width)

    def _clear_plots(self) -> None:
        for img in (self.g_img, self.grad_img, self.sum_img, self.strip_img):
            img.clear()
        for item in (self.g_now, self.grad_now, self.sum_line):
            item.hide()
        self.sum_texts.show([], 1.0)
        for p in (self.g_plot, self.grad_plot, self.sum_plot):
            p.getAxis("left").set_labels([])
        for t in (self.g_title, self.grad_title, self.sum_title):
            t.set("")

