"""The Projection view's linked charts and table (pytest-qt, offscreen, on MiniLM):
the table holds the layout's rows, sorts by the real values and follows the
selection both ways, and reads the pieces to sort by in a worker; a click on a bar filters the map and every other chart
counts what numpy counts over the points it keeps; Export selection writes them."""

from __future__ import annotations

import csv
import threading

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from explorer.core.interop.rows import one_line
from explorer.core.projection.crossfilter import ChartFilter
from explorer.core.sources import open_table
from explorer.core.tokens.groups import token_groups
from explorer.core.tokens.meta import KINDS
from explorer.ui.projection import ProjectionView, point_selection
from explorer.ui.projection.points_table import SORTING
from tests.support.ui_helpers import python_calls_during, settle_layout, standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def _ready(qtbot, v, state):
    state.set_table(open_table("minilm"))
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.token_meta.value is not None
                    and v.linked.charts.chart("norm") is not None  # and every chart, made a turn each
                    and all(v.linked.charts.chart(col.key) is not None for col in v.points.columns),
                    timeout=TIMEOUT)
    return state.jobs.token_meta.value


def _click_bar(qtbot, chart, bar: int) -> None:
    """A real mouse click on the middle of ``bar``."""
    vb = chart.getPlotItem().getViewBox()
    x = vb.viewRange()[0][1] * 0.02  # near the axis: inside every bar, even a short one
    pos = chart.mapFromScene(vb.mapViewToScene(QPointF(x, bar)))
    qtbot.mouseClick(chart.viewport(), Qt.LeftButton, pos=pos)


def test_the_table_holds_the_layouts_rows_and_sorts_by_the_real_norms(qtbot, view):
    v, state, _ = view
    meta = _ready(qtbot, v, state)
    points = v.linked.points_table()
    ids = v.result.ids
    rows = v.layout_rows()  # what the CSV, Projector and Atlas exports write
    n = len(ids)
    np.testing.assert_array_equal(points.ids, rows.ids[:n])
    header = points.header()
    assert [points.piece(r) for r in range(0, n, 97)] == rows.pieces[:n:97]
    x, y = (points.columns[header.index(a) - 2].values for a in ("x", "y"))
    np.testing.assert_allclose(np.c_[x, y], rows.coords[:n, :2], rtol=1e-5, atol=1e-6)
    for name in ("norm", "length"):
        got = points.columns[header.index(name) - 2].values
        np.testing.assert_allclose(got, np.asarray(rows.metadata[name][:n], np.float64), rtol=1e-6)
    table = v.linked.table
    model = table.model_
    assert model.rowCount() == n and model.columnCount() == len(header)
    table.sortByColumn(header.index("norm"), Qt.AscendingOrder)
    shown = points.ids[model.rows]
    norms = meta.norm[shown].astype(np.float64)
    assert np.all(np.diff(norms) >= 0) and set(shown.tolist()) == set(ids.tolist())
    assert model.data(model.index(0, header.index("norm"))) == f"{norms[0]:.4g}"
    table.sortByColumn(header.index("norm"), Qt.DescendingOrder)
    assert np.all(np.diff(meta.norm[points.ids[model.rows]]) <= 0)


