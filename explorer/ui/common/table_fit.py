"""Table columns sized to their contents once per fill, not once per cell.

In Qt's ResizeToContents mode a header sizes its sections again whenever a
cell changes: writing the Cost view's comparison again (8 rows x 9 columns)
asked the cells for their size 4,608 times, 30-50 ms in a real window, and
the monkey found it inside 150-250 ms stalls at model switches and tour
steps. The tables and lists here keep Interactive sections and call
:func:`fit_to_contents` once their cells are in: each cell is asked once.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtWidgets import QTableView, QTreeView

__all__ = ["fit_to_contents"]


def fit_to_contents(view: QTableView | QTreeView, columns: Iterable[int] | None = None) -> None:
    """Size ``columns`` of ``view`` (every column when None) to their cells and header labels.

    A last column that stretches keeps the width left to it: its text wraps or elides, as
    it did with ResizeToContents."""
    count = view.model().columnCount()
    header = view.horizontalHeader() if isinstance(view, QTableView) else view.header()
    stretched = count - 1 if header.stretchLastSection() else None
    for c in range(count) if columns is None else columns:
        if c != stretched:
            view.resizeColumnToContents(c)
