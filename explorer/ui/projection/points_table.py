"""The table of the projection's shown points: a QAbstractTableModel over a
:class:`explorer.core.projection.point_table.PointTable` (numpy columns) and a
view that sorts by any column, follows the selection and reports clicks.
Rows are virtual: the view asks only for the cells on screen, so 50,000
rows sort (one argsort) and filter (one boolean cut) at once."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from explorer.core.projection.point_table import PieceOrder, PointTable
from explorer.ui.common.roles import ALIGNMENT, DISPLAY, FONT, HORIZONTAL, RIGHT

__all__ = ["PointsModel", "PointsTable", "SORTING"]

#: the piece column's header while its pieces are read for a sort
SORTING = "piece (sorting…)"


class PointsModel(QAbstractTableModel):
    """The rows of a PointTable that the filters keep, in the chosen order.

    Signals
    -------
    pieces_wanted(object)
        Sorting by piece needs the pieces of these ids (the table's), not read yet: read them
        off the GUI thread and hand the PieceOrder to :meth:`set_piece_order`.
    """

    pieces_wanted = Signal(object)

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
        self.beginResetModel()
        self.points = points
        self._order = self._sorted() if points is not None else np.zeros(0, np.int64)
        self._cut(keep)
        self.endResetModel()

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
        if self.sorting:
            self.sorting = False
            self.headerDataChanged.emit(Qt.Horizontal, 1, 1)

    def _sorted(self) -> np.ndarray:
        """Every row in the chosen order; by id while the pieces to sort by are being read."""
        points = self.points
        waiting = self._sort[0] == 1 and not points.pieces_read
        if waiting != self.sorting:
            self.sorting = waiting
            self.headerDataChanged.emit(Qt.Horizontal, 1, 1)
        if waiting:
            if self._asked is not points.ids:  # once per table (Qt's sortByColumn sorts twice)
                self._asked = points.ids
                self.pieces_wanted.emit(points.ids)
            return self._order if len(self._order) == len(points.ids) else np.arange(len(points.ids))
        return points.order(*self._sort)

    def set_keep(self, keep: np.ndarray) -> None:
        """The same table, other rows kept (a filter changed): one boolean cut of the sorted rows."""
        self.beginResetModel()
        self._cut(keep)
        self.endResetModel()

    def _cut(self, keep: np.ndarray) -> None:
        self._keep = np.asarray(keep, bool)
        self.rows = self._order[self._keep[self._order]] if len(self._keep) == len(self._order) else self._order

    def token_at(self, row: int) -> int:
        return int(self.points.ids[self.rows[row]])

    def row_of(self, token_id: int) -> int:
        """The view row of ``token_id``, -1 when it is not shown."""
        if self.points is None:
            return -1
        found = np.flatnonzero(self.points.ids[self.rows] == int(token_id))
        return int(found[0]) if len(found) else -1

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802, B008 (Qt's names)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() or self.points is None else len(self.points.columns) + 2

    def data(self, index, role=DISPLAY):
        if not index.isValid() or self.points is None:
            return None
        c = index.column()
        if role == DISPLAY:
            return self.points.cell(int(self.rows[index.row()]), c)
        if role != ALIGNMENT and role != FONT:
            return None
        numeric = c == 0 or (c >= 2 and self.points.columns[c - 2].codes is None)
        if role == ALIGNMENT and numeric:
            return RIGHT
        if role == FONT and numeric:
            return self._mono
        return None

    def headerData(self, section, orientation, role=DISPLAY):  # noqa: N802
        if role != DISPLAY or self.points is None:
            return None
        if orientation != HORIZONTAL:
            return None
        return SORTING if section == 1 and self.sorting else self.points.header()[section]

    def sort(self, column: int, order=Qt.AscendingOrder) -> None:
        """Sort every row by ``column`` (an argsort of its values; unknown cells last)."""
        if self.points is None or not 0 <= column < self.columnCount():
            return
        self._sort = (int(column), order == Qt.DescendingOrder)
        self.layoutAboutToBeChanged.emit()
        self._order = self._sorted()
        self._cut(self._keep)
        self.layoutChanged.emit()


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
        self.model_.layoutChanged.connect(self._on_model_layout_changed)
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

    def _on_model_layout_changed(self) -> None:
        self.select_token(self._token)
