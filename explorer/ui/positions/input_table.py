"""Per token of the text: its position, and the norm of each part of its input vector."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from ...core.input_layer import InputVectors, TextInputs
from ..style import ERROR, mono_font

__all__ = ["InputTable"]

#: rows of the table at most (the text page says when more were left out)
MAX_ROWS = 512


class InputTable(QTableWidget):
    """Signals
    -------
    position_clicked(int)
        The token at this position of the text was clicked.
    """

    position_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(0, 0, parent)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.verticalHeader().hide()
        self.setAlternatingRowColors(True)
        self.setMinimumHeight(120)
        self._row_of: dict[int, int] = {}
        self.cellClicked.connect(self._on_cell_clicked)

    def set_inputs(self, inputs: TextInputs | None, tokens, piece_of) -> None:
        """Fill from ``inputs`` for ``tokens`` (the text's Token objects);
        ``piece_of(token)`` gives the text shown for a token."""
        self.clearContents()
        self._row_of = {}
        if inputs is None:
            self.setRowCount(0)
            self.setColumnCount(0)
            return
        v = inputs.vectors
        parts = _parts(v)
        headers = ["#", "token", "position row" if inputs.layer.positions is not None else "position"] + \
            [f"‖{name}‖" for name, _ in parts]
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        index = {int(p): i for i, p in enumerate(v.positions)}
        norms = [(name, InputVectors.norms(part)) for name, part in parts]
        past, no_row = set(inputs.past_limit), set(inputs.no_row)
        shown = list(tokens)[:MAX_ROWS]
        self.setRowCount(len(shown))
        font = mono_font()
        error = QColor(ERROR)
        for r, tok in enumerate(shown):
            self._row_of[tok.position] = r
            i = index.get(tok.position)
            # the row of the position table the token reads (or would read, past its end)
            pos_id = tok.position + (inputs.layer.position_offset if inputs.layer.positions is not None else 0)
            cells = [str(tok.position), piece_of(tok), f"{pos_id:,}"]
            if i is not None:
                cells += [f"{vals[i]:.3f}" for _, vals in norms]
            elif tok.position in past:
                cells += ["past the position table"] + [""] * (len(norms) - 1)
            elif tok.position in no_row:
                cells += ["no row in the table"] + [""] * (len(norms) - 1)
            else:
                cells += ["not computed"] + [""] * (len(norms) - 1)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c != 1:
                    item.setFont(font)
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter if i is not None or c < 3
                                          else Qt.AlignLeft | Qt.AlignVCenter)
                if i is None and (tok.position in past or tok.position in no_row):
                    item.setForeground(error)
                self.setItem(r, c, item)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.Stretch)

    def select_position(self, position: int) -> None:
        """Mirror the selected token (no signal)."""
        row = self._row_of.get(position)
        self.blockSignals(True)
        if row is None:
            self.clearSelection()
        else:
            self.selectRow(row)
            self.scrollToItem(self.item(row, 0))
        self.blockSignals(False)

    def _on_cell_clicked(self, row: int, _col: int) -> None:
        for pos, r in self._row_of.items():
            if r == row:
                self.position_clicked.emit(pos)
                return


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
