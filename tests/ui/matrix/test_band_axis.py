"""The band's column axis numbers only columns that exist."""

from __future__ import annotations

from explorer.core.sources import open_table
from explorer.ui.matrix.view import MatrixView
from tests.support.ui_helpers import standalone_view


def _numbered(axis) -> list[float]:
    """The values the axis writes a number under, as it draws them now."""
    lo, hi = axis.range
    levels = axis._tickLevels if axis._tickLevels is not None else [
        [(v, "") for v in values] for _spacing, values in axis.tickValues(lo, hi, axis.width())]
    return [v for level in levels[:1] for v, _text in level]


def test_columns_past_the_table_are_not_numbered(qtbot):
    """Issue 25: the band leaves room right of the columns for the selected token's
    name; its axis numbered 600 and 700 under a table of 576 columns (SmolLM2)."""
    for v, state, _ in standalone_view(qtbot, MatrixView, size=(690, 510)):
        table = open_table("random:2000x576")
        state.set_table(table)
        state.set_selected_token(1000)
        qtbot.waitUntil(lambda v=v: v._band is not None)
        axis = v.band_plot.getAxis("bottom")
        assert axis.range[1] > 576  # the room for the name
        numbered = _numbered(axis)
        assert numbered and max(numbered) <= 576 and 0 in numbered
