"""The training view under pytest-qt: start, pause, resume, stop, reset, errors,
saving and exporting, with the charts checked against the run's own metrics."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.app import make_app
from explorer.core.corpus import CLASSES
from explorer.core.sources import open_table
from explorer.core.training import ConfigError, TrainConfig
from explorer.state import AppState
from explorer.ui.training_view import TrainingView
from explorer.workers import JobRunner, await_all_workers

TIMEOUT = 30_000


@pytest.fixture
def view(qtbot):
    make_app()
    state = AppState()
    runner = JobRunner()
    v = TrainingView(state, runner=runner)
    qtbot.addWidget(v)
    v.resize(1000, 700)
    v.show()
    v.set_config(dim=8, batch_size=16)
    yield v
    v.shutdown()
    assert not runner.running
    assert await_all_workers(10_000)


def _wait_steps(qtbot, view, n):
    qtbot.waitUntil(lambda: view.history is not None and view.history.n >= n, timeout=TIMEOUT)


def test_empty_state_says_what_to_do(view):
    assert "Start" in view.empty.textItem.toPlainText()
    assert view.start_button.isEnabled() and not view.pause_button.isEnabled()
    assert not view.save_button.isEnabled() and not view.export_button.isEnabled()


def test_start_pause_resume_stop(qtbot, view):
    view.set_config(steps=100000)
    view.start()
    assert view.running and not view.start_button.isEnabled()
    _wait_steps(qtbot, view, 30)
    # the charts receive data from the timer, not on every step
    qtbot.waitUntil(lambda: view.loss_raw.getData()[0] is not None and len(view.loss_raw.getData()[0]) >= 30,
                    timeout=TIMEOUT)
    h = view.history
    xs, ys = view.loss_raw.getData()
    np.testing.assert_allclose(ys[:30], h.series("loss")[:30])
    gx, gy = view.grad_curve.getData()
    np.testing.assert_allclose(gy[:30], 100 * h.series("input_grad_rows")[:30] / h.vocab_size)
    assert view.config_error.isHidden()

    view.pause()
    assert view.paused and view.pause_button.text() == "Resume"
    qtbot.wait(150)  # a batch in flight may still land
    n = view.history.n
    qtbot.wait(300)
    assert view.history.n == n, "steps went on while paused"
    assert view.save_button.isEnabled()  # a paused run can be saved

    view.resume()
    assert not view.paused
    _wait_steps(qtbot, view, n + 10)

    view.stop()
    assert not view.running and not view._runner.running
    n = view.history.n
    qtbot.wait(200)
    assert view.history.n == n
    assert "Stopped" in view.message.text()
    assert view.save_button.isEnabled() and view.export_button.isEnabled()

    view.reset()
    assert view.history is None and not view.reset_button.isEnabled()
    assert view.empty.isVisible()


@pytest.mark.parametrize("kw", [dict(sparse=True, tied=True, optimizer="sgd"),
                                dict(optimizer="sparse_adam", sparse=False),
                                dict(sparse=True, optimizer="adam")])
def test_impossible_settings_are_explained_not_started(qtbot, view, kw):
    view.set_config(**kw)
    with pytest.raises(ConfigError) as exc:
        TrainConfig(**{**dict(steps=1), **kw}).validate()
    assert not view.start_button.isEnabled()
    assert view.config_error.isVisible() or not view.config_error.isHidden()
    assert str(exc.value)[5:40] in view.config_error.text()
    view.start()
    assert not view.running
    view.set_config(sparse=False, tied=False, optimizer="adam")
    assert view.start_button.isEnabled() and view.config_error.isHidden()


def test_tied_run_shows_the_dense_total(qtbot, view):
    view.set_config(tied=True, steps=20)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT) as blocker:
        view.run_steps_then(20)
    assert blocker.args == [20]
    h = view.history
    np.testing.assert_array_equal(h.series("grad_rows"), h.vocab_size)
    tx, ty = view.total_curve.getData()
    np.testing.assert_allclose(ty, 100.0)
    assert view.total_curve.isVisible()
    assert "tied" in view.sparsity_plot.titleLabel.text


def test_run_steps_then_redraws_every_chart(qtbot, view):
    called = []
    view.set_config(steps=10)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(60, lambda: called.append(view.history.last_step))
    assert called and called[0] >= 60
    h = view.history
    img = view.raster_img.image
    ref, _steps = h.raster()
    np.testing.assert_array_equal(img, ref)
    assert img.shape == (h.vocab_size, min(h.n, 400))
    # per-row charts: one point per row at its corpus count (0.5 for never-seen tokens)
    x, y = view.updates_scatter.getOriginalDataset()
    np.testing.assert_allclose(x, np.maximum(h.counts, 0.5))
    np.testing.assert_array_equal(y, h.grad_count)
    assert view.drift_scatter.getOriginalDataset()[1].max() > 0
    pts = view.pca_scatter.data
    assert len(pts) == h.vocab_size
    # class names sit at the centre of their class in the PCA plot
    k = 0
    mask = h.labels == k
    centre = view._pca_coords[mask].mean(axis=0)
    pos = view.pca_labels[k].pos()
    assert (pos.x(), pos.y()) == pytest.approx((float(centre[0]), float(centre[1])), rel=1e-5)
    assert view.pca_labels[k].textItem.toPlainText() == list(CLASSES)[k]
    assert "silhouette" in view.pca_plot.titleLabel.text
    assert max(view.frame_times_ms) < 1000


def test_divergence_stops_with_a_message_and_keeps_the_charts(qtbot, view):
    view.set_config(optimizer="sgd", lr=1000.0, batch_size=32, dim=16, steps=2000)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(2000)
    assert not view.running
    assert "diverged" in view.message.text()
    assert view.history is not None and view.history.n > 0
    assert view.history.n < 2000
    assert len(view.loss_raw.getData()[0]) > 0


def test_save_as_model_folder_opens_in_the_explorer(qtbot, view, tmp_path):
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(30)
    folder = tmp_path / "trained"
    with qtbot.waitSignal(view.model_saved, timeout=5000) as blocker:
        view.save_model(str(folder))
    assert blocker.args == [str(folder)]
    table = open_table(str(folder))
    assert (table.vocab_size, table.dim) == (view.history.vocab_size, 8)
    trained = view._run.model.embed_tokens.weight.detach().numpy()
    np.testing.assert_array_equal(table.matrix(), trained)
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["tie_word_embeddings"] is False


def test_exports(qtbot, view, tmp_path):
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(25)
    n = view.history.n
    view.export_image(str(tmp_path / "charts.png"))
    view.export_image(str(tmp_path / "charts.svg"))
    view.export_csv(str(tmp_path / "steps.csv"))
    view.export_csv(str(tmp_path / "rows.csv"), rows=True)
    assert (tmp_path / "charts.png").stat().st_size > 5000
    assert "<svg" in (tmp_path / "charts.svg").read_text()[:2000]
    lines = (tmp_path / "steps.csv").read_text().splitlines()
    assert len(lines) == n + 1
    assert float(lines[1].split(",")[1]) == pytest.approx(view.history.series("loss")[0], rel=1e-5)
    assert len((tmp_path / "rows.csv").read_text().splitlines()) == view.history.vocab_size + 1


def test_text_file_corpus(qtbot, view):
    view.corpus_combo.setCurrentIndex(1)
    assert not view.start_button.isEnabled() and "text file" in view.config_error.text()
    view.set_text_corpus("the cat sat on the mat .\nthe dog sat on the log .\n" * 20, "cats.txt")
    assert view.start_button.isEnabled()
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(20)
    words = set("the cat sat on mat . dog log".split())
    assert view.history.vocab_size == len(words) + 2
    assert view._run.corpus.words[2] == "the"


def test_model_tokenizer_corpus_needs_a_model_and_stops_on_switch(qtbot, view):
    view.set_text_corpus("the cat sees the dog .\n" * 50, "t.txt", use_model_tokenizer=True)
    assert "no tokenizer" in view.config_error.text()
    view._state.set_table(open_table("default"))
    assert view.start_button.isEnabled()
    view.set_config(steps=100000)
    view.start()
    _wait_steps(qtbot, view, 5)
    view._state.set_table(open_table("toy:robot"))
    assert not view.running and "model changed" in view.message.text()


def test_speed_control_paces_the_run(qtbot, view):
    view.set_config(steps=100000, steps_per_second=30.0)
    view.start()
    _wait_steps(qtbot, view, 1)
    n0 = view.history.n
    qtbot.wait(1000)
    done = view.history.n - n0
    assert 10 <= done <= 45
    view.speed_combo.setCurrentIndex(0)  # as fast as possible, at once
    qtbot.wait(300)
    assert view.history.n - n0 > done


def test_shutdown_during_a_run_is_clean(qtbot, view):
    view.set_config(steps=100000)
    view.start()
    _wait_steps(qtbot, view, 5)
    view.pause()
    view.shutdown()
    assert not view.running and not view._runner.running
    assert await_all_workers(10_000)


def test_run_steps_then_during_a_longer_run_fires_mid_run(qtbot, view):
    view.set_config(steps=100000)
    view.start()
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT) as blocker:
        view.run_steps_then(40)
    assert blocker.args[0] >= 40 and view.running  # the run goes on


def test_run_steps_then_with_impossible_settings_still_answers(qtbot, view):
    view.set_config(sparse=True, tied=True)
    called = []
    with qtbot.waitSignal(view.steps_reached, timeout=2000) as blocker:
        view.run_steps_then(10, lambda: called.append(True))
    assert blocker.args == [0] and called and not view.running


def test_a_text_too_short_to_train_on_is_explained(qtbot, view):
    view.set_text_corpus("just three words", "short.txt")
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(10)
    assert not view.running and "too short" in view.message.text()
    assert view.start_button.isEnabled()
