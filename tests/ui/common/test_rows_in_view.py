"""Tables held in Qt's own model, rows made as they come into view
(explorer.ui.common.rows_in_view): which rows are made, when, and a repaint that
calls no Python, on a plain table and on the app's tables."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableView

from explorer.ui.common.roles import ALIGNMENT, DISPLAY, RIGHT
from explorer.ui.common.rows_in_view import FilledRowsModel, RowsInView
from explorer.ui.inspector.view import RowValuesModel
from tests.support.ui_helpers import python_calls_during, settle_layout

ROWS = 1_000


def _in_view(t: QTableView) -> range:
    first = t.rowAt(0)
    last = t.rowAt(t.viewport().height() - 1)
    return range(first, (last if last >= 0 else t.model().rowCount() - 1) + 1)


def _shown(qtbot, model, width: int = 300, height: int = 300) -> tuple[QTableView, RowsInView]:
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    rows = RowsInView(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return view, rows


@pytest.fixture
def table(qtbot):
    made: list[int] = []

    def make_row(row: int) -> list[dict]:
        made.append(row)
        return [{DISPLAY: f"r{row}"}, {DISPLAY: f"{row * row}", ALIGNMENT: RIGHT}]

    model = FilledRowsModel()
    model.set_rows(["name", "square"], ROWS, make_row)
    view, rows = _shown(qtbot, model, height=240)
    return view, model, made


def test_the_rows_in_view_and_a_page_each_side_are_made_once(table):
    view, model, made = table
    shown = _in_view(view)
    assert shown[0] == 0 and 3 <= len(shown) < 50
    assert set(made) == set(range(0, min(ROWS, shown[-1] + len(shown) + 1)))  # none above the top
    assert len(made) == len(set(made))
    for row in shown:
        assert model.data(model.index(row, 0)) == f"r{row}" and model.data(model.index(row, 1)) == f"{row * row}"
        assert model.data(model.index(row, 1), ALIGNMENT) == RIGHT
    assert model.item(ROWS - 1, 0) is None and model.rowCount() == ROWS
    assert [model.headerData(c, Qt.Horizontal) for c in range(2)] == ["name", "square"]


def test_scrolling_and_growing_make_the_rows_coming_into_view(qtbot, table):
    view, model, made = table
    view.scrollTo(model.index(600, 0))  # the scroll bar moves: rows made before the paint
    shown = _in_view(view)
    assert 600 in shown
    assert all(model.data(model.index(r, 0)) == f"r{r}" for r in range(shown[0] - len(shown), shown[-1] + 1))
    view.scrollToBottom()
    assert model.data(model.index(ROWS - 1, 1)) == f"{(ROWS - 1) ** 2}"
    before = len(made)
    view.scrollToBottom()  # nothing new in view: nothing made again
    assert len(made) == before
    view.resize(300, 900)  # taller: the scroll bar's range changes, the new rows are made
    qtbot.waitUntil(lambda: view.viewport().height() > 800)
    assert all(model.item(r, 0) is not None for r in _in_view(view))
    assert len(made) == len(set(made))


def test_new_rows_replace_the_old_and_those_in_view_are_made_at_once(table):
    view, model, made = table
    made.clear()
    model.set_rows(["a", "b", "c"], 5, lambda r: [{DISPLAY: str(r * k)} for k in (1, 2, 3)])
    assert model.rowCount() == 5 and model.columnCount() == 3
    assert [model.headerData(c, Qt.Horizontal) for c in range(3)] == ["a", "b", "c"]
    assert [model.data(model.index(4, c)) for c in range(3)] == ["4", "8", "12"]  # in view: made
    model.fill(-3, 99)  # a range past either end is cut to the rows there are
    assert made == []  # the old rows' function is not called again, not even while rows went


def test_a_repaint_of_a_plain_table_calls_no_python(table):
    view, model, _ = table
    assert len(_in_view(view)) >= 5
    calls = python_calls_during(view.viewport().repaint)
    assert len(calls) < 20, calls[:20]


def test_the_row_values_table_shows_the_row_and_paints_without_python(qtbot):
    values = (np.arange(300, dtype=np.float32) - 150) / 7
    model = RowValuesModel()
    model.set_values(values)
    view, rows = _shown(qtbot, model)
    for r in _in_view(view):
        assert model.data(model.index(r, 0)) == f"{r:,}"
        assert model.data(model.index(r, 1)) == f"{values[r]:+.6f}"
    assert model.item(299, 0) is None
    calls = python_calls_during(view.viewport().repaint)
    assert len(calls) < 20, calls[:20]


def test_emptied_rows_keep_the_scroll_and_are_made_again_by_the_new_function(qtbot, table):
    view, model, _ = table
    view.scrollTo(model.index(500, 0))
    top = view.verticalScrollBar().value()
    made_before = [r for r in range(ROWS) if model.item(r, 0) is not None]
    assert len(made_before) > 3 * len(_in_view(view))  # the top rows, and those around row 500
    model.empty_rows(lambda r: [{DISPLAY: f"new {r}"}, {DISPLAY: ""}])
    # nothing old is left anywhere: rows away from the view are empty, those in view made anew
    assert all(model.data(model.index(r, 0)) in (None, f"new {r}") for r in made_before)
    assert model.data(model.index(0, 0)) is None
    assert view.verticalScrollBar().value() == top and model.rowCount() == ROWS
    assert all(model.data(model.index(r, 0)) == f"new {r}" for r in _in_view(view))


def test_another_row_of_the_same_width_replaces_every_value_shown(qtbot):
    model = RowValuesModel()
    view, rows = _shown(qtbot, model)
    first, second = np.linspace(-1, 1, 64, dtype=np.float32), np.linspace(5, 9, 64, dtype=np.float32)
    model.set_values(first)
    view.scrollToBottom()
    model.set_values(second)
    for r in range(64):
        text = model.data(model.index(r, 1))
        assert text is None or text == f"{second[r]:+.6f}", r  # made from the new row, or not made
    assert all(model.data(model.index(r, 1)) == f"{second[r]:+.6f}" for r in _in_view(view))
    model.set_values(first[:10])  # another width: new rows
    settle_layout()  # the view lays its rows out again (its scroll comes back to the top)
    assert model.rowCount() == 10 and all(model.data(model.index(r, 1)) == f"{first[r]:+.6f}" for r in _in_view(view))


def test_making_rows_announces_no_new_layout(table):
    """Cells go in with setItemData: setItem made Qt announce a new layout for each item, and
    the view and its headers were laid out again for every row made."""
    view, model, _ = table
    layouts = []
    model.layoutChanged.connect(lambda *_: layouts.append(1))
    view.scrollTo(model.index(700, 0))
    assert model.data(model.index(700, 0)) == "r700" and layouts == []
