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


def test_cell_values_fit_their_cells_or_are_not_written(qtbot):
    """At 1024 x 700 the band of random:5000x8 wrote its values edge to edge, the last
    touching the selected row's name: now they fit a cell (width and height) or stay unwritten."""
    from PySide6.QtGui import QFontMetricsF

    from explorer.ui.common.cell_texts import FIT_MARGIN_PX

    for v, state, _ in standalone_view(qtbot, MatrixView, size=(1100, 900)):
        state.set_table(open_table("random:5000x8"))
        state.set_selected_token(42)
        qtbot.waitUntil(lambda v=v: v._band is not None and bool(v.cell_texts()))
        layer = v.cell_texts_layer()
        sizes = []
        for height in (900, 420):  # rows taller, then shorter than a line of text
            before = layer.cell_px()[1]
            v.resize(1100, height)
            if height != 900:  # the view's range follows the new size after a paint
                qtbot.waitUntil(lambda before=before, layer=layer: layer.cell_px()[1] < before / 2)
            size = layer.point_size()
            width_px, height_px = layer.cell_px()
            if size:
                font = layer.font()
                font.setPointSize(size)
                metrics = QFontMetricsF(font)
                widest = max(metrics.horizontalAdvance(t) for _, _, t in v.cell_texts())
                assert widest + FIT_MARGIN_PX <= width_px and metrics.height() <= height_px
                assert layer.shown_texts() == [t for _, _, t in v.cell_texts()]
            else:
                assert layer.shown_texts() == []
            sizes.append(size)
        assert sizes[0] > 0 and sizes[1] == 0  # written in a tall window, not in a short one
        assert len(v.cell_texts()) == 8 * (v._band.stop - v._band.start)  # still known to tests and export