def test_the_table_follows_the_selection_and_selects_on_click(qtbot, view):
    v, state, _ = view
    _ready(qtbot, v, state)
    v.linked.setCurrentWidget(v.linked.table)
    table = v.linked.table
    ids = v.result.ids
    sel = int(ids[len(ids) // 2])
    state.set_selected_token(sel)
    assert table.selected_token() == sel
    row = table.model_.row_of(sel)
    assert table.viewport().rect().intersects(table.visualRect(table.model_.index(row, 0)))  # scrolled to
    other = table.model_.index(row + 1, 1)
    qtbot.mouseClick(table.viewport(), Qt.LeftButton, pos=table.visualRect(other).center())
    assert state.selected_id == table.model_.token_at(row + 1) != sel
    assert table.selected_token() == state.selected_id


def test_a_bar_click_filters_the_map_and_the_other_charts_count_what_it_keeps(qtbot, view, tmp_path):
    v, state, _ = view
    meta = _ready(qtbot, v, state)
    ids = v.result.ids
    word = KINDS.index("word start")
    _click_bar(qtbot, v.linked.charts.chart("kind"), word)
    kept = meta.kind[ids] == word
    assert set(v.plot._cloud_ids.tolist()) == set(ids[kept].tolist())  # the map shows only word starts
    charts = v.linked.charts
    length = token_groups("length", ids[kept], vocab_size=state.table.vocab_size, meta=meta)
    np.testing.assert_array_equal(charts.chart("length").counts.opts["width"], length.counts())
    norms = meta.norm[ids].astype(np.float64)
    edges = np.histogram_bin_edges(norms[np.isfinite(norms)], bins=len(charts.chart("norm").counts.opts["y"]))
    want, _ = np.histogram(norms[kept & np.isfinite(norms)], bins=edges)
    np.testing.assert_array_equal(charts.chart("norm").counts.opts["width"], want)
    id_bins = ids[kept] * 10 // state.table.vocab_size
    np.testing.assert_array_equal(charts.chart("id_range").counts.opts["width"], np.bincount(id_bins, minlength=10))
    np.testing.assert_array_equal(charts.chart("kind").counts.opts["width"],  # a chart never filters itself
                                  np.bincount(meta.kind[ids], minlength=len(KINDS)))
    assert f"{int(kept.sum()):,} of {len(ids):,}" in v.plot.plot_item.titleLabel.text

    charts.chart("norm").brush_between(0, 2)  # the three lowest norm bins, too
    low = kept & np.isfinite(norms) & (norms < edges[3])
    assert set(v.points.shown_ids.tolist()) == set(ids[low].tolist())
    assert set(v.linked.points_table().ids[v.linked.table.model_.rows].tolist()) == set(ids[low].tolist())
    path = tmp_path / "selection.csv"
    assert v.linked.export_selection(str(path)) == int(low.sum())
    with open(path, encoding="utf-8") as f:
        assert {int(r[0]) for r in list(csv.reader(f))[1:]} == set(ids[low].tolist())

    charts.clear_button.click()
    assert len(v.points.shown_ids) == len(ids) and v.plot.plot_item.titleLabel.text.startswith(f"{len(ids):,} tokens")


def test_a_big_clouds_charts_and_table_come_a_turn_after_its_map_unless_a_chart_filters_it(
        qtbot, view, tmp_path, monkeypatch):
    v, state, _ = view
    meta = _ready(qtbot, v, state)
    monkeypatch.setattr(point_selection, "COUNT_LATER_MIN", 1_000)  # MiniLM's 30,522 points are a big cloud
    ids, xy, _ = v.points.drawn
    counted = []
    v.points.counted.connect(lambda: counted.append(len(v.points.cross.keep)))
    keep = v.points.visible(ids[:5_000], xy[:5_000])
    assert keep.all() and counted == []  # the map's points now, the charts and the table in the next turn
    qtbot.waitUntil(lambda: counted == [5_000], timeout=TIMEOUT)
    np.testing.assert_array_equal(v.linked.charts.chart("kind").counts.opts["width"],
                                  np.bincount(meta.kind[ids[:5_000]], minlength=len(KINDS)))
    assert v.linked.table.model_.rowCount() == 5_000

    v.points.visible(ids, xy)  # an export in the same turn counts first: every point is written
    assert v.linked.export_selection(str(tmp_path / "all.csv")) == len(ids) and counted == [5_000, len(ids)]
    qtbot.wait(30)
    assert counted == [5_000, len(ids)]  # and not again

    word = KINDS.index("word start")
    v.points.charts = ChartFilter().toggled("kind", word)  # a chart's choice filters the map: counted first
    keep = v.points.visible(ids, xy)
    np.testing.assert_array_equal(keep, meta.kind[ids] == word)
    assert counted == [5_000, len(ids), len(ids)]


def test_each_bar_click_draws_exactly_the_points_numpy_keeps(qtbot, view):
    """Chosen, more, fewer, none: after each click the cloud holds the kept points with their
    colours (the colours' image is reused between clicks), the axes keep their labels and the
    3D cloud, made when asked for, still holds every point."""
    v, state, _ = view
    _ready(qtbot, v, state)
    ids = v.result.ids
    full_xy, full_group = v.plot.cloud.positions().copy(), v.plot.cloud.groups().copy()
    by_id = dict(zip(v.plot.cloud_ids().tolist(), range(len(ids))))
    order = np.array([by_id[i] for i in ids.tolist()])  # cloud position of each result id
    full_xy, full_group = full_xy[order], full_group[order]
    labels = (v.plot.plot_item.getAxis("bottom").labelText, v.plot.plot_item.getAxis("left").labelText)
    bins = ids * 10 // state.table.vocab_size
    chosen: set[int] = set()
    for bar in (2, 5, 2, 5):
        chosen ^= {bar}
        v.points.toggle_bar("id_range", bar)
        kept = np.isin(bins, sorted(chosen)) if chosen else np.ones(len(ids), bool)
        np.testing.assert_array_equal(v.plot.cloud_ids(), ids[kept])
        np.testing.assert_array_equal(v.plot.cloud.positions(), full_xy[kept])
        np.testing.assert_array_equal(v.plot.cloud.groups(), full_group[kept])
        assert f"{len(ids):,}" in v.plot.plot_item.titleLabel.text
        assert (v.plot.plot_item.getAxis("bottom").labelText, v.plot.plot_item.getAxis("left").labelText) == labels
    cloud = v.plot_pages.cloud
    if cloud is not None:  # a layout with a third dimension
        np.testing.assert_array_equal(cloud.ids, ids)


def test_sorting_by_piece_reads_the_pieces_in_a_worker_and_orders_them_as_sorted_does(qtbot, view, monkeypatch):
    v, state, _ = view
    _ready(qtbot, v, state)
    cls = type(state.table)  # a frozen dataclass: its method is spied on
    real = cls.shown_piece
    read_on: list[int] = []  # the thread of each piece read from now on

    def spy(self, i):
        read_on.append(threading.get_ident())
        return real(self, i)

    monkeypatch.setattr(cls, "shown_piece", spy)
    v.linked.setCurrentWidget(v.linked.table)
    table, model, points = v.linked.table, v.linked.table.model_, v.linked.points_table()
    table.sortByColumn(1, Qt.AscendingOrder)
    assert model.sorting and model.headerData(1, Qt.Horizontal) == SORTING  # said at once, read later
    qtbot.waitUntil(lambda: not model.sorting, timeout=TIMEOUT)
    assert model.headerData(1, Qt.Horizontal) == "piece"
    gui = threading.get_ident()
    assert sum(t != gui for t in read_on) >= len(points.ids)  # every piece read off the GUI thread
    assert sum(t == gui for t in read_on) <= 100  # here: at most the cells on screen meanwhile
    pieces = [one_line(real(state.table, int(i)).text) for i in points.ids.tolist()]
    want = sorted(range(len(pieces)), key=pieces.__getitem__)
    assert model.rows.tolist() == want
    assert [model.data(model.index(r, 1)) for r in range(5)] == [pieces[want[r]] for r in range(5)]
    read = len(read_on)
    table.sortByColumn(1, Qt.DescendingOrder)  # the pieces are known now: sorted on the spot
    assert not model.sorting and model.rows.tolist() == want[::-1] and len(read_on) == read


def test_the_tables_rows_in_view_are_the_points_and_a_repaint_calls_no_python(qtbot, view):
    """Rows are made as they come into view, in the order and filter of the moment; Qt then
    paints them from its own model (a Python model was asked seven roles a cell)."""
    v, state, _ = view
    _ready(qtbot, v, state)
    v.linked.setCurrentWidget(v.linked.table)
    table, model, points = v.linked.table, v.linked.table.model_, v.linked.points_table()
    settle_layout()
    table.sortByColumn(0, Qt.DescendingOrder)
    table.scrollTo(model.index(model.rowCount() // 2, 0))
    first, last = table.rowAt(0), table.rowAt(table.viewport().height() - 1)
    assert 0 < first <= last
    for r in range(first, last + 1):
        assert [model.data(model.index(r, c)) for c in range(model.columnCount())] == \
            [points.cell(int(model.rows[r]), c) for c in range(model.columnCount())]
    assert model.data(model.index(model.rowCount() - 1, 0)) is None  # not in view: not made
    assert np.all(np.diff(points.ids[model.rows[first:last + 1]]) < 0)
    calls = python_calls_during(table.viewport().repaint)
    assert len(calls) < 20, calls[:20]


def test_the_headers_sort_arrow_stays_on_the_column_sorted_by(qtbot, view):
    """Qt shifts a header's sort arrow when columns are inserted before it: a table's first
    columns took it off the id column, and a new layout off the column the user sorted by."""
    v, state, _ = view
    _ready(qtbot, v, state)
    table, model = v.linked.table, v.linked.table.model_
    header = table.horizontalHeader()
    assert (header.sortIndicatorSection(), header.sortIndicatorOrder()) == (0, Qt.AscendingOrder)
    norm = [model.headerData(c, Qt.Horizontal) for c in range(model.columnCount())].index("norm")
    table.sortByColumn(norm, Qt.DescendingOrder)
    state.set_table(open_table("toy:robot"))  # another table: its columns come anew
    qtbot.waitUntil(lambda: model.points is not None and model.points.ids is not None
                    and len(model.points.ids) == state.table.vocab_size, timeout=60_000)
    assert (header.sortIndicatorSection(), header.sortIndicatorOrder()) == (norm, Qt.DescendingOrder)
    assert model.sort_key == (norm, True)
