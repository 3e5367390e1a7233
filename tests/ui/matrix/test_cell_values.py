"""A small table's band writes every cell's value over it: the values of the
rows the band shows, in their cells, after a click and after a model change."""

from __future__ import annotations

import numpy as np

from explorer.core.sources import open_table
from explorer.ui.matrix.view import SMALL_CELLS, MatrixView
from tests.support.ui_helpers import standalone_view


def _expected(table, band) -> list[tuple[float, float, str]]:
    rows = table.rows(np.arange(band.start, band.stop))
    assert band.col_step == 1
    return [(c + 0.5, band.start + r + 0.5, f"{rows[r, c]:+.2f}")
            for r in range(rows.shape[0]) for c in range(rows.shape[1])]


def test_cell_values_are_the_rows_values_and_follow_the_selection_and_the_model(qtbot):
    for v, state, _ in standalone_view(qtbot, MatrixView, size=(900, 600)):
        robot = open_table("toy:robot")
        state.set_table(robot)
        state.set_selected_token(2)
        qtbot.waitUntil(lambda v=v: v._band is not None and bool(v.cell_texts()))
        assert v._band.image.size <= SMALL_CELLS
        assert v.cell_texts() == _expected(robot, v._band)
        cat = open_table("toy:cat-sat")
        state.set_table(cat)
        state.set_selected_token(cat.vocab_size - 1)
        qtbot.waitUntil(lambda v=v, cat=cat: v._band is not None and v._band.stop == cat.vocab_size)
        assert v.cell_texts() == _expected(cat, v._band)  # none of the robot's values stays
        big = open_table("random:5000x64")
        state.set_table(big)
        state.set_selected_token(10)
        qtbot.waitUntil(lambda v=v: v._band is not None and v._band.image.size > SMALL_CELLS)
        assert v.cell_texts() == []  # too many cells to write in
