"""Small widgets the Cost pages share: a figure tile, small matrices of
numbers, and the pages' style sheet."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING, style_as, text_color_on

#: a tile's frame: its own style sheet, set on each tile (its few labels go through Qt's style sheet
#: style with it, not the whole view)
TILE_STYLE = "#CostTile { border: 1px solid palette(mid); border-radius: 8px; background: palette(base); }"


class Tile(QFrame):
    """One figure of the cost card: caption, big value, sub line and formula."""

    def __init__(self, caption: str, tooltip: str, parent=None):
        super().__init__(parent)
        self.setObjectName("CostTile")
        self.setStyleSheet(TILE_STYLE)
        self.setToolTip(tooltip)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(2)
        self.caption = plain_label(caption, wrap=False)
        style_as(self.caption, "TileCaption")
        self.value = style_as(plain_label("–", wrap=False), "TileValue")
        self.value.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.sub = plain_label()
        style_as(self.sub, "TileSub")
        self.sub.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.formula = note_label()
        for w in (self.caption, self.value, self.sub, self.formula):
            lay.addWidget(w)
        lay.addStretch(1)

    def set(self, value: str, sub: str = "", formula: str = "") -> None:
        self.value.setText(value)
        self.sub.setText(sub)
        self.formula.setText(formula)

    def clear(self) -> None:
        self.set("–")


class ReflowGrid(QGridLayout):
    """Widgets laid out in as many columns as the width allows, row by row.

    Parameters
    ----------
    item_width : int
        The width one widget needs (pixels).
    max_columns, min_columns : int
    """

    def __init__(self, item_width: int, max_columns: int, min_columns: int = 1):
        super().__init__()
        self._item_width, self._max, self._min = item_width, max_columns, min_columns
        self._widgets: list[QWidget] = []
        self._columns = 0

    @property
    def columns(self) -> int:
        return self._columns

    def add(self, widget: QWidget) -> None:
        self._widgets.append(widget)
        self._place(self._columns or self._max, force=True)

    def reflow(self, parent: QWidget, width: int) -> None:
        """Lay the widgets out for ``parent`` resized to ``width`` pixels (call
        from its resizeEvent).

        The columns are the most whose minimum width fits ``width`` (a widget
        whose text needs more than ``item_width`` widens every column), so the
        grid's minimum never exceeds the width it was laid out for. A scroll
        area around the parent therefore never has to widen it, which would
        reflow it again: with a rule that depended on the parent's minimum
        instead, a table with long figures (MiniLM's cost card at 1024 px)
        made the scroll area and the grid resize each other until the stack
        overflowed.
        """
        m = parent.layout().contentsMargins()
        spacing = max(0, self.horizontalSpacing())
        item = max([self._item_width] + [w.minimumSizeHint().width() for w in self._widgets])
        free = width - m.left() - m.right() + spacing
        self._place(max(self._min, min(self._max, free // (item + spacing))))

    def _place(self, columns: int, force: bool = False) -> None:
        if columns == self._columns and not force:
            return
        self._columns = columns
        for w in self._widgets:
            self.removeWidget(w)  # adding it again would leave its old cell behind
        for k, w in enumerate(self._widgets):
            self.addWidget(w, k // columns, k % columns)
        for c in range(self._max):
            self.setColumnStretch(c, 1 if c < columns else 0)


def plain_label(text: str = "", wrap: bool = True) -> QLabel:
    """A label that shows its text as written: pieces such as <pad> and words
    the user typed are never taken for markup."""
    lab = WrapLabel(text, wrap=wrap)
    lab.setTextFormat(Qt.PlainText)
    return lab


def note_label(text: str = "") -> QLabel:
    """A quiet, wrapping line under a panel (formulas, captions)."""
    return style_as(plain_label(text), "TileFormula")


def title_label(text: str) -> QLabel:
    return style_as(plain_label(text, wrap=False), "PanelTitle")


def matrix_table(tooltip: str) -> QTableWidget:
    """A small read-only n x n table of numbers."""
    t = QTableWidget()
    t.setToolTip(tooltip)
    t.setEditTriggers(QAbstractItemView.NoEditTriggers)
    t.setSelectionMode(QAbstractItemView.NoSelection)
    t.setWordWrap(False)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
    return t


def fill_matrix(table: QTableWidget, labels: list[str], values: np.ndarray, fmt: Callable[[float], str],
                colors: Callable[[float], QColor] | None = None) -> None:
    """Write ``values`` (n, n) into ``table``; the raw value goes to Qt.UserRole.

    With ``colors`` each finite cell gets that background and the text colour
    that reads best on it (in either palette). Items are reused: creating
    them anew costs a relayout each.
    """
    n = len(labels)
    table.setUpdatesEnabled(False)
    table.setRowCount(n)
    table.setColumnCount(n)
    table.setHorizontalHeaderLabels(labels)
    table.setVerticalHeaderLabels(labels)
    for i in range(n):
        for j in range(n):
            v = values[i, j]
            item = table.item(i, j)
            if item is None:
                item = QTableWidgetItem()
                table.setItem(i, j, item)
            item.setText(fmt(v))
            item.setData(Qt.UserRole, float(v))
            item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            if colors is not None and np.isfinite(v):
                bg = colors(v)
                item.setBackground(bg)
                item.setForeground(text_color_on(bg))
            else:
                item.setData(Qt.BackgroundRole, None)
                item.setData(Qt.ForegroundRole, None)
    table.setUpdatesEnabled(True)
    fit_height(table)


def fit_height(table: QTableWidget) -> None:
    """Fix a small table's height to its rows, so no empty band is left under them."""
    table.resizeRowsToContents()
    h = table.horizontalHeader().height() + 2 * table.frameWidth()
    h += sum(table.rowHeight(i) for i in range(table.rowCount()))
    table.setFixedHeight(max(h, 40))


def clear_matrix(table: QTableWidget) -> None:
    table.setRowCount(0)
    table.setColumnCount(0)
