"""Table columns sized to their contents once per fill, not once per cell.

In Qt's ResizeToContents mode a header sizes its sections again whenever a
cell changes: writing the Cost view's comparison again (8 rows x 9 columns)
asked the cells for their size 4,608 times, 30-50 ms in a real window, and
the monkey found it inside 150-250 ms stalls at model switches and tour
steps; the model picker's list likewise. The tables here keep Interactive sections and call
:func:`fit_to_contents` once their cells are in: each cell is asked once.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QTableView, QTreeView

__all__ = ["fit_to_contents"]


def fit_to_contents(table: QTableView | QTreeView, columns: Iterable[int] | None = None,
                    rows: bool = False) -> None:
    """Size ``columns`` of ``table`` (every column when None) to their cells and header labels,
    and with ``rows`` every row of a table to its cells (wrapped text).

    A last column that stretches keeps the width left to it: its text wraps or elides, as
    it did with ResizeToContents."""
    count = table.model().columnCount()
    header = table.horizontalHeader() if isinstance(table, QTableView) else table.header()
    stretched = count - 1 if header.stretchLastSection() else None
    for c in range(count) if columns is None else columns:
        if c != stretched:
            table.resizeColumnToContents(c)
    if rows:
        table.resizeRowsToContents()
