"""One square heatmap of an n x n matrix: the image, the selection outlines,
values written in the cells and token labels on both axes."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QGraphicsRectItem

from ..style import ACCENT, plot_colors, shrinkable, style_plot, text_colors_on

#: values are written in the cells up to this many tokens
CELL_TEXT_MAX = 14
#: tick labels on every row up to this many tokens
TICK_ALL_MAX = 40


class Heatmap:
    """A square heatmap in a pyqtgraph plot; its items are made once and updated."""

    def __init__(self, plot: pg.PlotItem, title: str, colorbar_label: str | None = None):
        self.plot = plot
        _bg, fg = plot_colors()
        self._fg = fg
        plot.setTitle(title, color=fg, size="10pt")
        shrinkable(plot.titleLabel)
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
        self.texts: list[pg.TextItem] = []
        self.values = np.zeros((0, 0))
        self._labels: list[str] = []
        self._bottom = True
        self._bottom_ticks: list[tuple[float, str]] = []
        #: the plot width the column labels were last fitted to (pixels)
        self.layout_width = 0.0
        self._written = 0  # cells with a value written
        self._cell_state: list = []  # per text item: what it shows (text, colour, font size, column, row)
        self._text_px = 0  # the widest of those values, in pixels
        self.colorbar: pg.ColorBarItem | None = None
        if colorbar_label is not None:
            self.colorbar = pg.ColorBarItem(values=(0, 1), interactive=False, width=10)
            self.colorbar.setImageItem(self.image)
            self.colorbar.axis.enableAutoSIPrefix(False)
            if colorbar_label:
                self.colorbar.setLabel("right", colorbar_label)
            style_plot(self.colorbar)
        plot.getViewBox().sigResized.connect(self._on_view_resized)

    def set_title(self, title: str) -> None:
        self.plot.setTitle(title, color=self._fg, size="10pt")

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
        self.plot.setRange(xRange=(0, max(n, 1)), yRange=(0, max(n, 1)), padding=0.0)

    def clear(self) -> None:
        self.values = np.zeros((0, 0))
        self.image.hide()
        for t in self.texts:
            t.hide()
        self._written = 0
        self.set_ticks([])
        self.highlight(-1, 0, None)

    def write_cells(self, fmt: Callable[[float], str], levels: tuple[float, float], cmap,
                    limit: int = CELL_TEXT_MAX) -> None:
        """Write each value in its cell (up to ``limit`` tokens), in the text colour
        that reads best on the cell's colour."""
        n = self.values.shape[0]
        want = n * n if n <= limit else 0
        font = QFont()
        font.setPointSize(8 if n > 8 else 9)
        while len(self.texts) < want:
            t = pg.TextItem("", anchor=(0.5, 0.5))
            t.setZValue(5)
            self.plot.addItem(t, ignoreBounds=True)
            self.texts.append(t)
            self._cell_state.append(None)
        lo, hi = levels
        values = self.values.ravel()[:want]
        fracs = np.full(want, 0.5) if hi == lo else (np.clip(values, lo, hi) - lo) / (hi - lo)
        colors = text_colors_on(cmap.map(fracs, mode="float")) if want else []
        metrics = QFontMetrics(font)
        widest = 0
        for k in range(want):
            t = self.texts[k]
            text = fmt(float(values[k]))
            widest = max(widest, metrics.horizontalAdvance(text))
            state = (text, colors[k].rgb(), font.pointSize(), k % n, k // n)
            if self._cell_state[k:k + 1] == [state]:
                continue  # unchanged: touching a text item costs a relayout
            t.setText(text, color=colors[k])
            if t.textItem.font().pointSize() != font.pointSize():
                t.setFont(font)
            t.setPos(k % n + 0.5, k // n + 0.5)
            self._cell_state[k:k + 1] = [state]
        for t in self.texts[want:]:
            t.hide()
        self._written, self._text_px = want, widest
        self._fit_cell_texts()

    def _fit_cell_texts(self) -> None:
        """Values are shown only when they fit their cells (never over a neighbour's)."""
        n = self.values.shape[0]
        fits = n > 0 and self.plot.getViewBox().width() / n >= self._text_px + 4
        for t in self.texts[: self._written]:
            t.setVisible(fits)

    def cell_texts(self) -> list[str]:
        """The values written in the cells, row by row (shown when they fit)."""
        return [t.textItem.toPlainText() for t in self.texts[: self._written]]

    @property
    def cell_texts_shown(self) -> bool:
        return self._written > 0 and self.texts[0].isVisible()

    # -- axis labels ---------------------------------------------------------------------
    def set_ticks(self, labels: list[str], bottom: bool = True) -> None:
        """Token labels on the left (and, with ``bottom``, under the columns)."""
        self._labels, self._bottom = list(labels), bottom
        n = len(labels)
        step = 1 if n <= TICK_ALL_MAX else int(np.ceil(n / TICK_ALL_MAX))
        self.plot.getAxis("left").setTicks([[(i + 0.5, labels[i]) for i in range(0, n, step)], []])
        self._layout_bottom_ticks()

    def _layout_bottom_ticks(self) -> None:
        """Column labels that never run into each other: cut to the cell's
        width, and only every k-th column when even three letters do not fit."""
        axis = self.plot.getAxis("bottom")
        n = len(self._labels)
        if not self._bottom or not n:
            self._bottom_ticks = []
            axis.setTicks([[], []])
            return
        metrics = QFontMetrics(axis.style.get("tickFont") or QFont())
        self.layout_width = self.plot.getViewBox().width()
        cell_px = self.layout_width / n
        char_px = max(1.0, metrics.averageCharWidth())
        chars = int((cell_px - 6) // char_px)
        step = 1
        if chars < 3:  # not even "ab…": label every step-th column with 3 characters
            step = int(np.ceil(3 * char_px / max(cell_px - 6, 1.0)))
            chars = 3
        ticks = []
        for i in range(0, n, step):
            lab = self._labels[i]
            ticks.append((i + 0.5, lab if len(lab) <= chars else lab[: max(1, chars - 1)] + "…"))
        self._bottom_ticks = ticks
        axis.setTicks([ticks, []])
        axis.setStyle(tickTextOffset=4)

    def bottom_ticks(self) -> list[tuple[float, str]]:
        """The column labels drawn: (position, text)."""
        return list(self._bottom_ticks)

    def _on_view_resized(self, *_args) -> None:
        self._layout_bottom_ticks()
        self._fit_cell_texts()

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
