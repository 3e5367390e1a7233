"""Pieces the parts of the lookup view are made of: an elastic label, a plain
plot, numbers on colour-mapped cells, and the output vector filling up
value by value."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QSizePolicy

from explorer.ui.common.cell_texts import CellTextLayer
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.lookup.row_labels import RowLabelAxis
from explorer.ui.style import ACCENT, DIVERGING, cell_text_colors, plot_colors, style_plot

#: values are written as numbers (and drawn as cells) when d is at most this
SMALL_D = 12
#: below this the rows of E would be too thin to read: the view scrolls instead
GLW_MIN_HEIGHT = 220


def make_plot(glw: pg.GraphicsLayoutWidget, row: int, title: str, fg: str, labelled: bool = False) -> pg.PlotItem:
    """A fixed plot (no mouse, no menu) in row ``row`` of ``glw``; ``labelled``
    gives it left and right axes whose labels are always drawn."""
    axes = {"left": RowLabelAxis("left"), "right": RowLabelAxis("right")} if labelled else None
    # no menu from the start: a ViewBox made with one builds two axis panels of widgets first
    p = glw.addPlot(row=row, col=0, axisItems=axes, enableMenu=False)
    if title:
        p.setTitle(title, color=fg, size="9pt")
    p.setMouseEnabled(False, False)
    p.hideButtons()
    style_plot(p)
    return p


def elastic_label(tooltip: str = "", rich: bool = False, font=None) -> QLabel:
    """A label that never asks for width (the splitter decides), optionally rich text."""
    lab = WrapLabel(wrap=False)
    lab.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    lab.setMinimumWidth(40)
    if rich:
        lab.setTextFormat(Qt.RichText)
    if font is not None:
        lab.setFont(font)
    if tooltip:
        lab.setToolTip(tooltip)
    return lab


def plot_area(min_height: int) -> pg.GraphicsLayoutWidget:
    """A column of plots on the plot background, at least ``min_height`` pixels tall."""
    glw = pg.GraphicsLayoutWidget()
    glw.setBackground(plot_colors()[0])
    glw.ci.setContentsMargins(2, 2, 2, 2)
    glw.ci.setSpacing(2)
    glw.setMinimumHeight(min_height)
    return glw


class Ranges:
    """Sets plots' ranges only when they change: a new range lays the axes
    out again, about a millisecond per plot on every click otherwise."""

    def __init__(self):
        self._last: dict[int, tuple] = {}

    def set(self, plot: pg.PlotItem, x: tuple[float, float], y: tuple[float, float] | None = None,
            padding: float = 0.02) -> None:
        key = (x, y, padding)
        if self._last.get(id(plot)) != key:
            self._last[id(plot)] = key
            plot.setRange(xRange=x, yRange=y, padding=padding)


def small_font(widget_font: QFont, point_size: int = 8) -> QFont:
    f = QFont(widget_font)
    f.setPointSize(point_size)
    return f


class CellTexts:
    """Numbers written on the cells of a colour-mapped image (small tables): at most
    ``capacity`` of them, all painted by one :class:`CellTextLayer` (a text item per
    number cost the first small table's frame hundreds of milliseconds)."""

    def __init__(self, plot: pg.PlotItem, n: int):
        self.capacity = n
        self._cmap = pg.colormap.get(DIVERGING)
        self.layer = CellTextLayer(z=10)
        plot.addItem(self.layer, ignoreBounds=True)

    def show(self, cells: list[tuple[float, float, str, float]], lim: float) -> None:
        """(x, y, text, value) per cell (at most ``capacity``); no others."""
        cells = cells[: self.capacity]
        colors = cell_text_colors([value for *_, value in cells], (-lim, lim), self._cmap)
        self.layer.set_cells([(x, y, text, color) for (x, y, text, _), color in zip(cells, colors)])

    def shown(self) -> list[str]:
        """The numbers written, in order."""
        return self.layer.shown_texts()


class OutputVector:
    """The output row of a path, filled up to ``filled`` values.

    A few values: coloured cells with their numbers; many: a curve (a colour
    strip of 768 cells would blur into one colour).
    """

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.image = pg.ImageItem()
        self.image.setColorMap(pg.colormap.get(DIVERGING))
        plot.addItem(self.image)
        self.curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=1))
        plot.addItem(self.curve)
        self.texts = CellTexts(plot, SMALL_D)
        self._row = np.zeros(0, np.float32)
        self._lim = 1.0
        self._filled = -1
        self._ranges = Ranges()

    def set_row(self, row: np.ndarray, lim: float) -> None:
        """The row the path will produce, and the colour limit."""
        self._row = np.asarray(row, np.float32)
        self._lim = lim
        self._filled = -1
        d = self._row.size
        self._ranges.set(self.plot, (0, d), (0, 1))

    def show(self, filled: int) -> None:
        """Draw the first ``filled`` values (the rest are still 0)."""
        if filled == self._filled:
            return
        self._filled = filled
        d = self._row.size
        values = np.where(np.arange(d) < filled, self._row, 0.0).astype(np.float32)
        small = d <= SMALL_D
        self.image.setVisible(small)
        self.curve.setVisible(not small)
        if small:
            self.image.setImage(values[None, :], levels=(-self._lim, self._lim), autoLevels=False)
            # after the image: setRect scales the image it holds, and placed before it, it stretched the
            # last row's width over d columns (a 3-value row of a toy table drew its first value 3 wide)
            self.image.setRect(QRectF(0, 0, d, 1))
            self.texts.show([(j + 0.5, 0.5, f"{values[j]:+.2f}" if j < filled else "0", float(values[j]))
                             for j in range(d)], self._lim)
        else:
            n = max(filled, 0)
            self.curve.setData(np.arange(n) + 0.5, 0.5 + 0.45 * values[:n] / self._lim)
            self.texts.show([], self._lim)

    @property
    def values(self) -> np.ndarray:
        """The values shown now (for tests)."""
        d = self._row.size
        return np.where(np.arange(d) < max(self._filled, 0), self._row, 0.0).astype(np.float32)
