"""Tables whose cells Qt paints without calling Python: rows held by Qt's own
model, filled when they come into view.

A table over a Python ``QAbstractTableModel`` calls its ``data()`` for about
seven roles of every cell it paints, and ``rowCount()`` and ``headerData()``
besides: over a thousand calls into Python for one repaint of the health
table's 35 rows. Each is a wait for the GIL while a worker runs Python (a
repaint of that table took 16-17 ms beside such a worker, against 5-6 with
its cells in Qt's model), and Qt repaints a table at every resize, hover,
selection and tab switch.

Here the rows live in Qt's own model (:class:`FilledRowsModel`, a
``QStandardItemModel``): it has every row from the start, empty, and a row's
items are made when it comes near the view (:class:`RowsInView` asks for the
rows in view, a page above and a page below, at each move of the scroll bar
and each change of its range: a resize, rows added). Qt then paints from its
own items.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QTableView

__all__ = ["RowsInView", "FilledRowsModel"]


class FilledRowsModel(QStandardItemModel):
    """Qt's own table model, its rows made by a Python function when first wanted.

    :meth:`set_rows` gives the headers, the number of rows and ``make_row(row)``, which
    returns the row's items (one per column); :meth:`fill` makes the rows of a range
    not made yet. A row not made yet is there, empty.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        self._filled = np.zeros(0, bool)
        self._make_row: Callable[[int], list[QStandardItem]] | None = None

    def set_rows(self, headers: list[str], rows: int, make_row: Callable[[int], list[QStandardItem]]) -> None:
        """``rows`` rows under ``headers``, none made yet (a model reset)."""
        self.clear()
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        self.setRowCount(rows)
        self._filled = np.zeros(rows, bool)
        self._make_row = make_row

    def empty_rows(self, make_row: Callable[[int], list[QStandardItem]]) -> None:
        """The same rows and headers, made by ``make_row`` from now on: the rows made before
        are emptied (not a reset: the view keeps its scroll and selection, and no row is
        inserted again, which for thousands of rows cost a few ms)."""
        for row in np.flatnonzero(self._filled).tolist():
            for c in range(self.columnCount()):
                self.takeItem(row, c)
        self._filled[:] = False
        self._make_row = make_row

    def fill(self, first: int, last: int) -> None:
        """Make the rows ``first`` to ``last`` (inclusive) not made yet."""
        if self._make_row is None:
            return
        for row in (np.flatnonzero(~self._filled[max(0, first):last + 1]) + max(0, first)).tolist():
            for c, item in enumerate(self._make_row(row)):
                self.setItem(row, c, item)
            self._filled[row] = True


class RowsInView(QObject):
    """Calls ``fill(first, last)`` with the rows of ``view`` in view, a page above and a
    page below, whenever they may have changed (and at :meth:`refresh`)."""

    def __init__(self, view: QTableView, fill: Callable[[int, int], None]):
        super().__init__(view)
        self._view = view
        self._fill = fill
        bar = view.verticalScrollBar()
        bar.valueChanged.connect(self.refresh)
        bar.rangeChanged.connect(self.refresh)

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
        self._fill(max(0, first - page), min(rows - 1, last + page))
