"""The selected row: its values, size, byte offset, neighbours and, for a word
split into pieces, the mean-pooled vector."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import user_message
from explorer.core.geometry.nearest import Neighbor
from explorer.core.geometry.neighbors import NeighborList
from explorer.core.geometry.vectors import vector_norm
from explorer.core.matrix.rows import pooled_word, row_csv, row_facts
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate
from explorer.ui.common.integer_axis import IntegerAxis
from explorer.ui.common.roles import ALIGNMENT, DISPLAY, RIGHT
from explorer.ui.common.rows_in_view import Cell, FilledRowsModel, RowsInView
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.inspector.output_side import OutputSide
from explorer.ui.style import ACCENT, SPACING, mono_font, plot_colors, style_as, style_plot

#: characters of the selected piece in the title (a typed word can be thousands long)
TITLE_CHARS = 24


def _compact_rows(table: QTableView) -> None:
    """Rows as tall as a line of text (the style's default fits only three neighbours)."""
    height = table.fontMetrics().height() + 6
    table.verticalHeader().setMinimumSectionSize(height)
    table.verticalHeader().setDefaultSectionSize(height)


class RowValuesModel(FilledRowsModel):
    """Index and value of each column of the selected row (each row made when first in view)."""

    HEADERS = ["column j", "E[i, j]"]

    def __init__(self, parent=None):
        super().__init__(parent)
        self._values = np.zeros(0, np.float32)
        self.set_rows(self.HEADERS, 0, self._row_items)

    def set_values(self, values: np.ndarray) -> None:
        self._values = np.asarray(values, np.float32)
        if len(self._values) == self.rowCount():  # another row of the same table: its rows emptied
            self.empty_rows(self._row_items)
        else:
            self.set_rows(self.HEADERS, len(self._values), self._row_items)

    def _row_items(self, row: int) -> list[Cell]:
        return [{DISPLAY: f"{row:,}", ALIGNMENT: RIGHT}, {DISPLAY: f"{self._values[row]:+.6f}", ALIGNMENT: RIGHT}]


class RowInspector(QWidget):
    """Facts about the selected row.

    Signals
    -------
    neighbor_clicked(int)
        The user clicked a neighbour (its token id).
    """

    neighbor_clicked = Signal(int)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._row: np.ndarray | None = None
        self._neighbors: list[Neighbor] = []
        self._pooled: np.ndarray | None = None
        self.setMinimumWidth(320)
        self.setMinimumHeight(640)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)

        self.title = QLabel("No token selected")
        style_as(self.title, "InspectorTitle")
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.subtitle = WrapLabel("Click a token to see its row of the embedding matrix")
        style_as(self.subtitle, "ChipId")
        outer.addWidget(self.title)
        outer.addWidget(self.subtitle)
        outer.addLayout(self._build_facts())
        self.output_side = OutputSide(state)
        self.output_side.token_clicked.connect(self.neighbor_clicked)
        outer.addWidget(self.output_side)

        split = QSplitter(Qt.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self._build_plot())
        split.addWidget(self._build_neighbours())
        split.addWidget(self._build_values())
        split.setStretchFactor(1, 2)
        split.setSizes([150, 320, 170])
        outer.addWidget(split, 1)

        self._gate = ShownGate(self, self._synchronize)
        self._neighbor_binding = JobBinding(self._gate, state.jobs.neighbors, on_reset=self._on_neighbors_reset,
                                            on_result=self._on_neighbors_result, on_error=self._on_neighbors_failed)
        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)

    # -- the parts -----------------------------------------------------------------------------
    def _build_facts(self) -> QFormLayout:
        """Token id, norm, range, byte offset, stride and the address formula."""
        form = QFormLayout()
        form.setHorizontalSpacing(SPACING * 2)
        form.setVerticalSpacing(2)
        form.setLabelAlignment(Qt.AlignLeft)
        self.facts: dict[str, QLabel] = {}
        tips = {
            "id": "Row index i of E (the token id)",
            "norm": "L2 norm ‖E[i]‖ = sqrt(Σ_j E[i,j]²)",
            "range": "Smallest and largest value in the row",
            "offset": "Byte offset of the row from the start of the table: i × d × sizeof(dtype)",
            "stride": "Bytes from one row to the next: d × sizeof(dtype) as stored",
            "address": "Address of the row in memory: base + offset",
        }
        labels = {"id": "Token id", "norm": "Norm", "range": "Min / max", "offset": "Byte offset",
                  "stride": "Row stride", "address": "Formula"}
        for key, text in labels.items():
            lab = QLabel()
            style_as(lab, "FactValue")
            lab.setFont(mono_font())
            lab.setTextInteractionFlags(Qt.TextSelectableByMouse)
            lab.setToolTip(tips[key])
            name = QLabel(text)
            name.setToolTip(tips[key])
            form.addRow(name, lab)
            self.facts[key] = lab
        return form

    def _build_plot(self) -> pg.PlotWidget:
        """The row's values as bars over the column index."""
        bg, fg = plot_colors()
        self.plot = pg.PlotWidget(background=bg, axisItems={"bottom": IntegerAxis("bottom")}, enableMenu=False)
        self.plot.setMinimumHeight(140)
        pi = self.plot.getPlotItem()
        pi.setTitle("Values of the row", color=fg, size="9pt")
        pi.setLabel("bottom", "column j")
        pi.setLabel("left", "E[i, j]")
        style_plot(pi)
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.8, brush=pg.mkBrush(ACCENT), pen=None)
        self.curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=1))
        pi.addItem(self.bars)
        pi.addItem(self.curve)
        pi.addLine(y=0, pen=pg.mkPen(fg, width=0.5))
        return self.plot

    def _build_neighbours(self) -> QWidget:
        """The nearest rows by cosine (click one to select it) and the pooled word."""
        nb_box = QWidget()
        nb_lay = QVBoxLayout(nb_box)
        nb_lay.setContentsMargins(0, 0, 0, 0)
        nb_lay.setSpacing(4)
        self.nb_title = WrapLabel("Nearest neighbours by cosine")
        self.nb_title.setToolTip("cos(a, b) = a·b / (‖a‖‖b‖) over the whole vocabulary, the token itself excluded")
        nb_lay.addWidget(self.nb_title)
        self.neighbors = QTableWidget(0, 3)
        self.neighbors.setHorizontalHeaderLabels(["piece", "id", "cosine"])
        self.neighbors.verticalHeader().setVisible(False)
        _compact_rows(self.neighbors)
        self.neighbors.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.neighbors.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.neighbors.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.neighbors.setToolTip("Click a neighbour to select it")
        self.neighbors.cellClicked.connect(self._on_neighbors_cell_clicked)
        rows = self.neighbors.verticalHeader().defaultSectionSize()
        self.neighbors.setMinimumHeight(self.neighbors.horizontalHeader().sizeHint().height() + 5 * rows + 4)
        nb_lay.addWidget(self.neighbors)
        self.pooled = WrapLabel()
        self.pooled.setToolTip("A word split into several pieces has no row of its own; "
                               "the mean of its pieces' rows is a common single vector for it")
        nb_lay.addWidget(self.pooled)
        return nb_box

    def _build_values(self) -> QWidget:
        """The row's values as a table, with Copy as CSV."""
        tbl_box = QWidget()
        tl = QVBoxLayout(tbl_box)
        tl.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(QLabel("Row values"))
        head.addStretch(1)
        self.copy_btn = QPushButton("Copy as CSV")
        self.copy_btn.setToolTip("Copy the selected row as CSV (Ctrl+Shift+C)")
        self.copy_btn.clicked.connect(self.copy_row_csv)
        head.addWidget(self.copy_btn)
        tl.addLayout(head)
        self.values_model = RowValuesModel(self)
        self.values = QTableView()
        self.values.setModel(self.values_model)
        self.values.verticalHeader().setVisible(False)
        _compact_rows(self.values)
        self.values.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.values.setFont(mono_font())
        tl.addWidget(self.values)
        self._values_in_view = RowsInView(self.values)
        return tbl_box

    # -- state ---------------------------------------------------------------------------
    def _synchronize(self) -> None:
        """Everything from the state (the view was hidden, or is shown for the first time)."""
        self._show_selection()
        value = self._state.jobs.neighbors.value
        if value is not None:
            self._on_neighbors_result(value)

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._clear)

    def _on_state_tokens_changed(self, _tokenized) -> None:
        self._gate.update(self._update_pooled)

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._gate.update(self._show_selection)

    def _show_selection(self) -> None:
        table, token_id = self._state.table, self._state.selected_id
        if table is None or token_id < 0:
            self._clear()
            self._explain_bad_token()
            return
        facts = row_facts(table, token_id)
        self._row = facts.values
        piece = table.shown_piece(token_id)
        self.title.setText(piece.short(TITLE_CHARS))
        self.title.setToolTip(piece.describe() if piece.decoded else "")
        self.subtitle.setText(f"Row {token_id:,} of {table.vocab_size:,} · {table.dim:,} values · {table.dtype}")
        self.facts["id"].setText(f"{token_id:,}")
        nonfinite = f"  ({facts.nonfinite:,} non-finite)" if facts.nonfinite else ""
        self.facts["norm"].setText(f"{facts.norm:.4f}" + nonfinite)
        self.facts["range"].setText(f"{facts.vmin:+.4f} / {facts.vmax:+.4f}" if facts.nonfinite < table.dim else "n/a")
        self.facts["offset"].setText(f"{facts.offset:,} B = 0x{facts.offset:X}")
        item = facts.itemsize
        item_txt = f"{item:g}" if item == int(item) else f"{item:.4f}".rstrip("0")
        self.facts["stride"].setText(f"{facts.stride:,} B = {table.dim:,} × {item_txt} B ({table.dtype})")
        self.facts["address"].setText(f"base + {token_id:,} × {facts.stride:,}")
        self._draw_values(facts.values)
        self.values_model.set_values(facts.values)
        self._update_pooled()
        if self._state.jobs.neighbors.value is None:
            self._on_neighbors_reset()

    def _explain_bad_token(self) -> None:
        """The selected chip names no row: say why instead of "No token selected"."""
        table, tokenized, pos = self._state.table, self._state.tokenized, self._state.selected_position
        if table is None or not 0 <= pos < len(tokenized.tokens):
            return
        token = tokenized.tokens[pos]
        if token.ok:  # a position whose row is only being installed
            return
        piece = tokenized.shown_piece(token)
        self.title.setText(piece.short(TITLE_CHARS))
        self.title.setToolTip(piece.describe() if piece.decoded else "")
        self.subtitle.setText(f"Token {pos + 1:,} of the text has no row: {tokenized.problem_message(token)}.")

    def _on_neighbors_reset(self) -> None:
        self._fill_neighbors([])
        busy = self._state.selected_id >= 0 and self._state.table is not None
        self.nb_title.setText("Nearest neighbours by cosine (searching…)" if busy else "Nearest neighbours by cosine")

    def _on_neighbors_result(self, result: NeighborList) -> None:
        table = self._state.table
        if table is None or result.token_id != self._state.selected_id:
            return
        self._fill_neighbors(result.neighbors)
        self.nb_title.setText(f"Nearest neighbours by cosine ({result.rows_searched:,} rows searched)")

    def _on_neighbors_failed(self, exc: BaseException) -> None:
        self._fill_neighbors([])
        self.nb_title.setText(f"Nearest neighbours: the search failed ({user_message(exc)})")

    def _fill_neighbors(self, neighbors) -> None:
        table = self._state.table
        self._neighbors = list(neighbors)
        self.neighbors.clearSelection()  # a highlight would point at a row of the old list
        self.neighbors.setRowCount(len(self._neighbors))
        for r, nb in enumerate(self._neighbors):
            piece = table.shown_piece(nb.id)
            cells = [piece.text, f"{nb.id:,}", f"{nb.cosine:+.3f}"]
            for c, text in enumerate(cells):
                it = QTableWidgetItem(text)
                if c:
                    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    it.setFont(mono_font())
                elif piece.decoded:
                    it.setToolTip(piece.describe())
                self.neighbors.setItem(r, c, it)

    def neighbor_ids(self) -> list[int]:
        return [n.id for n in self._neighbors]

    def _on_neighbors_cell_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._neighbors):
            self.neighbor_clicked.emit(self._neighbors[row].id)

    # -- drawing ---------------------------------------------------------------------------
    def _draw_values(self, row: np.ndarray) -> None:
        x = np.arange(len(row))
        clean = np.where(np.isfinite(row), row, 0.0)
        if len(row) <= 256:
            self.curve.setData([], [])
            self.bars.setOpts(x=x, height=clean, width=0.8)
        else:
            self.bars.setOpts(x=[], height=[], width=0.8)
            self.curve.setData(x, clean)
        self.plot.getPlotItem().enableAutoRange()

    def _frame_empty_row(self) -> None:
        """With no row drawn, the axes span the columns of the table loaded (none: one column), not
        the range of the last row shown, which may belong to another model."""
        table = self._state.table
        columns = table.dim if table is not None else 1
        pi = self.plot.getPlotItem()
        pi.disableAutoRange()
        pi.setXRange(-0.5, columns - 0.5, padding=0.02)
        pi.setYRange(-1.0, 1.0, padding=0)

    def _update_pooled(self) -> None:
        table = self._state.table
        tokenized = self._state.tokenized
        word = (pooled_word(table, tokenized.text, tokenized.word_pieces(self._state.selected_position))
                if table is not None else None)
        self._pooled = word.vector if word is not None else None
        if word is None:
            self.pooled.setText("")
            return
        pieces = " + ".join(html.escape(tokenized.shown_piece(t).text, quote=False) for t in word.pieces)
        first = ", ".join(f"{v:+.3f}" for v in word.vector[:4])
        norm = vector_norm(word.vector)
        self.pooled.setText(
            f"<b>“{html.escape(word.text, quote=False)}”</b> is split into {len(word.pieces)} pieces ({pieces}); "
            f"it has no row of its own. Mean of their rows: norm {norm:.4f}, [{first}, …]"
        )

    def pooled_vector(self) -> np.ndarray | None:
        return self._pooled

    def _clear(self) -> None:
        self._row = None
        self.title.setText("No token selected")
        self.title.setToolTip("")
        self.subtitle.setText("Click a token to see its row of the embedding matrix")
        for lab in self.facts.values():
            lab.setText("–")
        self.values_model.set_values(np.zeros(0, np.float32))
        self.bars.setOpts(x=[], height=[], width=0.8)
        self.curve.setData([], [])
        self._frame_empty_row()
        self.neighbors.setRowCount(0)
        self._neighbors = []
        self.nb_title.setText("Nearest neighbours by cosine")
        self.pooled.setText("")

    def copy_row_csv(self) -> str:
        """Copy the selected row as CSV (token id, piece, then the values)."""
        table, tid = self._state.table, self._state.selected_id
        if table is None or tid < 0 or self._row is None:
            return ""
        text = row_csv(tid, table.piece(tid), self._row)
        QGuiApplication.clipboard().setText(text)
        return text
