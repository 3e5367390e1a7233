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


def test_the_whole_tables_column_numbers_keep_apart(qtbot):
    """At 1024 x 700 pyqtgraph wrote 0, 100, 200 and 300 under MiniLM's 384 columns
    close enough to touch ("0100200300")."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QFontMetrics

    for v, state, _ in standalone_view(qtbot, MatrixView, size=(560, 480)):
        state.set_table(open_table("random:30522x384"))
        qtbot.waitUntil(lambda v=v: v._overview is not None)
        for width in (560, 1200):
            v.resize(width, 480)
            qtbot.wait(50)
            axis = v.overview_plot.getAxis("bottom")
            vb = v.overview_plot.getViewBox()
            numbered = [(val, f"{int(val):,}") for val in _numbered(axis) if axis.range[0] <= val <= axis.range[1]]
            assert len(numbered) >= 2 and numbered[0][0] == 0 and numbered[-1][0] <= 384
            metrics = QFontMetrics(axis.font())
            xs = [vb.mapViewToScene(QPointF(val, 0)).x() for val, _ in numbered]
            for (x0, (_, t0)), (x1, (_, t1)) in zip(zip(xs, numbered), zip(xs[1:], numbered[1:])):
                assert x1 - x0 > (metrics.horizontalAdvance(t0) + metrics.horizontalAdvance(t1)) / 2 + 4

