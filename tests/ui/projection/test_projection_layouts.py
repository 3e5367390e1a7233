"""The Projection view with t-SNE (pytest-qt, offscreen, standalone on its own
AppState): the layout runs through the state's projection Computation, its
frames move the points on screen while it converges, the trustworthiness is
shown, Cancel keeps the layout where it stopped, and a new method or model
cancels the old run so that none of its frames land."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.projection.job import ProjectionResult
from explorer.core.projection.manifold import ManifoldResult
from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from explorer.workers import await_all_workers
from tests.support.ui_helpers import standalone_view

TIMEOUT = 120_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def _pca_drawn(qtbot, v, state, spec):
    table = open_table(spec)
    state.set_table(table)
    qtbot.waitUntil(lambda: isinstance(v.result, ProjectionResult) and v.result.spec == table.spec, timeout=TIMEOUT)
    return table


def test_tsne_moves_live_then_shows_its_trustworthiness(qtbot, view):
    v, state, _ = view
    _pca_drawn(qtbot, v, state, "default")
    assert v.method.method == "pca" and v.axes_controls.isVisible()  # PCA stays the default
    from PySide6.QtCore import QTimer

    frames, seen = [], []  # the frames the job produced; what the plot showed while it ran

    def on_frame(frame):
        if isinstance(frame, ManifoldResult):
            frames.append(frame.coords.copy())

    def look():
        if state.projection.running and v.result is not None:
            seen.append((v.plot.cloud.positions().copy(), v.run_strip.isVisible()))

    ticker = QTimer()
    ticker.timeout.connect(look)
    ticker.start(10)  # (a 0 ms look would keep the GIL from the worker)
    state.projection.produced.connect(on_frame)
    assert "Explained variance" in v.info.variance_label.text()
    v.set_method("tsne")
    # issue 25, item 13: while the layout computes, the PCA's time and variance are gone from the side panel
    assert "Explained variance" not in v.info.variance_label.text() and "Fitted on" not in v.info.fit_label.text()
    assert state.projection_method == "tsne" and v.fit_mode == "all"  # 214 rows: the whole vocabulary
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.done, timeout=TIMEOUT)
    state.projection.produced.disconnect(on_frame)  # it holds the view
    ticker.stop()
    res = v.result
    assert res is state.projection.value and res.method == "tsne" and len(res.ids) == state.table.trained_rows
    # a frame every 25 iterations; the newest drawn each turn (the strip with Cancel over it), and
    # the points moved on screen while it ran
    assert len(frames) == res.n_iter // 25 + 1
    live = [(pos, strip) for pos, strip in seen
            if any(pos.shape == f.shape and np.allclose(pos, f, rtol=1e-6) for f in frames[:-1])]
    assert all(strip for _, strip in live)
    assert len({pos.tobytes() for pos, _ in live}) >= 2 and not np.allclose(live[0][0], live[-1][0])
    np.testing.assert_allclose(v.plot.cloud.positions(), res.coords, rtol=1e-6)
    assert not v.run_strip.isVisible() and not v.axes_controls.isVisible()
    assert f"{res.trustworthiness:.3f}" in v.info.variance_label.text()
    assert f"trustworthiness {res.trustworthiness:.3f}" in v.plot.plot_item.titleLabel.text
    assert "t-SNE 1" in v.plot.plot_item.getAxis("bottom").labelText
    # back to PCA: exact again, with its axes (the layout's trustworthiness gone at once)
    v.set_method("pca")
    assert "Trustworthiness" not in v.info.variance_label.text()
    qtbot.waitUntil(lambda: isinstance(v.result, ProjectionResult), timeout=TIMEOUT)
    assert v.axes_controls.isVisible() and "PC1" in v.plot.plot_item.getAxis("bottom").labelText


def test_cancel_keeps_the_layout_where_it_stopped(qtbot, view):
    v, state, _ = view
    _pca_drawn(qtbot, v, state, "minilm")
    v.set_method("tsne")
    assert v.fit_mode == "sample" and v.fit.sample_size == 3000
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.iteration > 0, timeout=TIMEOUT)
    assert v.run_strip.isVisible() and v.run_strip.cancel_button.isVisible()
    v.run_strip.cancel_button.click()
    await_all_workers()
    qtbot.waitUntil(lambda: not v.run_strip.isVisible(), timeout=TIMEOUT)
    res = v.result
    assert isinstance(res, ManifoldResult) and not res.done and res.iteration < res.n_iter
    assert "stopped at iteration" in v.plot.plot_item.titleLabel.text and "Stopped" in v.info.variance_label.text()
    np.testing.assert_allclose(v.plot.cloud.positions(), res.coords, rtol=1e-6)


def test_a_new_method_or_model_cancels_the_old_run(qtbot, view):
    v, state, _ = view
    _pca_drawn(qtbot, v, state, "minilm")
    v.set_method("tsne")
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult), timeout=TIMEOUT)
    late = []
    state.projection.produced.connect(late.append)
    v.set_method("pca")
    qtbot.waitUntil(lambda: isinstance(v.result, ProjectionResult), timeout=TIMEOUT)
    await_all_workers()  # the t-SNE worker stopped: nothing of it may land
    assert (late == [] and isinstance(v.result, ProjectionResult)
            and isinstance(state.projection.value, ProjectionResult))
    # a model switch mid-layout: the old model's layout never lands on the new one
    v.set_method("tsne")
    qtbot.waitUntil(lambda: state.projection.running, timeout=TIMEOUT)
    table = open_table("default")
    state.set_table(table)
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.done, timeout=TIMEOUT)
    assert v.result.spec == table.spec and state.projection_method == "tsne"
    assert v.result.ids.max() < table.vocab_size


def test_a_layout_asked_for_before_the_tokens_of_interest_lays_them_out(qtbot):
    from explorer.state.app_state import AppState

    state, consumer = AppState(), object()
    state.set_text("the river bank")
    table = open_table("minilm")
    state.set_table(table)
    state.projection.want(consumer)
    state.request_projection("sample", 200, "tsne")  # nobody wanted the tokens of interest yet
    assert state.projection.key.interest == ()
    state.interest.want(consumer)
    # the layout asked for first may end before the tokens of interest are known: wait for the one with them
    qtbot.waitUntil(lambda: state.interest.value is not None and state.projection.key.interest != ()
                    and isinstance(state.projection.value, ManifoldResult) and state.projection.value.done,
                    timeout=TIMEOUT)
    res = state.projection.value
    assert set(state.interest.value.all_ids()) <= set(res.ids.tolist())
    assert "tokens of interest" in res.description and len(res.ids) > 200


def test_custom_axes_project_the_vocabulary_on_named_directions(qtbot, view):
    v, state, _ = view
    table = _pca_drawn(qtbot, v, state, "minilm")
    assert not v.axes_entry.isVisible()
    v.set_method("axes")
    qtbot.waitUntil(lambda: isinstance(v.result, ProjectionResult) and bool(v.result.axis_names), timeout=TIMEOUT)
    assert v.axes_entry.isVisible() and not v.axes_controls.isVisible()
    assert v.result.axis_names == ("man → woman", "king")
    assert "man → woman" in v.plot.plot_item.getAxis("bottom").labelText
    e = table.matrix().astype(np.float64)
    man, woman, king = (table.tokenizer.id_of(w) for w in ("man", "woman", "king"))
    d = (e[woman] - e[man]) / np.linalg.norm(e[woman] - e[man])
    np.testing.assert_allclose(v.point_xy(king), [e[king] @ d, np.linalg.norm(e[king])], rtol=1e-4, atol=1e-5)
    v.axes_entry.set_texts("king → queen", "qzxqzx")
    qtbot.waitUntil(lambda: "no token 'qzxqzx'" in v.empty.text(), timeout=TIMEOUT)
    v.axes_entry.set_texts("king → queen", "woman")
    qtbot.waitUntil(lambda: v.result is not None and v.result.axis_names == ("king → queen", "woman"), timeout=TIMEOUT)


def test_a_layout_asked_for_again_comes_from_the_cache_and_can_be_computed_again(qtbot, view):
    # t-SNE: the cache works alike for every method (tests/core/projection/test_layout_cache.py), and
    # a UMAP here would compile it (~12 s) once more in this test process
    v, state, _ = view
    _pca_drawn(qtbot, v, state, "default")
    v.set_method("tsne")
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.done, timeout=TIMEOUT)
    first = v.result
    assert not first.cached and "layout cache" not in v.info.fit_label.text()
    assert f"seed 0. Computed in {first.seconds:.1f} s. Other tokens" in v.info.fit_label.text()
    v.set_method("pca")
    qtbot.waitUntil(lambda: isinstance(v.result, ProjectionResult), timeout=TIMEOUT)
    v.set_method("tsne")
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.done, timeout=TIMEOUT)
    again = v.result
    assert again.cached and again is not first
    np.testing.assert_array_equal(v.plot.cloud.positions(), first.coords)
    assert "read from the layout cache" in v.info.fit_label.text()
    assert f"{first.trustworthiness:.3f}" in v.info.variance_label.text()
    v.info.fit_label.linkActivated.emit("recompute")  # the user clicks "Compute again"
    qtbot.waitUntil(lambda: isinstance(v.result, ManifoldResult) and v.result.done and v.result is not again,
                    timeout=TIMEOUT)
    assert not v.result.cached and "layout cache" not in v.info.fit_label.text()
    np.testing.assert_allclose(v.result.coords, first.coords, atol=1e-4 * np.abs(first.coords).max())
