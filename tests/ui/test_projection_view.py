"""The Projection view (pytest-qt, offscreen): PCA in the worker, highlights,
clicks, search, analogies and export."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.state import AppState
from explorer.ui.projection_view import ProjectionView
from ui_helpers import standalone_view
from explorer.workers import JobRunner, await_all_workers


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def load(qtbot, view, state, runner, spec, text=None):
    table = open_table(spec)
    with qtbot.waitSignal(runner.succeeded, timeout=30_000):
        state.set_table(table)
    if text is not None:
        state.set_text(text)
    qtbot.waitUntil(lambda: view.result is not None and view.result.spec == table.spec, timeout=30_000)
    return table


def test_empty_state_says_what_to_do(view):
    v, _state, _runner = view
    assert "Open a model" in v.empty.text()


def test_bundled_model_coordinates_match_sklearn_and_selection(qtbot, view):
    from sklearn.decomposition import PCA

    v, state, runner = view
    table = load(qtbot, v, state, runner, "default", "the quick fox chases the sleepy cat")
    res = v.result
    assert res.mode == "all" and v.fit_mode == "all"
    e = table.matrix()[: table.trained_rows].astype(np.float64)
    ref = PCA(n_components=10, svd_solver="full").fit(e)
    np.testing.assert_allclose(res.explained, ref.explained_variance_ratio_, rtol=1e-3)
    # the scatter shows PC1 and PC2 of every row, up to sign
    x, y = v.scatter.getData()
    ref_xy = ref.transform(e)[:, :2]
    got = np.column_stack([x, y])
    s = np.sign((got * ref_xy).sum(0))
    np.testing.assert_allclose(got * s, ref_xy, atol=1e-3 * np.abs(ref_xy).max())
    # explained variance on the axes
    assert f"{ref.explained_variance_ratio_[0]:.1%}" in v._pi.getAxis("bottom").labelText
    # switch components: PC2 x PC3
    v.set_axes(1, 2)
    x, y = v.scatter.getData()
    np.testing.assert_allclose(np.abs(x), np.abs(ref.transform(e)[:, 1]), atol=1e-3)
    np.testing.assert_allclose(np.abs(y), np.abs(ref.transform(e)[:, 2]), atol=1e-3)
    # text tokens highlighted; selected token drawn and joined to its neighbours
    fox = table.tokenizer.id_of("fox")
    assert fox in v.interest()["text"]
    state.set_selected_token(fox)
    sx, sy = v.selected_item.getData()
    np.testing.assert_allclose([sx[0], sy[0]], v.point_xy(fox))
    assert len(v.selected_neighbors()) == 8
    lx, _ = v.nb_lines.getData()
    assert len(lx) == 16
    qtbot.wait(80)
    assert fox in [tid for tid, _ in v.labelled()]


def test_clicking_a_point_selects_its_token(qtbot, view):
    v, state, runner = view
    table = load(qtbot, v, state, runner, "default", "the cat")
    cat = table.tokenizer.id_of("dog")
    x, y = v.point_xy(cat)
    pts = v.scatter.pointsAt(QPointF(float(x), float(y)))
    assert len(pts)
    with qtbot.waitSignal(v.token_selected) as blocker:
        v._on_scatter_clicked(v.scatter, [p for p in pts if p.data() == cat])
    assert blocker.args == [cat]
    assert state.selected_id == cat


def test_labels_never_overlap(qtbot, view):
    v, state, runner = view
    load(qtbot, v, state, runner, "minilm", "the king and the queen walked to the river bank")
    qtbot.wait(100)
    shown = v.labelled()
    assert shown
    rects = v.label_rects()
    assert len(rects) == len(shown) == sum(item.isVisible() for item in v.labels)
    view_rect = v._pi.getViewBox().sceneBoundingRect()
    assert all(view_rect.contains(r) for r in rects)
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            inter = rects[i].intersected(rects[j])
            assert inter.width() * inter.height() < 4, (i, j)


def test_search_adds_and_selects(qtbot, view):
    v, state, runner = view
    table = load(qtbot, v, state, runner, "default", "the cat")
    v.search.setText("tiger")
    v._on_search_return_pressed()
    tiger = table.tokenizer.id_of("tiger")
    assert tiger in state.extra_ids
    assert state.selected_id == tiger
    assert tiger in v.interest()["extra"]


def test_analogy_on_a_built_table(qtbot, view, tmp_path):
    from explorer.core import geometry as geo

    v, state, runner = view
    table = load(qtbot, v, state, runner, "minilm", "king man woman")
    ids = [table.tokenizer.id_of(w) for w in ("king", "man", "woman")]
    res = v.solve_analogy(*ids)
    # independent brute force over unit rows
    e = table.matrix()[: table.trained_rows].astype(np.float64)
    en = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
    target = en[ids[0]] - en[ids[1]] + en[ids[2]]
    cos = en @ target / np.linalg.norm(target)
    cos[ids] = -np.inf
    want = list(np.argsort(-cos)[:5])
    assert [r.id for r in res] == want
    assert v.an_table.rowCount() == 5
    assert table.piece(want[0]) == "queen"
    x, _ = v.an_lines.getData()
    assert len(x) == 4
    # the target point is the parallelogram's fourth corner
    pa, pb, pc = (v.point_xy(i) for i in ids)
    tx, ty = v.an_points.getData()
    np.testing.assert_allclose([tx[0], ty[0]], pa - pb + pc, atol=1e-5)
    with qtbot.waitSignal(v.token_selected) as blocker:
        v._on_analogy_cell_clicked(0, 0)
    assert blocker.args == [want[0]]
    assert geo  # noqa


def test_fit_modes_and_export(qtbot, view, tmp_path):
    v, state, runner = view
    table = load(qtbot, v, state, runner, "default", "the quick fox")
    with qtbot.waitSignal(runner.succeeded, timeout=30_000):
        v.set_fit_mode("chosen")
    qtbot.waitUntil(lambda: v.result is not None and v.result.mode == "chosen", timeout=10_000)
    chosen = sorted(set(v.interest()["text"]) | set(v.interest()["neighbors"]) | set(v.interest()["extra"]))
    assert v.result.ids.tolist() == chosen
    assert "chosen" in v.fit_label.text()
    with qtbot.waitSignal(runner.succeeded, timeout=30_000):
        v.set_fit_mode("sample", sample_size=100)
    qtbot.waitUntil(lambda: v.result is not None and v.result.mode == "sample", timeout=10_000)
    assert 100 <= len(v.result.ids) <= 100 + len(chosen)
    assert v.sample_spin.isVisible()
    p = tmp_path / "coords.csv"
    n = v.export_coordinates_csv(str(p))
    rows = list(csv.reader(open(p, encoding="utf-8")))
    assert rows[0][:4] == ["id", "piece", "fitted", "class"] and len(rows) == n + 1
    first = rows[1]
    assert table.piece(int(first[0])) == first[1]
    nb = tmp_path / "nb.csv"
    assert v.export_neighbors_csv(str(nb)) > 0
    png, svg = tmp_path / "p.png", tmp_path / "p.svg"
    v.export_plot(str(png))
    v.export_plot(str(svg))
    assert png.stat().st_size > 1000 and svg.stat().st_size > 1000


def test_model_switch_recomputes_and_tiny_table(qtbot, view):
    v, state, runner = view
    load(qtbot, v, state, runner, "default", "the cat")
    t = load(qtbot, v, state, runner, "toy:robot", "robot arm")
    assert v.result.spec == t.spec
    assert v.result.coords.shape == (4, 3)
    v.set_axes(0, 5)  # PC6 does not exist for d = 3: drawn at 0, no crash
    _, y = v.scatter.getData()
    assert np.all(y == 0)
