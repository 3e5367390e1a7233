"""The embedding matrix as a heatmap: an overview of the whole table and a
zoomed band of rows around the selected token, labelled with their pieces."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from explorer.core.matrix.axis_labels import column_ticks, label_step
from explorer.core.matrix.overview import CODE_STEPS, NAN_CODE, MatrixOverview, RowBand, row_band
from explorer.core.sources.output import STANDALONE_KINDS
from explorer.core.units import format_ordinal
from explorer.state.app_state import AppState
from explorer.state.both_ends import INPUT, OUTPUT
from explorer.ui.common.binding import JobBinding, ShownGate, job_status
from explorer.ui.common.cell_texts import FIT_POINT_SIZES, CellTextLayer
from explorer.ui.common.column_numbers import spaced_column_ticks
from explorer.ui.style import (
    ACCENT,
    DIVERGING,
    EXTRA,
    SPACING,
    TEXT_TOKENS,
    cell_text_colors,
    plot_colors,
    shrinkable,
    style_as,
    style_plot,
)

#: rows either side of the selected one in the zoomed band
BAND_HALF = 16
#: a table this small is shown whole, with its values written in the cells
SMALL_CELLS = 400


def legend_html(fg: str) -> str:
    """The key to the marks: the selected row, the text's rows, added tokens, the band."""
    def mark(color: str, glyph: str, words: str) -> str:
        return f"<span style='color:{color}'>{glyph}</span>&nbsp;{words}"

    marks = [mark(ACCENT, "━", "selected row"), mark(TEXT_TOKENS, "▶ ◀", "rows of your text"),
             mark(EXTRA, "▶", "tokens you added"), mark(ACCENT, "▭", "band shown on the right")]
    return f"<span style='color:{fg}'>" + "&nbsp;&nbsp;&nbsp;".join(marks) + "</span>"


