"""The one-hot path: x = one_hot(i) walks through every row of E, multiplying
all of them but one by zero."""

from __future__ import annotations

import html
import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QGraphicsRectItem, QVBoxLayout, QWidget

from explorer.core.lookup import animation as anim
from explorer.core.lookup.animation import RowWindow
from explorer.core.lookup.ways import RowLayout
from explorer.ui.lookup.plots import (
    GLW_MIN_HEIGHT,
    SMALL_D,
    CellTexts,
    OutputVector,
    Ranges,
    elastic_label,
    make_plot,
    plot_area,
)
from explorer.ui.style import ACCENT, DIVERGING, ERROR, PENDING, SPACING, WASTED, mono_font, plot_colors, translucent

#: pixels (bins) of the compressed one-hot strip
STRIP_BINS = 800
#: the label axes beside the rows are at least / at most this wide (pixels)
AXIS_MIN, AXIS_MAX = 96, 200


class OneHotPanel(QWidget):
    """x @ E for x = one_hot(i): the compressed vector x, the rows of E
    around row i next to their entries of x, the output filling up, and the
    counters of multiply-adds, FLOPs and bytes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        fg = plot_colors()[1]
        self._fg = fg
        self._window: RowWindow | None = None
        self._hot = -1
        self._right_labels: list | None = None
        self._axis_width = 0
        self._ranges = Ranges()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, SPACING // 2, 0)
        lay.setSpacing(SPACING // 2)
        self.title = elastic_label("x = one_hot(i): V entries, all 0 but x[i] = 1; output = x @ E = Σ_r x[r] · E[r]",
                                   rich=True)
        self.title.setText("<b>One-hot vector × E</b>")
        lay.addWidget(self.title)
        self.now_label = elastic_label("What the matrix product is doing at this moment", rich=True)
        lay.addWidget(self.now_label)
        self.glw = plot_area(GLW_MIN_HEIGHT)
        self.glw.setToolTip(
            f"<span style='color:{WASTED}'>■</span> rows multiplied by 0 (wasted) &nbsp; "
            f"<span style='color:{ERROR}'>■</span> being multiplied now &nbsp; "
            f"<span style='color:{ACCENT}'>■</span> the row whose entry of x is 1")
        lay.addWidget(self.glw, 1)
        self.counters = elastic_label(
            "A multiply-add is one multiplication and one addition (2 FLOPs).\n"
            "The one-hot product does d of them for every one of the V rows: 2·V·d FLOPs per token.",
            rich=True, font=mono_font(8))
        lay.addWidget(self.counters)

    def plot_steps(self) -> list:
        """What makes the three plots, for the maker to call one a step (20-35 ms each): the panel
        is made without them (:func:`~explorer.ui.lookup.forward_page.panels_in_steps`)."""
        return [self._build_strip, self._build_zoom, self._build_output]

    # -- building ------------------------------------------------------------------------
    def _build_strip(self) -> None:
        self.strip_plot = make_plot(self.glw, 0, "", self._fg, labelled=True)
        self.strip_img = pg.ImageItem()
        self.strip_plot.addItem(self.strip_img)
        self.strip_cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ERROR, width=2))
        self.strip_plot.addItem(self.strip_cursor)
        self.strip_hot = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ACCENT, width=3))
        self.strip_plot.addItem(self.strip_hot)
        self.strip_label = pg.TextItem(color=ACCENT, anchor=(0, 0.5),
                                       fill=pg.mkBrush(translucent(plot_colors()[0], 200)))
        bold = QFont(self.font())
        bold.setBold(True)
        self.strip_label.setFont(bold)
        self.strip_label.setZValue(10)
        self.strip_plot.addItem(self.strip_label, ignoreBounds=True)
        self.strip_plot.getAxis("left").set_labels([(0.5, "", "x = one_hot(i)")])
        self.strip_plot.setMinimumHeight(40)
        self.strip_plot.setMaximumHeight(64)
        self._lut = np.array([QColor(c).getRgb()[:3] for c in (PENDING, WASTED, ERROR, ACCENT)], np.uint8)

    def _build_zoom(self) -> None:
        self.zoom_plot = make_plot(self.glw, 1, "", self._fg, labelled=True)
        self.zoom_plot.invertY(True)
        self.zoom_img = pg.ImageItem()
        self.zoom_img.setColorMap(pg.colormap.get(DIVERGING))
        self.zoom_plot.addItem(self.zoom_img)
        self.zoom_shade = pg.ImageItem()
        self.zoom_shade.setZValue(5)
        self.zoom_plot.addItem(self.zoom_shade)
        pen = pg.mkPen(ACCENT, width=3)
        pen.setCosmetic(True)
        self.zoom_hot = QGraphicsRectItem()
        self.zoom_hot.setPen(pen)
        self.zoom_hot.setZValue(8)
        self.zoom_plot.addItem(self.zoom_hot)
        cur_pen = pg.mkPen(ERROR, width=2)
        cur_pen.setCosmetic(True)
        self.zoom_cur = QGraphicsRectItem()
        self.zoom_cur.setPen(cur_pen)
        self.zoom_cur.setBrush(pg.mkBrush(translucent(ERROR, 60)))
        self.zoom_cur.setZValue(9)
        self.zoom_plot.addItem(self.zoom_cur)
        self.zoom_gap = pg.TextItem(color=self._fg, anchor=(0.5, 0.5))
        self.zoom_gap.setZValue(10)
        self.zoom_plot.addItem(self.zoom_gap, ignoreBounds=True)
        self.zoom_texts = CellTexts(self.zoom_plot, anim.SMALL_V * SMALL_D)
        self._shade_rgba = np.array(translucent(WASTED, 190).getRgb(), np.uint8)

    def _build_output(self) -> None:
        self.out_plot = make_plot(self.glw, 2, "", self._fg, labelled=True)
        self.out_plot.getAxis("left").set_labels([(0.5, "", "x @ E =")])
        self.out_plot.hideAxis("bottom")
        self.out_plot.setMinimumHeight(40)
        self.out_plot.setMaximumHeight(40)
        self.output = OutputVector(self.out_plot)
        for plot in (self.strip_plot, self.out_plot):
            plot.getAxis("right").setStyle(showValues=False)
            plot.getAxis("right").setPen(pg.mkPen(None))
        for plot in (self.strip_plot, self.zoom_plot, self.out_plot):
            plot.showAxis("left")
            plot.showAxis("right")
        rows = self.glw.ci.layout
        rows.setRowStretchFactor(0, 1)
        rows.setRowStretchFactor(1, 6)
        rows.setRowStretchFactor(2, 1)

    # -- one token -----------------------------------------------------------------------
    @property
    def row_axis(self):
        """The axis labelling the rows of E shown (piece, id and its entry of x)."""
        return self.zoom_plot.getAxis("left")

    def show_token(self, vocab_size: int, dim: int, hot: int, token: str, window: RowWindow, rows: np.ndarray,
                   pieces: list[str], lim: float) -> None:
        """The parts that stay while the walk runs: rows of E around ``hot``,
        their labels, the strip's scale and the output's row.

        ``token`` is the piece of row ``hot``, ``rows`` (n, d) float32 the
        rows ``window.ids``, ``pieces`` their display pieces, ``lim`` the
        colour limit.
        """
        v, d = vocab_size, dim
        self._window, self._hot, self._lim = window, hot, lim
        self._right_labels = None
        n_img = window.n_display
        img = np.full((n_img, d), np.nan, np.float32)
        img[window.positions] = rows
        self.zoom_img.setImage(img, levels=(-lim, lim), autoLevels=False)
        self.zoom_img.setRect(QRectF(0, 0, d, n_img))
        if window.gap is not None:
            first, last = window.gap
            self.zoom_gap.setText(f"⋮ rows {first:,} … {last:,}")
            self.zoom_gap.setPos(d / 2, window.gap_position + 0.5)
            self.zoom_gap.show()
        else:
            self.zoom_gap.hide()
        labels = []
        for k, i in enumerate(window.ids):
            piece = pieces[k]
            head = "" if piece == str(i) else f"{piece} "
            labels.append((window.positions[k] + 0.5, head, f"{i:,}  x={1 if i == hot else 0} ×"))
        self.row_axis.set_labels(labels)
        self._fit_axes()
        hk = int(np.nonzero(window.ids == hot)[0][0])
        self.zoom_hot.setRect(QRectF(0, window.positions[hk], d, 1))
        self._ranges.set(self.zoom_plot, (0, d), (0, n_img))
        bottom = self.zoom_plot.getAxis("bottom")
        if d <= 40:
            step = 1 if d <= 16 else 5
            bottom.setTicks([[(j + 0.5, str(j)) for j in range(0, d, step)], []])
        else:
            bottom.setTicks(None)
        small = d <= SMALL_D and len(window.ids) * d <= self.zoom_texts.capacity
        cells = [(c + 0.5, window.positions[r] + 0.5, f"{rows[r, c]:+.2f}", float(rows[r, c]))
                 for r in range(len(window.ids)) for c in range(d)] if small else []
        self.zoom_texts.show(cells, lim)
        self.output.set_row(rows[hk], lim)
        self.out_plot.getAxis("bottom").setTicks(bottom._tickLevels)
        self._ranges.set(self.strip_plot, (0, v), (0, 1), padding=0.01)
        self.strip_plot.getAxis("bottom").setStyle(showValues=v <= 20)
        self.strip_plot.getAxis("bottom").setTicks([[(r + 0.5, str(r)) for r in range(v)] if v <= 20 else [], []])
        self.strip_label.setText(f"x[{hot:,}] = 1")
        self.strip_label.setAnchor((0, 0.5) if hot < v / 2 else (1, 0.5))
        self.strip_label.setPos(hot + 0.5 + (v * 0.01 if hot < v / 2 else -v * 0.01), 0.5)
        self.strip_label.setVisible(v > 20)
        self.strip_hot.setValue(hot + 0.5)
        self.title.setText(f"<b>One-hot vector × E</b> for row <b style='color:{ACCENT}'>{hot:,}</b>, token "
                           f"<b style='color:{ACCENT}'>{html.escape(token, quote=False)}</b>")

    def _fit_axes(self) -> None:
        """One width for the three left axes (their images line up), as wide
        as the labels want within bounds; wider labels are shortened."""
        metrics = QFontMetricsF(self.font())
        want = max(self.row_axis.natural_width(metrics), self.strip_plot.getAxis("left").natural_width(metrics))
        width = int(min(max(want, AXIS_MIN), AXIS_MAX))
        if width == self._axis_width:  # a new width lays the plots out again: only when it changes
            return
        self._axis_width = width
        right = int(metrics.horizontalAdvance("→ 0, wasted") + 16)
        for plot in (self.strip_plot, self.zoom_plot, self.out_plot):
            plot.getAxis("left").setWidth(width)
            plot.getAxis("right").setWidth(right)

    # -- one frame -----------------------------------------------------------------------
    def show_frame(self, f: anim.Frame, layout: RowLayout) -> None:
        """Draw the walk at frame ``f``; bytes read follow the row stride of ``layout``."""
        w = self._window
        if w is None:
            return
        v, d, hot = layout.vocab_size, layout.dim, self._hot
        states = anim.strip_states(f, v, hot, STRIP_BINS)
        self.strip_img.setImage(self._lut[states][None, :, :], autoLevels=False)
        self.strip_img.setRect(QRectF(0, 0, v, 1))
        self.strip_cursor.setValue(min(f.current_row, v - 1) + 0.5)
        self.strip_cursor.setVisible(not f.finished)
        # shade the rows multiplied by zero, outline the current one
        shade = np.zeros((w.n_display, 1, 4), np.uint8)
        wasted = (w.ids < f.rows_done) & (w.ids != hot)
        shade[w.positions[wasted]] = self._shade_rgba
        if w.gap is not None and f.rows_done > w.gap[0]:
            shade[w.gap_position] = self._shade_rgba
        self.zoom_shade.setImage(shade, autoLevels=False, levels=(0, 255))
        self.zoom_shade.setRect(QRectF(0, 0, d, w.n_display))
        where = np.nonzero(w.ids == f.current_row)[0]
        if not f.finished and where.size:
            self.zoom_cur.setRect(QRectF(0, w.positions[where[0]], max(f.columns_done, 0.15 * min(d, 4)), 1))
            self.zoom_cur.show()
        else:
            self.zoom_cur.hide()
        labels = []
        for k, i in enumerate(w.ids):
            if i < f.rows_done:
                txt = "→ row added" if i == hot else "→ 0, wasted"
            else:
                txt = "× now" if i == f.current_row else ""
            labels.append((w.positions[k] + 0.5, "", txt))
        if w.gap is not None:  # the rows in the gap are multiplied by 0 too
            first, last = w.gap
            txt = "→ 0, wasted" if f.rows_done > last else ("× now" if f.current_row >= first else "")
            labels.append((w.gap_position + 0.5, "", txt))
        if labels != self._right_labels:
            self._right_labels = labels
            self.zoom_plot.getAxis("right").set_labels(labels)
        self.output.show(f.output_filled)
        self.now_label.setText(self._fitted_now_text(f, v, d, hot))
        pct = 100.0 * f.zero_multiply_adds / f.multiply_adds if f.multiply_adds else 0.0
        bytes_read = f.rows_done * layout.stride + int(f.columns_done * layout.itemsize)
        wd = len(f"{v * d:,}")
        self.counters.setText(
            "<pre style='margin:0'>"
            f"multiply-adds {f.multiply_adds:>{wd},}   × 0: "
            f"<span style='color:{ERROR}'>{f.zero_multiply_adds:,}</span> ({pct:.3f} %)\n"
            f"FLOPs so far  <b>{f.flops:>{wd},}</b>   of 2·V·d = {2 * v * d:,}\n"
            f"work left     {f.work_left:>{wd},}   multiply-adds\n"
            f"bytes read    {bytes_read:>{wd},}   of {v * layout.stride:,}</pre>"
        )

    def _fitted_now_text(self, f: anim.Frame, v: int, d: int, hot: int) -> str:
        """:meth:`_now_text`, without the table's size when the whole line would not fit the label
        (a table of millions of rows in a narrow panel)."""
        text = self._now_text(f, v, d, hot)
        label = self.now_label
        plain = re.sub(r"<[^>]+>", "", text)
        if label.fontMetrics().horizontalAdvance(plain) > label.contentsRect().width():
            text = self._now_text(f, v, d, hot, of_v=False)
        return text

    @staticmethod
    def _now_text(f: anim.Frame, v: int, d: int, hot: int, of_v: bool = True) -> str:
        if f.finished:
            now = f"Done: all {v:,} rows, {v - 1:,} of them × 0"
        elif f.current_row == hot:
            now = (f"Row {hot:,} × <b style='color:{ACCENT}'>1</b>: added to the output "
                   f"({f.columns_done:,} of {d:,})")
        else:
            block = f.current_row - f.recent_start
            # short enough for the panel at 1024 x 700: "Multiplying rows …" lost its "nothing added" there
            what = f"Rows {f.recent_start:,} – {f.current_row:,}" if block > 1 else f"Row {f.current_row:,}"
            now = f"{what}{f' of {v:,}' if of_v else ''} × <b>0</b>: nothing added"
        return now
