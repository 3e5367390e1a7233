"""The inspector's chart of the row's values: what it draws, and its axes when no row is drawn."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.ui.inspector.view import RowInspector
from tests.support.ui_helpers import standalone_view


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, RowInspector, size=(420, 900))


def _x_span(v):
    (x0, x1), _ = v.plot.getPlotItem().vb.viewRange()
    return x0, x1


def test_the_chart_draws_the_selected_row(qtbot, view):
    v, state, _ = view
    table = open_table("default")
    state.set_table(table)
    tid = table.tokenizer.id_of("king")
    state.set_selected_token(tid)
    heights = v.bars.opts["height"]
    np.testing.assert_array_equal(np.asarray(heights), table.row(tid))
    np.testing.assert_array_equal(np.asarray(v.bars.opts["x"]), np.arange(table.dim))


def test_with_no_row_the_axes_span_the_loaded_table_not_the_last_row(qtbot, view):
    v, state, _ = view
    wide = open_table("random:50x300")
    state.set_table(wide)
    state.set_selected_token(7)
    qtbot.waitUntil(lambda: _x_span(v)[1] > 250)  # the 300 values drawn, autoranged
    narrow = open_table("toy:cat-sat")
    state.set_table(narrow)  # a new model: nothing selected yet
    assert v.title.text() == "No token selected"
    x0, x1 = _x_span(v)
    # the 4 columns of the new table, a little padding around them; not the last row's 300
    assert -1.0 < x0 < 0 and narrow.dim - 1 < x1 < narrow.dim
