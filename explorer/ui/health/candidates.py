"""The ranked table of under-trained candidates: Qt's own model over the
report's ranking, its rows filled as they come into view
(:mod:`explorer.ui.common.rows_in_view`), and the table widget."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelectionModel, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from explorer.core.health import CATEGORY_LABELS, Flag, HealthReport
from explorer.core.health.text import format_number
from explorer.core.health.verify import VerificationResult
from explorer.ui.common.roles import ALIGNMENT, DECORATION, DISPLAY, FONT, FOREGROUND, LEFT, RIGHT, TOOLTIP
from explorer.ui.common.rows_in_view import Cell, FilledRowsModel, RowsInView
from explorer.ui.style import ERROR, HEALTH_CATEGORY_COLORS, mono_font

__all__ = ["CandidateModel", "CandidateTable", "MIN_ROWS_SHOWN", "MAX_ROWS_SHOWN"]

#: rows listed: every flagged row, at least this many, at most MAX_ROWS_SHOWN
MIN_ROWS_SHOWN = 200
MAX_ROWS_SHOWN = 10_000

_NUMERIC = {"#", "id", "norm", "score", "in corpus", "repeat P"}


class CandidateModel(FilledRowsModel):
    """The most under-trained rows of a report, best first (each row made when first in view)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._report: HealthReport | None = None
        self._piece_of = None
        self._rows = 0
        self._ids = np.empty(0, np.int64)  # the report's ranking of reachable tokens
        self.columns: list[str] = []
        self._bold = QFont()
        self._bold.setBold(True)
        self._flag_color = QColor(ERROR)
        self._swatches = {name: QColor(c) for name, c in HEALTH_CATEGORY_COLORS.items()}
        self._verified: VerificationResult | None = None

    @property
    def vocab_size(self) -> int:
        """Rows of the reported table (0 without a report)."""
        return len(self._report.flags) if self._report is not None else 0

    def set_report(self, report: HealthReport | None, piece_of=None) -> None:
        self._report, self._piece_of = report, piece_of
        self._ids = report.ranked if report is not None else np.empty(0, np.int64)
        self._verified = None
        if report is None:
            self._rows, self.columns = 0, []
        else:
            wanted = max(MIN_ROWS_SHOWN, len(report.candidates), min(report.flagged_count, MAX_ROWS_SHOWN))
            self._rows = min(len(self._ids), wanted, MAX_ROWS_SHOWN)
            self.columns = ["#", "piece", "id", "category", "norm", "score"]
            if report.corpus_counts is not None:
                self.columns.append("in corpus")
        self.set_rows(self.columns, self._rows, self._row_items)

    def set_verification(self, result: VerificationResult | None) -> None:
        """Show what the model said (a "repeat P" column), or nothing."""
        if self._report is None:
            return
        self._verified = result
        if result is None and "repeat P" in self.columns:
            self.columns.remove("repeat P")
        elif result is not None and "repeat P" not in self.columns:
            self.columns.insert(self.columns.index("score") + 1, "repeat P")
        self.set_rows(self.columns, self._rows, self._row_items)

    def token_id(self, row: int) -> int:
        return int(self._ids[row]) if self._report is not None and 0 <= row < self._rows else -1

    def row_of(self, token_id: int) -> int:
        """The table row of ``token_id``, or -1 when it is not listed."""
        if self._report is None:
            return -1
        hit = np.nonzero(self._ids[: self._rows] == token_id)[0]
        return int(hit[0]) if len(hit) else -1

    def _row_items(self, row: int) -> list[Cell]:
        r, i = self._report, int(self._ids[row])
        cells: list[Cell] = []
        for col, text in zip(self.columns, self._row_cells(row)):
            cell: Cell = {DISPLAY: text, ALIGNMENT: RIGHT if col in _NUMERIC else LEFT}
            if col == "category":
                cell[DECORATION] = self._swatches[r.category_of(i)]
                cell[TOOLTIP] = text  # whole where the narrow column elides it
            cells.append(cell)
        if r.flags[i] & Flag.UNDER_TRAINED:
            flags = ", ".join(n.replace("_", " ") for n in r.candidate(row, piece="").flags)
            cells[self.columns.index("#")].update({FOREGROUND: self._flag_color, FONT: self._bold,
                                                   TOOLTIP: f"flagged: {flags}"})
        return cells

    def _row_cells(self, row: int) -> list[str]:
        r = self._report
        i = int(self._ids[row])
        out = []
        for col in self.columns:
            if col == "#":
                out.append(f"{row + 1:,}")
            elif col == "piece":
                out.append(self._piece_of(i) if self._piece_of else str(i))
            elif col == "id":
                out.append(f"{i:,}")
            elif col == "category":
                out.append(CATEGORY_LABELS[r.category_of(i)])
            elif col == "norm":
                out.append(format_number(r.norms[i]))
            elif col == "score":
                out.append(format_number(r.scores[i]))
            elif col == "repeat P":
                v = self._verified.of(i) if self._verified is not None else None
                out.append("" if v is None else f"{v.probability:.2g} {v.status}")
            else:
                count = int(r.corpus_counts[i])
                out.append(f"{count:,}" if count >= 0 else "–")
        return out


#: the piece column's narrowest (the other columns keep their width)
_PIECE_MIN = 72


class CandidateTable(QTableView):
    """Signals
    -------
    token_clicked(int)
    """

    token_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = CandidateModel(self)
        self.setModel(self.model_)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(22)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.horizontalHeader().setStretchLastSection(False)  # the piece column takes the room (_fit_columns)
        self.setFont(mono_font())
        self.setAlternatingRowColors(True)
        self.clicked.connect(self._on_clicked)
        self._rows_in_view = RowsInView(self)

    def set_report(self, report: HealthReport | None, piece_of=None) -> None:
        self.model_.set_report(report, piece_of)
        self._fit_columns()

    def set_verification(self, result) -> None:
        self.model_.set_verification(result)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Every column as wide as its header and its widest cell needs (the numbers' widths
        are known from the report's size), the piece column the room left, at least
        :data:`_PIECE_MIN` px: the score and the corpus counts stay in view beside it."""
        columns = self.model_.columns
        if not columns:
            return
        metrics, pad = self.fontMetrics(), 8
        header = self.horizontalHeader().fontMetrics()
        rows = max(1, self.model_.rowCount())
        vocab = self.model_.vocab_size or rows
        # the category's swatch says it; its word may be elided (the tooltip gives it whole)
        longest = {"#": f"{rows:,}", "id": f"{vocab:,}", "norm": "-0.000", "score": "-0.000",
                   "repeat P": "0.00 verified", "in corpus": "00,000", "category": "xxxxxxx"}
        widths = {name: max(34, max(metrics.horizontalAdvance(longest.get(name, "")),
                                    header.horizontalAdvance(name) + 8) + pad)
                  for name in columns if name != "piece"}
        room = self.viewport().width() - sum(widths.values())
        widths["piece"] = max(_PIECE_MIN, room)
        for c, name in enumerate(columns):
            self.setColumnWidth(c, widths[name])

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_columns()

    def set_selected(self, token_id: int) -> None:
        """Highlight the row of ``token_id`` when it is listed (without emitting)."""
        row = self.model_.row_of(token_id)
        if row < 0:
            self.clearSelection()
            return
        # no scrolling: the most under-trained rows stay in view when the text selects another token
        flags = QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows
        self.selectionModel().select(self.model_.index(row, 0), flags)

    def _on_clicked(self, index) -> None:
        i = self.model_.token_id(index.row())
        if i >= 0:
            self.token_clicked.emit(i)
