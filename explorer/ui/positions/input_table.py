"""Per token of the text: its position, and the norm of each part of its input vector.

The rows' texts are worked out at once (a text of 512 tokens at most), and the
table's items are made when their rows come into view
(:mod:`explorer.ui.common.rows_in_view`): filling a QTableWidget with its
4,000 items took about 150 ms on the GUI thread, and a Python model was
asked for every painted cell's roles, each call a wait for the GIL while a
worker ran Python."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from explorer.core.input_layer import InputVectors, TextInputs
from explorer.ui.common.roles import ALIGNMENT, DISPLAY, FONT, FOREGROUND, LEFT, RIGHT
from explorer.ui.common.rows_in_view import Cell, FilledRowsModel, RowsInView
from explorer.ui.style import ERROR, SPACING, mono_font

__all__ = ["InputTable", "InputTableModel"]

#: rows of the table at most (the text page says when more were left out)
MAX_ROWS = 512


class InputTableModel(FilledRowsModel):
    """Rows: the text's tokens; columns: #, token, position, then one norm per part."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._headers: list[str] = []
        self._positions: list[int] = []  # row -> the token's position in the text
        self._cells: list[tuple[str, ...]] = []  # row -> the text of each column
        self._flagged: list[bool] = []  # row -> no vector, for a reason shown in the error colour
        self._font = mono_font()
        self._error = QColor(ERROR)

    def set_inputs(self, inputs: TextInputs | None, tokens, piece_of) -> None:
        self._headers, self._positions, self._cells, self._flagged = [], [], [], []
        if inputs is not None:
            v = inputs.vectors
            parts = _parts(v)
            layer = inputs.layer
            offset = layer.position_offset if layer.positions is not None else 0
            self._headers = ["#", "token", "position row" if layer.positions is not None else "position"] + \
                [f"‖{name}‖" for name, _ in parts]
            norms = [InputVectors.norms(part) for _, part in parts]
            where = {int(p): i for i, p in enumerate(v.positions)}
            past, no_row = set(inputs.past_limit), set(inputs.no_row)
            blank = ("",) * (len(norms) - 1)
            for tok in list(tokens)[:MAX_ROWS]:
                # the row of the position table the token reads (or would read, past its end)
                head = (str(tok.position), piece_of(tok), f"{tok.position + offset:,}")
                i = where.get(tok.position)
                if i is not None:
                    rest = tuple(f"{n[i]:.3f}" for n in norms)
                elif tok.position in past:
                    rest = ("past the position table",) + blank
                elif tok.position in no_row:
                    rest = ("no row in the table",) + blank
                else:
                    rest = ("not computed",) + blank
                self._positions.append(tok.position)
                self._cells.append(head + rest)
                self._flagged.append(i is None and (tok.position in past or tok.position in no_row))
        self.set_rows(self._headers, len(self._cells), self._row_items)

    def _row_items(self, row: int) -> list[Cell]:
        texts, flagged = self._cells[row], self._flagged[row]
        cells: list[Cell] = []
        for c, text in enumerate(texts):
            cell: Cell = {DISPLAY: text, ALIGNMENT: LEFT if c == 1 or (c >= 3 and not text[:1].isdigit()) else RIGHT}
            if c != 1:
                cell[FONT] = self._font
            if flagged:
                cell[FOREGROUND] = self._error
            cells.append(cell)
        return cells

    @property
    def headers(self) -> list[str]:
        return list(self._headers)

    def widest_reason(self) -> str:
        """The longest text of a row without a vector ("" when every row has one)."""
        return max((cells[3] for cells, f in zip(self._cells, self._flagged) if f), key=len, default="")

    def position_at(self, row: int) -> int:
        return self._positions[row]

    def row_of(self, position: int) -> int | None:
        # positions are the rows' order: token k of the text is row k
        return position if 0 <= position < len(self._positions) and self._positions[position] == position else None


class InputTable(QTableView):
    """Signals
    -------
    position_clicked(int)
        The token at this position of the text was clicked.
    """

    position_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = InputTableModel(self)
        self.setModel(self.model_)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.verticalHeader().hide()
        self.setAlternatingRowColors(True)
        self.setMinimumHeight(120)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        self.clicked.connect(self._on_clicked)
        self._rows_in_view = RowsInView(self)

    def set_inputs(self, inputs: TextInputs | None, tokens, piece_of) -> None:
        """Show ``inputs`` for ``tokens`` (the text's Token objects);
        ``piece_of(token)`` gives the text shown for a token."""
        self.model_.set_inputs(inputs, tokens, piece_of)
        self._size_columns()

    def _size_columns(self) -> None:
        """Widths from the headers and the widest number a column holds, not from
        reading every cell (Qt's ResizeToContents reads each cell several times
        over: a second for 500 tokens)."""
        headers = self.model_.headers
        if not headers:
            return
        header = self.horizontalHeader()
        bold = QFontMetrics(header.font())
        mono = QFontMetrics(mono_font())
        reason = self.model_.widest_reason()
        pad = 2 * SPACING
        for c, title in enumerate(headers):
            if c == 1:
                continue
            sample = "00000" if c == 0 else "00,000" if c == 2 else "0,000.000"
            width = max(bold.horizontalAdvance(title), mono.horizontalAdvance(sample))
            if c == 3 and reason:
                width = max(width, mono.horizontalAdvance(reason))
            header.resizeSection(c, width + pad)
        header.setSectionResizeMode(1, QHeaderView.Stretch)

    def cell_text(self, row: int, column: int) -> str:
        """The text the table shows in a cell (its row made now if it was not in view yet)."""
        self.model_.fill(row, row)
        return self.model_.data(self.model_.index(row, column))

    def select_position(self, position: int) -> None:
        """Mirror the selected token (no signal)."""
        row = self.model_.row_of(position)
        if row is None:
            self.clearSelection()
            return
        self.selectRow(row)
        self.scrollTo(self.model_.index(row, 0))

    def _on_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.position_clicked.emit(self.model_.position_at(index.row()))


def _parts(v: InputVectors) -> list[tuple[str, np.ndarray]]:
    """(name, array) of each part the model has, in the order it adds them."""
    out = [("token row" if v.scale == 1.0 else f"token row × {v.scale:.1f}", v.token_rows)]
    if v.position_rows is not None:
        out.append(("position row", v.position_rows))
    if v.type_rows is not None:
        out.append(("type row", v.type_rows))
    if v.position_rows is not None or v.type_rows is not None:
        out.append(("sum", v.sums))
    if v.normed is not None:
        out.append(("LayerNorm", v.normed))
    return out