class MatrixView(QWidget):
    """Heatmap of E.

    Signals
    -------
    row_clicked(int)
        The user clicked a row of the table (its token id).
    """

    row_clicked = Signal(int)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._overview: MatrixOverview | None = None
        self._band: RowBand | None = None
        self._band_ticks_key: tuple | None = None  # what the band's row ticks were made for
        self._overview_ticks: list | None = None  # the whole table's column numbers now
        bg, fg = plot_colors()
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addLayout(self._side_bar(state))
        host = QWidget()
        outer.addWidget(host, 1)
        lay = QStackedLayout(host)
        self.empty = QLabel("Open a model to see its embedding matrix (Ctrl+O)")
        style_as(self.empty, "EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(bg)
        self.glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.glw.ci.setSpacing(SPACING * 2)
        lay.addWidget(self.empty)
        lay.addWidget(self.glw)
        self._stack = lay

        self._cmap = pg.colormap.get(DIVERGING)
        self._build_overview(fg)
        self._build_band(bg, fg)
        self._build_key(fg)
        for plot in (self.overview_plot, self.band_plot):
            plot.scene().sigMouseClicked.connect(self._on_scene_clicked)

        self._gate = ShownGate(self, self._synchronize)
        self._output_binding = JobBinding(self._gate, state.jobs.output_overview,
                                          on_result=self._on_output_overview, status=self.side_status)
        state.ends.matrix_side_changed.connect(self._on_ends_matrix_side_changed)
        state.model_changed.connect(self._on_state_model_changed)
        state.overview_changed.connect(self._on_state_overview_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)
        state.extra_tokens_changed.connect(self._on_state_extra_tokens_changed)

    # -- the parts -----------------------------------------------------------------------------
    def _build_overview(self, fg: str) -> None:
        """The whole table, with the selection, the text's rows, added tokens and the band marked."""
        cmap = self._cmap
        self.overview_plot = self.glw.addPlot(row=0, col=0, enableMenu=False)  # no menu: none is built
        self.overview_plot.setTitle("Whole table", color=fg, size="10pt")
        self.overview_plot.invertY(True)
        self.overview_plot.setLabel("left", "token id (row)")
        self.overview_plot.setLabel("bottom", "dimension")
        # the overview comes as colour-map indices from the loader (drawn at once,
        # no float rescale on the GUI thread); NaN is transparent, as in the band
        self.overview_img = pg.ImageItem()
        lut = cmap.getLookupTable(0.0, 1.0, CODE_STEPS, alpha=True)
        self.overview_img.setLookupTable(np.vstack([lut, np.zeros((1, 4), np.uint8)]))
        self.overview_plot.addItem(self.overview_img)
        self.overview_sel = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(ACCENT, width=2))
        self.overview_plot.addItem(self.overview_sel)
        self.overview_text = pg.ScatterPlotItem(symbol="t2", size=10, pen=None, brush=pg.mkBrush(TEXT_TOKENS))
        self.overview_plot.addItem(self.overview_text)
        self.overview_extra = pg.ScatterPlotItem(symbol="t2", size=10, pen=None, brush=pg.mkBrush(EXTRA))
        self.overview_plot.addItem(self.overview_extra)
        self.band_region = pg.LinearRegionItem(orientation="horizontal", movable=False,
                                               brush=pg.mkBrush(0, 163, 108, 40), pen=pg.mkPen(ACCENT, width=1))
        self.overview_plot.addItem(self.band_region)
        style_plot(self.overview_plot)
        shrinkable(self.overview_plot.titleLabel)  # clipped rather than widen the grid past a narrow window
        self.overview_plot.getViewBox().sigResized.connect(self._label_overview_columns)

    def _build_band(self, bg: str, fg: str) -> None:
        """The rows around the selected token, labelled with their pieces."""
        self.band_plot = self.glw.addPlot(row=0, col=1, enableMenu=False)
        # the values over a small band's cells, in the largest font that fits a cell (else none)
        self._cell_texts = CellTextLayer(fit=FIT_POINT_SIZES)
        self.band_plot.addItem(self._cell_texts, ignoreBounds=True)
        self.band_plot.getViewBox().sigResized.connect(self._on_band_resized)
        self.band_plot.setTitle("Rows around the selected token", color=fg, size="10pt")
        self.band_plot.invertY(True)
        self.band_plot.setLabel("bottom", "dimension (column of E)")
        self.band_img = pg.ImageItem()
        self.band_img.setColorMap(self._cmap)
        self.band_plot.addItem(self.band_img)
        self.band_sel = QGraphicsRectItem()
        pen = pg.mkPen(ACCENT, width=3)
        pen.setCosmetic(True)
        self.band_sel.setPen(pen)
        self.band_plot.addItem(self.band_sel)
        self.band_label = pg.TextItem(color=ACCENT, anchor=(0, 0.5), fill=pg.mkBrush(bg))
        label_font = QFont(self.font())  # the application's font: QFont("") fell back to a serif
        label_font.setPointSize(10)
        label_font.setBold(True)
        self.band_label.setFont(label_font)
        self.band_plot.addItem(self.band_label, ignoreBounds=True)
        # the text's other rows: pointed at from the right edge, where the selected one is named
        self.band_marks = pg.ScatterPlotItem(symbol="t3", size=10, pen=None, brush=pg.mkBrush(TEXT_TOKENS))
        self.band_plot.addItem(self.band_marks)
        style_plot(self.band_plot)
        shrinkable(self.band_plot.titleLabel)
        self.glw.ci.layout.setColumnStretchFactor(0, 1)
        self.glw.ci.layout.setColumnStretchFactor(1, 3)

    def _build_key(self, fg: str) -> None:
        """The key to the marks, under the plots, and the colour bar."""
        self.legend = pg.LabelItem(legend_html(fg), size="9pt", justify="left")
        self.legend.setToolTip("What the marks on the two plots mean")
        shrinkable(self.legend)
        self.glw.addItem(self.legend, row=1, col=0, colspan=3)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=self._cmap, interactive=False, width=14)
        self.colorbar.setImageItem([self.band_img])
        self.colorbar.axis.enableAutoSIPrefix(False)
        self.glw.addItem(self.colorbar, row=0, col=2)

    def _side_bar(self, state: AppState) -> QHBoxLayout:
        """Which matrix is drawn: E, or the model's own output matrix."""
        bar = QHBoxLayout()
        bar.setContentsMargins(SPACING, SPACING // 2, SPACING, 0)
        bar.addWidget(QLabel("Matrix:"))
        self.side_combo = QComboBox()
        self.side_combo.addItem("E, the input embedding", INPUT)
        self.side_combo.addItem("W_out, the output matrix", OUTPUT)
        self.side_combo.currentIndexChanged.connect(self._on_side_combo_changed)
        bar.addWidget(self.side_combo)
        self.side_note = QLabel("")
        style_as(self.side_note, "ChipId")
        bar.addWidget(self.side_note)
        self.side_status = job_status()
        bar.addWidget(self.side_status)
        bar.addStretch(1)
        return bar

    def shown_table(self):
        """The matrix drawn: the state's table, or its output matrix."""
        table = self._state.table
        if table is not None and self._state.ends.matrix_side == OUTPUT:
            return table.output_table() or table
        return table

    def _matrix_name(self) -> str:
        return "W_out" if self._state.ends.matrix_side == OUTPUT else "E"

    # -- state --------------------------------------------------------------------------
    def _synchronize(self) -> None:
        """Redraw everything from the state (first show, or shown after being hidden)."""
        self._show_side()
        overview = self._current_overview()
        if overview is None:
            self._show_empty()
            return
        self._draw_overview(overview)
        self._draw_extra()

    def _current_overview(self) -> MatrixOverview | None:
        if self._state.ends.matrix_side == OUTPUT:
            return self._state.jobs.output_overview.value
        return self._state.overview

    def _show_side(self) -> None:
        """The combo and its note follow the model: the output matrix is offered when it is a second one."""
        table, ends = self._state.table, self._state.ends
        item = self.side_combo.model().item(1)
        item.setEnabled(ends.can_show_output)
        self.side_combo.blockSignals(True)
        self.side_combo.setCurrentIndex(1 if ends.matrix_side == OUTPUT else 0)
        self.side_combo.blockSignals(False)
        if table is None:
            note = ""
        elif table.tied is True:
            note = "tied: the output matrix is E itself"
        elif not table.has_output:
            note = "no output matrix in this model" if table.kind not in STANDALONE_KINDS else ""
        else:
            note = "not tied: a second V × d matrix"
        self.side_note.setText(note)
        self.side_combo.setToolTip(table.output_how if table is not None and table.output_how else
                                   "The output matrix turns the last hidden state into logits: h · W_outᵀ")

    def _on_side_combo_changed(self, index: int) -> None:
        self._state.ends.set_matrix_side(self.side_combo.itemData(index))

    def _on_ends_matrix_side_changed(self, _side: str) -> None:
        self._gate.mark_stale()

    def _on_output_overview(self, overview: MatrixOverview) -> None:
        if self._state.ends.matrix_side == OUTPUT:
            self.side_status.setText("")
            self._draw_overview(overview)
            self._draw_extra()

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._show_side)
        self._gate.update(self._show_empty)

    def _on_state_overview_changed(self, overview: MatrixOverview) -> None:
        if self._state.ends.matrix_side == INPUT:
            self._gate.update(self._draw_overview, overview)

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._gate.update(self._update_band)

    def _on_state_tokens_changed(self, _tokens) -> None:
        self._gate.update(self._update_text_marks)

    def _on_state_extra_tokens_changed(self, _ids: list) -> None:
        self._gate.update(self._draw_extra)

    def show_loading(self, message: str | None) -> None:
        """While the first model loads (no table yet): what the load is doing, and how to stop it."""
        if self._state.table is not None:
            return
        self.empty.setText(f"{message}\nEsc or Cancel in the status bar stops it." if message
                           else "Open a model to see its embedding matrix (Ctrl+O)")

    def _show_empty(self) -> None:
        self._overview = None
        self._band = None
        self._band_ticks_key = None
        self.empty.setText("Open a model to see its embedding matrix (Ctrl+O)" if self._state.table is None
                           else "Reading the output matrix…" if self._state.ends.matrix_side == OUTPUT
                           else "Drawing the matrix…")
        if self._current_overview() is None:  # else a new model's, drawn later in this turn: the plots
            # stay (hidden and shown again in one turn, they were laid out again: 8 ms of the biggest
            # table's arrival)
            self._stack.setCurrentWidget(self.empty)

    def _draw_overview(self, overview: MatrixOverview) -> None:
        """Draw the overview the loader computed off the GUI thread (one setImage)."""
        self._overview = overview
        self._band = None
        self._band_ticks_key = None
        table = self.shown_table()
        if table is None:
            return
        self._stack.setCurrentWidget(self.glw)
        v, d = table.vocab_size, table.dim
        lim = overview.limit
        name = self._matrix_name()
        self.overview_img.setImage(overview.codes, levels=(0, NAN_CODE), autoLevels=False)
        self.overview_img.setRect(QRectF(0, 0, d, v))
        self.colorbar.setLevels((-lim, lim))
        self.colorbar.setLabel("right", f"value of {name}")
        self.band_plot.setLabel("bottom", f"dimension (column of {name})")
        self.glw.setToolTip(f"Colours: {name}[i, j] on a diverging map centred on 0, clipped at ±{lim:.3g} "
                            f"(99.5th percentile of |{name}|). Click a row to select its token; "
                            "drag to pan, wheel to zoom.")
        small = v <= 2 * BAND_HALF + 1
        self.overview_plot.setVisible(not small)
        self.overview_plot.setTitle(f"Whole table: {v:,} × {d:,}" if name == "E" else
                                    f"Whole output matrix: {v:,} × {d:,}", size="10pt")
        step = overview.row_step
        rows = "token id (row)" if step == 1 else f"token id (every {format_ordinal(step)} row)"
        self.overview_plot.setLabel("left", rows)
        cols = "dimension" if overview.col_step == 1 else f"dimension (every {format_ordinal(overview.col_step)})"
        self.overview_plot.setLabel("bottom", cols)
        self.overview_plot.setLimits(xMin=-d * 0.05, xMax=d * 1.05, yMin=-v * 0.05, yMax=v * 1.05)
        # room on the left for the marks of the text's rows (not behind the axis)
        self.overview_plot.setRange(xRange=(-d * 0.04, d), yRange=(0, v), padding=0.02)
        self._label_overview_columns()
        self._update_text_marks()
        self._update_band()

    def _draw_extra(self) -> None:
        table = self._state.table
        if table is None:
            return
        ids = self._state.extra_ids
        self.overview_extra.setData(x=[-table.dim * 0.025] * len(ids), y=[i + 0.5 for i in ids])

    # -- drawing --------------------------------------------------------------------------
    def _update_text_marks(self) -> None:
        table = self._state.table
        if table is None or self._overview is None:
            return
        ids = self._state.tokenized.distinct_ids(include_special=True)
        self.overview_text.setData(x=[-table.dim * 0.025] * len(ids), y=[i + 0.5 for i in ids])
        self._draw_band_marks()

    def _update_band(self) -> None:
        table = self.shown_table()
        if table is None or self._overview is None:
            return
        sel = self._state.selected_id
        centre = sel if sel >= 0 else 0
        band = self._band
        if band is None or not (band.start + 3 <= centre < band.stop - 3) or sel < 0:
            band = row_band(table, centre, BAND_HALF)
            self._band = band
            lim = self._overview.limit
            self.band_img.setImage(band.image, levels=(-lim, lim), autoLevels=False)
            self.band_img.setRect(QRectF(0, band.start, table.dim, band.image.shape[0]))
            self._label_columns(table.dim)
            self.band_plot.setRange(xRange=(0, table.dim * 1.25), yRange=(band.start, band.stop), padding=0.01)
            self._write_cells(band)
        self._label_band_rows(band)  # thinned labels follow the selected row
        self.band_region.setRegion((band.start, band.stop))
        if sel >= 0:
            self.overview_sel.setPos(sel + 0.5)
            self.overview_sel.show()
            self.band_sel.setRect(QRectF(0, sel, table.dim, 1))
            self.band_sel.show()
            self.band_label.setText(f" {table.shown_piece(sel).short(9)} ")
            self.band_label.setPos(table.dim * 1.01, sel + 0.5)
            self.band_label.show()
        else:
            self.overview_sel.hide()
            self.band_sel.hide()
            self.band_label.hide()
        self._draw_band_marks()

    def _draw_band_marks(self) -> None:
        band, table = self._band, self._state.table
        if band is None or table is None:
            return
        sel = self._state.selected_id
        ids = [i for i in self._state.tokenized.counts if band.start <= i < band.stop and i != sel]
        self.band_marks.setData(x=[table.dim * 1.015] * len(ids), y=[i + 0.5 for i in ids])

    def _label_band_rows(self, band: RowBand) -> None:
        """One label per row while rows are tall enough for one, else every
        k-th row counted from the selected one (so it always has its label);
        the rest keep a tick without text."""
        table = self._state.table
        if table is None:
            return
        rows = max(1, band.stop - band.start)
        pitch = self.band_plot.getViewBox().height() / rows
        line = QFontMetrics(self.band_plot.getAxis("left").style.get("tickFont") or QFont()).height()
        step = label_step(pitch, line, gap=1) if pitch > 0 else 1
        anchor = self._state.selected_id if band.start <= self._state.selected_id < band.stop else band.start
        if step == 1:
            anchor = band.start  # every row labelled: the selection does not change the ticks
        key = (band.start, band.stop, step, anchor)
        if key == self._band_ticks_key:
            return  # a click within the band: the same ticks as drawn
        self._band_ticks_key = key
        major, minor = [], []
        for i in range(band.start, band.stop):
            if (i - anchor) % step:
                minor.append((i + 0.5, ""))
                continue
            piece = table.shown_piece(i).short(14)
            major.append((i + 0.5, f"{i:,}" if piece == str(i) else f"{piece}  {i:,}"))
        self.band_plot.getAxis("left").setTicks([major, minor])

    def _on_band_resized(self, _vb=None) -> None:
        if self._band is not None:
            self._label_band_rows(self._band)

    def _label_columns(self, dim: int) -> None:
        """Integer column ticks at cell centres for narrow tables; round numbers up to
        ``dim`` for wide ones (the axis runs on past the band, where no column is)."""
        axis = self.band_plot.getAxis("bottom")
        if dim <= 40:
            step = 1 if dim <= 16 else 5
            axis.setTicks([[(j + 0.5, str(j)) for j in range(0, dim, step)], []])
        else:
            axis.setTicks([[(j, f"{j:,}") for j in column_ticks(dim)], []])

    def _label_overview_columns(self, _vb=None) -> None:
        """Round column numbers under the whole table, as many as fit its width with room
        between them (pyqtgraph's own let 100, 200 and 300 touch in a narrow window)."""
        table = self.shown_table()
        if table is None:
            return
        axis = self.overview_plot.getAxis("bottom")
        lo, hi = axis.range
        width = self.overview_plot.getViewBox().width()
        if hi <= lo or width <= 0:
            return
        ticks = spaced_column_ticks(axis, table.dim, width / (hi - lo))
        if ticks != self._overview_ticks:
            self._overview_ticks = ticks
            axis.setTicks([ticks, []])

    def _write_cells(self, band: RowBand) -> None:
        """Each cell's value over it when the band is small, all painted by one layer (making 48
        text items, the first time a narrow table's band was drawn, stalled the window 250-400 ms)."""
        n = band.image.size if band.image.size <= SMALL_CELLS else 0
        if not n:
            self._cell_texts.clear()
            return
        lim = self._overview.limit if self._overview else 1.0
        # the text colour that reads on each cell's own colour (either palette; NaN: the background)
        colors = cell_text_colors(band.image, (-lim, lim), self._cmap)
        width = band.image.shape[1]
        self._cell_texts.set_cells([(k % width + 0.5, band.start + k // width + 0.5,
                                     f"{band.image.flat[k]:+.2f}", colors[k]) for k in range(n)])

    def cell_texts(self) -> list[tuple[float, float, str]]:
        """(column, row, text) of each value written over the band's cells (none for a big band)."""
        return [(x, y, t) for x, y, t, _ in self._cell_texts.cells()]

    def cell_texts_layer(self) -> CellTextLayer:
        """The layer that paints them (it writes none while they would not fit their cells)."""
        return self._cell_texts

    def _on_scene_clicked(self, event) -> None:
        table = self._state.table
        if table is None or event.button() != Qt.LeftButton:
            return
        for plot in (self.band_plot, self.overview_plot):
            if not plot.isVisible():
                continue
            vb = plot.getViewBox()
            if vb.sceneBoundingRect().contains(event.scenePos()):
                p = vb.mapSceneToView(event.scenePos())
                row = int(np.floor(p.y()))
                if 0 <= row < table.vocab_size and 0 <= p.x() <= table.dim:
                    self.row_clicked.emit(row)
                return

    # -- for tests and export ------------------------------------------------------------
    def highlighted_row(self) -> int | None:
        if not self.band_sel.isVisible():
            return None
        return int(round(self.band_sel.rect().top()))
