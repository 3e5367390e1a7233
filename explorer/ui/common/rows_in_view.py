"""Tables whose cells Qt paints without calling Python: rows held by Qt's own
model, made when they come into view.

A table over a Python ``QAbstractTableModel`` calls its ``data()`` for about
seven roles of every cell it paints, and ``rowCount()`` and ``headerData()``
besides: 832 calls into Python for one repaint of the health table. Each is a
wait for the GIL while a worker runs Python (a repaint of that table took
12-13 ms beside such a worker, against 3.5 with its cells in Qt's model), and
Qt repaints a table at every resize, hover, selection and tab switch.

Here the rows live in Qt's own model (:class:`FilledRowsModel`, a
``QStandardItemModel``): it has every row from the start, empty, and a row's
cells are made when it comes near the view. :class:`RowsInView` asks for the
rows in view, a page above and a page below, at each move of the scroll bar,
each change of its range (a resize) and each new set of rows. Qt then paints
from its own items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QTableView

__all__ = ["RowsInView", "FilledRowsModel", "Cell", "MakeRow"]

#: a cell's data by role (ints from :mod:`explorer.ui.common.roles`): {DISPLAY: "text", ...}
Cell = dict[int, object]
#: a row's cells, one per column, from the row's number
MakeRow = Callable[[int], list[Cell]]


class FilledRowsModel(QStandardItemModel):
    """Qt's own table model, its rows made by a Python function when first wanted.

    :meth:`set_rows` gives the headers, the number of rows and ``make_row(row)``, which
    returns the row's cells (one per column, each its data by role); :meth:`fill` makes
    the rows of a range not made yet. A row not made yet is there, empty. A cell's data
    goes in with ``setItemData``: ``setItem`` made Qt announce a new layout for each item
    (the view and its headers laid out again).
    """

    #: the rows were set or emptied: the rows in view are to be made (RowsInView listens)
    rows_set = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._filled = np.zeros(0, bool)
        self._make_row: MakeRow | None = None

    def set_rows(self, headers: list[str], rows: int, make_row: MakeRow) -> None:
        """``rows`` rows under ``headers``, none made yet. The rows before are removed; the
        columns stay when they are as many (the widths a user gave them are kept)."""
        self._make_row = None  # nothing is made while the rows go and come (the view scrolls meanwhile)
        self.setRowCount(0)
        if self.columnCount() != len(headers):
            self.setColumnCount(len(headers))
        for c, text in enumerate(headers):
            if self.headerData(c, Qt.Horizontal) != text:
                self.setHeaderData(c, Qt.Horizontal, text)
        self._filled = np.zeros(rows, bool)
        self.setRowCount(rows)
        self._make_row = make_row
        self.rows_set.emit()

    def empty_rows(self, make_row: MakeRow) -> None:
        """The same rows and headers, made by ``make_row`` from now on: the rows made before
        are emptied (not a reset: the view keeps its scroll and selection, and no row is
        inserted again, which for thousands of rows cost a few ms)."""
        for row in np.flatnonzero(self._filled).tolist():
            for c in range(self.columnCount()):
                self.takeItem(row, c)
        self._filled[:] = False
        self._make_row = make_row
        self.rows_set.emit()

    def fill(self, first: int, last: int) -> None:
        """Make the rows ``first`` to ``last`` (inclusive) not made yet."""
        if self._make_row is None:
            return
        for row in (np.flatnonzero(~self._filled[max(0, first):last + 1]) + max(0, first)).tolist():
            for c, cell in enumerate(self._make_row(row)):
                self.setItemData(self.index(row, c), cell)
            self._filled[row] = True


class RowsInView(QObject):
    """Has ``view``'s model (a :class:`FilledRowsModel`) make the rows in view, a page above
    and a page below, whenever they may have changed: a move or a new range of the scroll
    bar, rows set anew (and at :meth:`refresh`)."""

    def __init__(self, view: QTableView):
        super().__init__(view)
        self._view = view
        bar = view.verticalScrollBar()
        bar.valueChanged.connect(self.refresh)
        bar.rangeChanged.connect(self.refresh)
        view.model().rows_set.connect(self.refresh)

    def refresh(self, *_args) -> None:
        """Fill the rows near the view now (after the model's rows changed, say)."""
        view = self._view
        model = view.model()
        rows = model.rowCount() if model is not None else 0
        if rows == 0:
            return
        first = max(0, view.rowAt(0))
        last = view.rowAt(max(0, view.viewport().height() - 1))
        if last < 0:  # the view's foot is below the last row: every row from the first is in view
            last = rows - 1
        page = last - first + 1
        model.fill(max(0, first - page), min(rows - 1, last + page))
