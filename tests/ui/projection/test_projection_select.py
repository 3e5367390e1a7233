"""Colour by id range and health, search, filter and isolate in the
Projection view (pytest-qt, offscreen): what is drawn equals the core's
groups, hits and masks over exactly the drawn ids."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from explorer.core.sources import open_table
from explorer.core.tokens.groups import ID_BINS
from explorer.core.tokens.meta import KINDS
from explorer.core.tokens.search import search_pieces
from explorer.ui.projection import ProjectionView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


@pytest.fixture(scope="module")
def minilm():
    return open_table("minilm")


def _ready(qtbot, v, state, table):
    state.set_table(table)
    qtbot.waitUntil(lambda: v.result is not None and state.token_meta.value is not None, timeout=TIMEOUT)
    return v.result.ids


def test_colour_by_id_range_then_health_once_the_check_ran(qtbot, view):
    v, state, _ = view
    table = open_table("default")
    ids = _ready(qtbot, v, state, table)
    v.colour.choose("id_range")
    np.testing.assert_array_equal(v.plot.cloud.groups(), ids * ID_BINS // table.vocab_size + 1)
    assert "Id range" in v.info.legend.text() and f"{table.vocab_size - 1:,}" in v.info.legend.text()
    v.colour.choose("health")
    if state.health.value is None:  # lazy and unwanted here: the legend says so and offers to run it
        assert "has not run" in v.info.legend.text() and not v.points.show.health_button.isHidden()
        assert (v.plot.cloud.groups() == 0).all()
        v.points.show.health_button.click()
    qtbot.waitUntil(lambda: state.health.value is not None, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: (v.plot.cloud.groups() > 0).all(), timeout=TIMEOUT)
    np.testing.assert_array_equal(v.plot.cloud.groups(), state.health.value.categories[ids] + 1)
    assert "special" in v.info.legend.text() and v.points.show.health_button.isHidden()


def test_search_rings_labels_counts_hits_and_enter_selects(qtbot, view, minilm):
    v, state, _ = view
    ids = _ready(qtbot, v, state, minilm)
    v.search.search("queen")
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    want = search_pieces(state.token_meta.value.pieces, "queen").ids
    np.testing.assert_array_equal(v.points.hits.ids, want)
    drawn = np.intersect1d(want, ids)
    np.testing.assert_array_equal(v.points.shown_hits(), drawn)
    assert len(v.points.ring.data) == len(drawn)
    assert f"{len(want):,}</b> search hit" in v.points.show.search_label.text()
    v.plot.place_now()
    assert {i for i, _ in v.labelled()} >= set(drawn[:5].tolist())
    qtbot.keyClick(v.search.box, Qt.Key_Return)
    assert state.selected_id == minilm.tokenizer.id_of("queen")  # the exact piece first
    v.search.search("^##ing$", regex=True)
    qtbot.waitUntil(lambda: v.points.hits is not None and v.points.hits.query == "^##ing$", timeout=TIMEOUT)
    assert v.points.hits.ids.tolist() == [minilm.tokenizer.id_of("##ing")]


def test_a_bad_regex_is_an_inline_message(qtbot, view, minilm):
    v, state, _ = view
    _ready(qtbot, v, state, minilm)
    v.search.search("(ab", regex=True)
    qtbot.waitUntil(lambda: v.points.search_error != "", timeout=TIMEOUT)
    assert "Not a valid regular expression" in v.points.show.search_label.text()
    assert "border" in v.search.box.styleSheet() and v.points.hits is None
    v.search.search("ab", regex=True)
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    assert v.search.box.styleSheet() == "" and "Not a valid" not in v.points.show.search_label.text()


def test_filter_by_group_hits_only_isolate_and_show_all(qtbot, view, minilm):
    v, state, _ = view
    ids = _ready(qtbot, v, state, minilm)
    meta = state.token_meta.value
    v.colour.choose("kind")
    v.points.show.choose(f"group:{KINDS.index('word start')}")
    np.testing.assert_array_equal(np.sort(v.points.shown_ids), np.sort(ids[meta.kind[ids] == 0]))
    assert (v.plot.cloud.groups() == 1).all()
    assert f"Showing <b>{int((meta.kind[ids] == 0).sum()):,}</b> of {len(ids):,}" in v.points.show.count_label.text()
    v.search.search("ing")
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    v.points.show.choose("hits")
    np.testing.assert_array_equal(np.sort(v.points.shown_ids), np.intersect1d(ids, v.points.hits.ids))
    sel = minilm.tokenizer.id_of("king")
    state.set_selected_token(sel)
    qtbot.waitUntil(lambda: state.neighbors.value is not None and state.neighbors.value.token_id == sel,
                    timeout=TIMEOUT)
    v.points.show.isolate_button.click()
    keep = set([sel] + state.neighbors.value.ids() + v.points.hits.ids.tolist())
    assert (set(v.points.shown_ids.tolist()) == keep & set(ids.tolist())
            and "isolated" in v.points.show.count_label.text())
    v.points.show.all_button.click()
    assert len(v.points.shown_ids) == len(ids)
    state.set_table(open_table("default"))  # a new model: every point, no hits
    assert v.points.hits is None and v.points.filter.shows_all


def test_exports_carry_the_legend_and_the_metadata(qtbot, view, tmp_path):
    import csv

    from PySide6.QtGui import QColor, QImage

    from explorer.core.projection.csv_export import COORDINATE_COLUMNS
    from explorer.ui.style import class_color

    v, state, _ = view
    table = open_table("default")
    ids = _ready(qtbot, v, state, table)
    v.colour.choose("classes")
    v.search.search("s")
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    v.points.show.choose("hits")
    res = v.result
    # CSV: one row per fitted token (no highlighted extras here), metadata columns, the layout's coordinates
    path = tmp_path / "c.csv"
    n = v.export_coordinates_csv(str(path))
    rows = list(csv.reader(open(path, encoding="utf-8")))
    assert rows[0] == COORDINATE_COLUMNS + [res.axis_name(k) for k in range(res.n_components)]
    assert n == len(rows) - 1 >= len(ids)
    body = {int(r[0]): r for r in rows[1:]}
    first = len(COORDINATE_COLUMNS)
    got = np.array([[float(c) for c in body[i][first:]] for i in ids.tolist()])
    np.testing.assert_allclose(got, res.coords, rtol=1e-5, atol=1e-6)
    meta = state.token_meta.value
    assert all(body[i][4] == KINDS[meta.kind[i]] and body[i][3] == (state.classes.name_of(i) or "")
               for i in ids.tolist())
    shown = {i for i in ids.tolist() if body[i][8] == "1"}
    assert shown == set(np.intersect1d(ids, v.points.hits.ids).tolist()) and shown
    # SVG: the legend's words are in the file
    svg = tmp_path / "p.svg"
    v.export_plot(str(svg))
    text = svg.read_text(errors="replace")
    assert "neighbours" in text and "Classes" in text and state.classes.names[0] in text and "search hits" in text
    # PNG: the same image as the plain plot but for a legend box in the top right holding the class swatches
    plain, with_legend = tmp_path / "plain.png", tmp_path / "legend.png"
    v.plot.export(str(plain))
    v.export_plot(str(with_legend))
    a = QImage(str(plain)).convertToFormat(QImage.Format_RGB32)
    b = QImage(str(with_legend)).convertToFormat(QImage.Format_RGB32)
    assert a.size() == b.size()
    pa = np.array(a.constBits(), np.uint8).reshape(a.height(), a.width(), 4)  # a copy: the image owns the bits
    pb = np.array(b.constBits(), np.uint8).reshape(b.height(), b.width(), 4)
    ys, xs = np.nonzero(np.abs(pa.astype(int) - pb.astype(int)).sum(axis=2) > 30)
    assert len(xs) > 500 and xs.min() > a.width() * 0.4 and ys.max() < a.height() * 0.9
    box = pb[ys.min():ys.max() + 1, xs.min():xs.max() + 1, :3][..., ::-1].reshape(-1, 3).astype(int)  # BGR -> RGB
    swatch = QColor(class_color(0))
    near = np.abs(box - [swatch.red(), swatch.green(), swatch.blue()]).sum(axis=1) < 24
    assert near.sum() > 20  # the first class's swatch, opaque, inside the legend box


def test_too_many_hits_are_not_ringed_but_can_be_shown_alone(qtbot, view, minilm):
    from explorer.ui.projection.point_selection import RING_LIMIT

    v, state, _ = view
    ids = _ready(qtbot, v, state, minilm)
    v.search.search("e")
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    drawn = np.intersect1d(ids, v.points.hits.ids)
    assert len(drawn) > RING_LIMIT and len(v.points.ring.data) == 0
    assert "too many to ring" in v.points.show.search_label.text()
    v.points.show.choose("hits")
    np.testing.assert_array_equal(np.sort(v.points.shown_ids), drawn)
    assert len(v.points.ring.data) == 0 and "too many" not in v.points.show.search_label.text()
