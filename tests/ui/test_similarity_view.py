"""The Similarity view (pytest-qt, offscreen): matrices against numpy and
FACTS.md, clicks, the random-vector check and export."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.state import AppState
from explorer.ui.similarity_view import SimilarityView
from ui_helpers import standalone_view
from explorer.workers import JobRunner, await_all_workers


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, SimilarityView)


def test_empty_state(view):
    v, state, _ = view
    assert "Open a model" in v.empty.text()
    state.set_table(open_table("toy:robot"))
    assert "Type some text" in v.empty.text()


def test_robot_values_from_facts(view):
    v, state, _ = view
    t = open_table("toy:robot")
    state.set_table(t)
    state.set_text("robot arm box tool")
    robot, arm, box, tool = (t.tokenizer.id_of(w) for w in ("robot", "arm", "box", "tool"))
    assert v.token_ids() == [robot, arm, box, tool]
    # FACTS.md: cos(robot, arm) = 0.995, cos(robot, box) = 0, cos(robot, tool) = -0.316
    assert float(v.value_text(robot, arm)) == 0.995
    assert float(v.value_text(robot, box)) == 0.0
    assert float(v.value_text(robot, tool)) == -0.316
    texts = v.cell_texts()
    assert len(texts) == 16 and "+0.995" in texts and "-0.316" in texts
    # the whole matrix against numpy
    x = t.rows(v.token_ids()).astype(np.float64)
    n = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(v.matrix(), x @ x.T / np.outer(n, n), atol=1e-12)
    # dot products: 1.7, 0, -0.5
    v.set_metric("dot")
    np.testing.assert_allclose(v.matrix(), x @ x.T, atol=1e-12)
    assert float(v.value_text(robot, arm)) == 1.7 and float(v.value_text(robot, tool)) == -0.5
    v.set_metric("euclidean")
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    np.testing.assert_allclose(v.matrix(), d, atol=1e-9)


def test_three_regimes_side_by_side(view):
    v, state, _ = view
    t = open_table("minilm")
    state.set_table(t)
    state.set_text("cat dog airplane")
    ids = v.token_ids()
    assert len(ids) == 3  # [CLS] and [SEP] are left out
    a = np.array(ids, dtype=np.float64)
    np.testing.assert_array_equal(v.id_distances(), np.abs(a[:, None] - a[None]))
    oh = v.one_hot_distances()
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(oh[off], math.sqrt(2))
    np.testing.assert_array_equal(np.diag(oh), 0)
    # the learned cosine: cat is closer to dog than to airplane
    m = v.matrix()
    assert m[0, 1] > m[0, 2]


def test_click_a_cell_selects_the_pair(qtbot, view):
    v, state, _ = view
    t = open_table("toy:robot")
    state.set_table(t)
    state.set_text("robot arm box tool")
    qtbot.wait(50)
    # through the scene: the centre of cell (row 2 = box, column 3 = tool)
    vb = v.main.plot.getViewBox()
    scene_pt = vb.mapViewToScene(QPointF(3.5, 2.5))

    class Ev:
        def button(self):
            return Qt.LeftButton

        def scenePos(self):
            return scene_pt

    with qtbot.waitSignal(v.pair_selected) as pair, qtbot.waitSignal(v.token_selected) as sel:
        v._on_scene_clicked(Ev())
    assert pair.args == [2, 3]
    assert sel.args == [2]
    assert state.selected_id == 2
    assert v.main.cell_rect.isVisible()
    assert "box" in v.info.text() and "tool" in v.info.text()
    # the selected token's row and column are outlined in all three maps
    assert all(m.row_rect.isVisible() for m in (v.main, v.ids_map, v.onehot))


def test_added_tokens_join_and_cap(view):
    v, state, _ = view
    t = open_table("default")
    state.set_table(t)
    state.set_text("the cat")
    v.search.setText("dog")
    v._on_search_return_pressed()
    dog = t.tokenizer.id_of("dog")
    assert dog in state.extra_ids and v.token_ids()[-1] == dog
    for i in range(3, 193):
        state.add_extra_token(i)
    assert len(v.token_ids()) <= 200
    assert v.matrix().shape == (len(v.token_ids()),) * 2
    assert v.cell_texts() == []  # too many cells to write values in


def test_random_vector_check(qtbot, view):
    v, state, runner = view
    t = open_table("random:3000x768")
    state.set_table(t)
    with qtbot.waitSignal(runner.succeeded, timeout=30_000):
        v.show_page(1)
    chk = v.check()
    assert chk.dim == 768
    assert chk.theory_std == pytest.approx(0.0361, abs=5e-5)
    assert chk.random_std == pytest.approx(1 / math.sqrt(768), rel=0.05)
    assert "0.0361" in v.facts.text()
    assert "0.108" in v.facts.text()
    # (0.99)^768 = 0.000444: 99.956 % of the volume in the outer shell (FACTS: 99.955 %, rounded)
    assert f"{0.99 ** 768:.5g}" in v.facts.text()
    x, y = v.rand_curve.getData()
    np.testing.assert_allclose(y, np.exp(-x * x * 768 / 2) / math.sqrt(2 * math.pi / 768))


def test_nonfinite_rows_do_not_crash(view, tmp_path):
    v, state, _ = view
    t = open_table("toy:robot")
    t.matrix()[1, 0] = np.nan  # a broken weight in "arm"
    state.set_table(t)
    state.set_text("robot arm box")
    assert np.isfinite(v.matrix()).all()
    assert "NaN" in v.info.text()
    p = tmp_path / "m.csv"
    assert v.export_matrix_csv(str(p)) == 3
    rows = list(csv.reader(open(p, encoding="utf-8")))
    assert rows[0][0] == "cosine" and len(rows) == 4
    png, svg = tmp_path / "m.png", tmp_path / "m.svg"
    v.export_plot(str(png))
    v.export_plot(str(svg))
    assert png.stat().st_size > 1000 and svg.stat().st_size > 1000


def test_model_change_drops_a_running_check(qtbot, view):
    """A random-vector check still running for the old table is cancelled when
    another table (same d) is installed while the check page is hidden; its
    result must never be shown as the new table's."""
    v, state, runner = view
    state.set_table(open_table("random:3000x768"))
    v.show_page(1)  # starts the check for the first table
    assert runner.running
    v.show_page(0)
    state.set_table(open_table("random:2000x768"))
    assert not runner.running
    await_all_workers()
    qtbot.wait(50)  # deliver anything the old worker emitted
    assert v.check() is None
    with qtbot.waitSignal(runner.succeeded, timeout=30_000):
        v.show_page(1)
    assert v.check() is not None and v.check().dim == 768
