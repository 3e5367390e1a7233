"""The table of the projection's shown points: Qt's own model over a
:class:`explorer.core.projection.point_table.PointTable` (numpy columns) and a
view that sorts by any column, follows the selection and reports clicks.
Rows are made when they come into view (:mod:`explorer.ui.common.rows_in_view`),
so 50,000 rows sort (one argsort) and filter (one boolean cut) at once, and Qt
paints the cells without asking Python."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from explorer.core.projection.point_table import PieceOrder, PointTable
from explorer.ui.common.roles import ALIGNMENT, DISPLAY, FONT, RIGHT
from explorer.ui.common.rows_in_view import Cell, FilledRowsModel, RowsInView

__all__ = ["PointsModel", "PointsTable", "SORTING"]

#: the piece column's header while its pieces are read for a sort
SORTING = "piece (sorting…)"


class PointsModel(FilledRowsModel):
    """The rows of a PointTable that the filters keep, in the chosen order.

    Signals
    -------
    pieces_wanted(object)
        Sorting by piece needs the pieces of these ids (the table's), not read yet: read them
        off the GUI thread and hand the PieceOrder to :meth:`set_piece_order`.
    sorted()
        The rows are in a new order, the rows in view made again: the table selects its token
        again (Qt's ``layoutChanged`` tells Qt's views; this says the rows are ready).
    """

    pieces_wanted = Signal(object)
    sorted = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.points: PointTable | None = None
        self._keep = np.zeros(0, bool)
        self._order = np.zeros(0, np.int64)  # every row, sorted
        self.rows = np.zeros(0, np.int64)  # the kept rows, sorted: view row -> table row
        self._sort = (0, False)
        self.sorting = False  # waiting for the pieces to sort by
        self._asked = None  # the ids whose pieces were asked for
        self._mono = QFontDatabase.systemFont(QFontDatabase.FixedFont)

    def set_points(self, points: PointTable | None, keep: np.ndarray) -> None:
        """Show the rows of ``points`` where ``keep`` (n,) is True, sorted by the column chosen before."""
        self.points = points
        self._order = self._sorted() if points is not None else np.zeros(0, np.int64)
        self._cut(keep)
        self._new_rows()

    def set_piece_order(self, found: PieceOrder) -> None:
        """The pieces asked for landed: sorted by piece now, if they are still this table's."""
        if self.points is None or found.ids is not self.points.ids:
            return
        self.points.set_piece_order(found)
        if self._sort[0] == 1:
            self.sort(1, Qt.DescendingOrder if self._sort[1] else Qt.AscendingOrder)

    def pieces_failed(self) -> None:
        """The pieces could not be read: the rows stay in the order they were."""
        self._asked = None
        self._set_sorting(False)

    def _set_sorting(self, waiting: bool) -> None:
        """Waiting for the pieces to sort by (the piece column's header says so), or not."""
        if waiting != self.sorting:
            self.sorting = waiting
            if self.columnCount() > 1:
                self.setHeaderData(1, Qt.Horizontal, self._headers()[1])

    def _headers(self) -> list[str]:
        if self.points is None:
            return []
        headers = list(self.points.header())
        if self.sorting:
            headers[1] = SORTING
        return headers

    def _new_rows(self) -> None:
        self.set_rows(self._headers(), len(self.rows), self._row_items)

    def _row_items(self, row: int) -> list[Cell]:
        points, r = self.points, int(self.rows[row])
        cells: list[Cell] = []
        for c in range(len(points.columns) + 2):
            cell: Cell = {DISPLAY: points.cell(r, c)}
            if c == 0 or (c >= 2 and points.columns[c - 2].codes is None):  # a number
                cell.update({ALIGNMENT: RIGHT, FONT: self._mono})
            cells.append(cell)
        return cells

    def _sorted(self) -> np.ndarray:
        """Every row in the chosen order; by id while the pieces to sort by are being read."""
        points = self.points
        waiting = self._sort[0] == 1 and not points.pieces_read
        self._set_sorting(waiting)
        if waiting:
            if self._asked is not points.ids:  # once per table (Qt's sortByColumn sorts twice)
                self._asked = points.ids
                self.pieces_wanted.emit(points.ids)
            return self._order if len(self._order) == len(points.ids) else np.arange(len(points.ids))
        return points.order(*self._sort)

    def set_keep(self, keep: np.ndarray) -> None:
        """The same table, other rows kept (a filter changed): one boolean cut of the sorted rows."""
        self._cut(keep)
        self._new_rows()

    def _cut(self, keep: np.ndarray) -> None:
        self._keep = np.asarray(keep, bool)
        self.rows = self._order[self._keep[self._order]] if len(self._keep) == len(self._order) else self._order

    @property
    def sort_key(self) -> tuple[int, bool]:
        """The column sorted by, and whether descending."""
        return self._sort

    def token_at(self, row: int) -> int:
        return int(self.points.ids[self.rows[row]])

    def row_of(self, token_id: int) -> int:
        """The view row of ``token_id``, -1 when it is not shown."""
        if self.points is None:
            return -1
        found = np.flatnonzero(self.points.ids[self.rows] == int(token_id))
        return int(found[0]) if len(found) else -1

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        """Sort every row by ``column`` (an argsort of its values; unknown cells last)."""
        if self.points is None or not 0 <= column < self.columnCount():
            return
        self._sort = (int(column), order == Qt.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        self._order = self._sorted()
        self._cut(self._keep)
        self.layoutChanged.emit()
        self.empty_rows(self._row_items)  # the same rows in another order: made again as they show
        self.sorted.emit()


class PointsTable(QTableView):
    """The shown points, one a row.

    Signals
    -------
    token_clicked(int)
        The user clicked (or pressed Enter on) a row: its token id.
    """

    token_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.model_ = PointsModel(self)
        self.setModel(self.model_)
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicator(0, Qt.AscendingOrder)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.setSelectionMode(QAbstractItemView.SingleSelection)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        vh = self.verticalHeader()
        vh.hide()
        vh.setSectionResizeMode(QHeaderView.Fixed)  # uniform rows: nothing measured per row
        vh.setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.horizontalHeader().setStretchLastSection(True)
        self.horizontalHeader().setDefaultSectionSize(84)
        self._token = -1  # the token to keep selected when the rows move (a sort)
        self._rows_in_view = RowsInView(self)
        self.model_.sorted.connect(self._on_model_sorted)
        self.model_.columnsInserted.connect(self._keep_sort_indicator)
        self.model_.columnsRemoved.connect(self._keep_sort_indicator)
        self.clicked.connect(self._on_row_clicked)
        self.activated.connect(self._on_row_clicked)

    def select_token(self, token_id: int) -> None:
        """Select and scroll to the row of ``token_id`` (none selected when it is not shown)."""
        self._token = int(token_id)
        row = self.model_.row_of(token_id) if token_id >= 0 else -1
        sel = self.selectionModel()
        if row < 0:
            sel.clearSelection()
            return
        index = self.model_.index(row, 0)
        sel.setCurrentIndex(index, QItemSelectionModel.ClearAndSelect | QItemSelectionModel.Rows)
        self.scrollTo(index, QAbstractItemView.PositionAtCenter)

    def selected_token(self) -> int:
        """The token of the selected row, -1 when none is."""
        rows = self.selectionModel().selectedRows()
        return self.model_.token_at(rows[0].row()) if rows else -1

    def _on_row_clicked(self, index) -> None:
        if index.isValid():
            self._token = self.model_.token_at(index.row())
            self.token_clicked.emit(self._token)

    def _keep_sort_indicator(self, *_args) -> None:
        """Qt shifts the header's sort arrow when columns come before it (a first table's
        columns all do): it goes back on the column the rows are sorted by, without sorting."""
        column, descending = self.model_.sort_key
        header = self.horizontalHeader()
        header.blockSignals(True)
        header.setSortIndicator(column, Qt.DescendingOrder if descending else Qt.AscendingOrder)
        header.blockSignals(False)

    def _on_model_sorted(self) -> None:
        self.select_token(self._token)
