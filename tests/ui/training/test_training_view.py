"""The training view under pytest-qt, on its own AppState: start, pause, resume,
stop, reset, errors, saving and exporting, with the charts checked against
the run's own history and frames."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog

from explorer.core.errors import user_message
from explorer.core.sources import open_table
from explorer.core.training.charts import binned
from explorer.core.training.config import DEFAULT_LR, ConfigError, TrainConfig
from explorer.core.training.language import vocabulary
from explorer.core.training.lessons import training_lesson
from explorer.core.training.session import Phase
from explorer.ui.style import class_color, plot_colors
from explorer.ui.training import TrainingView
from explorer.ui.training.charts import MAX_POINTS, RASTER_ROWS
from explorer.workers import JobRunner, await_all_workers
from tests.support.training_clock import FakeClock  # noqa: E402
from tests.support.ui_helpers import standalone_view

TIMEOUT = 30_000


@pytest.fixture
def view(qtbot):
    for v, _state, _runner in standalone_view(qtbot, TrainingView):
        v.set_config(dim=8, batch_size=16)
        yield v


def _wait_steps(qtbot, view, n):
    qtbot.waitUntil(lambda: view.history is not None and view.history.n >= n, timeout=TIMEOUT)


def _wait_phase(qtbot, view, phase):
    qtbot.waitUntil(lambda: view.session.phase is phase, timeout=TIMEOUT)


def _run(qtbot, view, n, **kw):
    view.set_config(**kw)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT) as blocker:
        view.run_steps_then(n)
    return blocker.args[0]


def test_empty_state_says_what_to_do(view):
    assert "Start" in view.caption.text() and view.caption.isVisible()
    b = view.buttons
    assert b.start_button.isEnabled() and not b.pause_button.isEnabled()
    assert not b.save_button.isEnabled() and not b.export_button.isEnabled()


def test_start_pause_resume_stop_reset(qtbot, view):
    b = view.buttons
    view.set_config(steps=100000)
    view.start()
    assert view.running and not b.start_button.isEnabled() and not view.settings.lr_spin.isEnabled()
    _wait_steps(qtbot, view, 30)
    # the charts receive the data from the timer, not on every step
    charts = view.charts
    qtbot.waitUntil(lambda: charts.loss.raw.getData()[0] is not None and len(charts.loss.raw.getData()[0]) >= 30,
                    timeout=TIMEOUT)
    assert view.config_error.isHidden() and f"E {len(vocabulary()[0])} × 8, untied" in view.caption.text()

    b.pause_button.click()
    assert view.paused and b.pause_button.text() == "Resume"
    assert not b.save_button.isEnabled()  # not before the job has stopped stepping
    qtbot.waitUntil(lambda: view.session.held, timeout=TIMEOUT)
    assert b.save_button.isEnabled() and "Paused at step" in view.readout.message.text()
    held = view.session.last_step
    # held: the charts show every step so far (binned to MAX_POINTS per curve)
    h = view.history
    xs, ys = charts.loss.raw.getData()
    np.testing.assert_allclose(xs, binned(h.series("step"), MAX_POINTS)[0])
    np.testing.assert_allclose(ys, binned(h.series("loss"), MAX_POINTS)[0])
    gx, gy = charts.sparsity.grad.getData()
    np.testing.assert_allclose(gy, binned(100 * h.series("input_grad_rows") / h.vocab_size, MAX_POINTS)[0])
    assert held - (h.n // MAX_POINTS + 1) <= xs[-1] <= held

    b.pause_button.click()  # Resume
    assert not view.paused and b.pause_button.text() == "Pause"
    _wait_steps(qtbot, view, held + 10)
    # the run went on from where it held: no step was done while paused
    np.testing.assert_array_equal(view.history.series("step")[: held + 10], np.arange(1, held + 11))

    b.stop_button.click()
    assert not view.running and not b.stop_button.isEnabled()
    _wait_phase(qtbot, view, Phase.STOPPED)
    assert "Stopped at step" in view.readout.message.text()
    assert b.save_button.isEnabled() and b.export_button.isEnabled() and b.start_button.isEnabled()
    assert view.settings.lr_spin.isEnabled()

    b.reset_button.click()
    assert view.history is None and not b.reset_button.isEnabled()
    assert "Start" in view.caption.text() and len(charts.loss.raw.getData()[0]) == 0
    assert charts.pca.points.data.size == 0 and not any(label.isVisible() for label in charts.pca.labels)


@pytest.mark.parametrize("kw", [dict(sparse=True, tied=True, optimizer="sgd"),
                                dict(optimizer="sparse_adam", sparse=False),
                                dict(sparse=True, optimizer="adam")])
def test_impossible_settings_are_explained_not_started(view, kw):
    view.set_config(**kw)
    with pytest.raises(ConfigError) as exc:
        TrainConfig(**{**dict(steps=1), **kw}).validate()
    assert not view.buttons.start_button.isEnabled() and not view.config_error.isHidden()
    assert str(exc.value)[5:40] in view.config_error.text()
    assert view.buttons.start_button.toolTip() == view.config_error.text()
    view.start()
    assert not view.running
    view.set_config(sparse=False, tied=False, optimizer="adam")
    assert view.buttons.start_button.isEnabled() and view.config_error.isHidden()


def test_tied_run_shows_the_dense_total(qtbot, view):
    assert _run(qtbot, view, 20, tied=True) == 20
    h = view.history
    np.testing.assert_array_equal(h.series("grad_rows"), h.vocab_size)
    tx, ty = view.charts.sparsity.total.getData()
    np.testing.assert_allclose(ty, 100.0)
    assert view.charts.sparsity.total.isVisible() and "tied" in view.charts.sparsity.plot.titleLabel.text
    # every row has a gradient: none can move by decay alone, so that series is not drawn
    assert not view.charts.sparsity.decay.isVisible() and "decay" not in view.charts.sparsity.plot.titleLabel.text
    assert "tied " in view.readout.status.text()


def test_run_steps_then_redraws_every_chart_from_the_history(qtbot, view):
    called = []
    view.set_config(steps=10)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(60, lambda: called.append(view.history.last_step))
    assert called == [60] and view.session.phase is Phase.FINISHED
    h, charts = view.history, view.charts
    ref, _steps = h.raster(RASTER_ROWS)
    np.testing.assert_array_equal(charts.raster.cells, ref)
    assert charts.raster.image.pixmap().width() == 60
    assert ref.shape == (h.vocab_size, 60)
    # per-row charts: one point per row at its corpus count (0.5 for never-seen tokens)
    x, y = charts.updates.updates.getData()
    np.testing.assert_allclose(x, np.log10(np.maximum(h.counts, 0.5)))  # a log axis
    np.testing.assert_array_equal(y, h.grad_count)
    np.testing.assert_allclose(charts.drift.points.getData()[1], h.drift())
    # the PCA draws the last frame the worker made: its coordinates, its class centres
    frame = h.frame
    assert frame.step == 60
    np.testing.assert_allclose(np.c_[charts.pca.points.data["x"], charts.pca.points.data["y"]], frame.coords)
    classes = view.session.run.classes
    qtbot.waitUntil(lambda: not charts.pca.points.data.size or charts.pca.labels[0].isVisible())
    vb = charts.pca.plot.getViewBox()
    rects = []
    bounds = vb.sceneBoundingRect()
    for k, label in enumerate(charts.pca.labels):
        assert label.text.text() == classes.names[k]
        if not label.isVisible():  # no free place for it: left out rather than piled on the others
            continue
        # each name at its class's centre, or moved (in pixels) a few label sizes at most
        centre = vb.mapViewToScene(QPointF(*(float(c) for c in frame.centres[k])))
        pos = vb.mapViewToScene(label.pos())
        size = label.rect()
        assert abs(pos.x() - centre.x()) <= 2 * size.width() and abs(pos.y() - centre.y()) <= 5 * size.height()
        if k == 0 and bounds.contains(QRectF(centre.x() - size.width() / 2, centre.y() - size.height() / 2,
                                             size.width(), size.height())):  # nothing placed before it
            assert (pos.x(), pos.y()) == pytest.approx((centre.x(), centre.y()), abs=0.5)
        rects.append(QRectF(pos.x() - size.width() / 2, pos.y() - size.height() / 2, size.width(), size.height()))
        # issue 25, item 16: the names sit inside the plot and the points under them show through
        assert bounds.contains(rects[-1]) and label.brush().color().alpha() <= 128
    assert len(rects) >= len(charts.pca.labels) // 2
    assert rects == _drawn_label_rects(charts.pca)
    assert _overlaps(rects) == 0, "class names cover each other"
    assert "silhouette" in charts.pca.plot.titleLabel.text
    assert f"{frame.silhouette:+.2f}" in charts.pca.plot.titleLabel.text
    assert "step     60 / 60" in view.readout.status.text()


def _drawn_label_rects(pca) -> list[QRectF]:
    """The shown class names' boxes, in scene pixels, where the view is now."""
    out = []
    for label in pca.labels:
        if label.isVisible():
            pos, r = pca.vb.mapViewToScene(label.pos()), label.rect()
            out.append(QRectF(pos.x() + r.left(), pos.y() + r.top(), r.width(), r.height()))
    return out


def _overlaps(rects) -> int:
    return sum(a.intersects(b) for i, a in enumerate(rects) for b in rects[i + 1:])


def test_class_names_never_overlap_after_the_charts_shrink(qtbot, view):
    """Issue 25: the names are placed in pixels; a grid that shrinks after the
    frame was drawn (690 x 510 is the Training tab of a 1024 x 700 window)
    places them again, instead of piling them up, and keeps them apart (frames
    that touch read as one box)."""
    view.set_config(dim=32, batch_size=64)
    _run(qtbot, view, 200)
    pca = view.charts.pca
    assert pca.coords is not None and _drawn_label_rects(pca)
    view.resize(690, 510)
    qtbot.waitUntil(lambda: pca.compact)
    qtbot.wait(50)  # the grid lays out again
    # drawn: each box with its 1 px frame, which must not touch another's nor the axes' 5 px ticks
    rects = [r.adjusted(-1, -1, 1, 1) for r in _drawn_label_rects(pca)]
    inside = pca.vb.sceneBoundingRect().adjusted(5, 0, 0, -5)
    assert len(rects) >= 4 and _overlaps(rects) == 0, "class names cover each other"
    assert all(inside.contains(r) for r in rects)


def test_class_colours_are_the_apps_and_labels_are_readable(qtbot, view):
    _run(qtbot, view, 5)
    classes = view.session.run.classes
    brushes = view.charts.pca.points.data["brush"]
    cat = view.session.run.corpus.words.index("cat")
    k = int(classes.of[cat])
    # the same number, so the same colour, as a saved model's classes in the Projection tab
    assert brushes[cat].color().name() == QColor(class_color(k)).name()
    fg = QColor(plot_colors()[1]).name()
    assert all(label.text.brush().color().name() == fg for label in view.charts.pca.labels)
    assert view.charts.pca.labels[k].pen().color().name() == QColor(class_color(k)).name()


def test_a_diverging_run_keeps_its_charts_and_says_why(qtbot, view):
    _run(qtbot, view, 2000, optimizer="sgd", lr=1000.0, batch_size=32, dim=16)
    s = view.session
    assert s.phase is Phase.FAILED and not view.running
    message = view.readout.message.text()
    assert message.startswith(user_message(s.error)) and "charts show the run up to there" in message
    assert "FloatingPointError" not in message
    assert 0 < view.history.n < 2000
    assert len(view.charts.loss.raw.getData()[0]) > 0 and view.buttons.export_button.isEnabled()
    assert view.buttons.start_button.isEnabled()


def test_rows_gone_non_finite_are_left_out_of_the_pca(qtbot, view):
    """A diverging run's last frame can have NaN rows (all of them, at the end): those
    are not drawn, and pyqtgraph is never handed a NaN to bound (its "All-NaN slice"
    warning once came out of a walk in the window)."""
    _run(qtbot, view, 20)
    pca, frame = view.charts.pca, view.history.frame
    coords = frame.coords.copy()
    coords[::3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pca.draw(dataclasses.replace(frame, step=frame.step + 1, coords=coords), None)
        ok = np.isfinite(coords).all(axis=1)
        np.testing.assert_array_equal(np.c_[pca.points.data["x"], pca.points.data["y"]], coords[ok])
        assert [p.brush() for p in pca.points.points()] == [b for b, k in zip(pca._brushes, ok) if k]
        pca.draw(dataclasses.replace(frame, step=frame.step + 2, coords=np.full_like(coords, np.nan)), None)
        assert pca.points.data.size == 0
        pca.points.dataBounds(0), pca.vb.autoRange()
        view.grab()


def test_save_as_model_folder_opens_in_the_explorer(qtbot, view, tmp_path):
    _run(qtbot, view, 30)
    folder = tmp_path / "trained"
    with qtbot.waitSignal(view.model_saved, timeout=5000) as blocker:
        view.save_model(str(folder))
    assert blocker.args == [str(folder)]
    table = open_table(str(folder))
    assert (table.vocab_size, table.dim) == (view.history.vocab_size, 8)
    trained = view.session.run.model.embed_tokens.weight.detach().numpy()
    np.testing.assert_array_equal(table.matrix(), trained)
    assert json.loads((folder / "config.json").read_text())["tie_word_embeddings"] is False


def test_exports(qtbot, view, tmp_path):
    _run(qtbot, view, 25)
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


def test_svg_export_under_a_name_ending_otherwise_is_an_svg(qtbot, view, tmp_path, monkeypatch):
    _run(qtbot, view, 10)
    typed = tmp_path / "charts.csv"  # the user typed a name ending in .csv in the SVG dialog
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(typed), "")))
    svg = next(a for a in view.buttons.export_menu.actions() if "SVG" in a.text())
    svg.trigger()
    written = tmp_path / "charts.csv.svg"
    assert "<svg" in written.read_text()[:2000] and not typed.exists()
    assert view.readout.message.text() == "Exported charts.csv.svg."


def test_text_file_corpus(qtbot, view):
    view.corpus.combo.setCurrentIndex(1)
    assert not view.buttons.start_button.isEnabled() and "text file" in view.config_error.text()
    assert view.corpus.open_button.isVisible()
    view.set_text_corpus("the cat sat on the mat .\nthe dog sat on the log .\n" * 20, "cats.txt")
    assert view.buttons.start_button.isEnabled() and "cats.txt" in view.corpus.label.text()
    _run(qtbot, view, 20)
    assert view.history.vocab_size == len(set("the cat sat on mat . dog log".split())) + 2
    assert view.session.run.corpus.words[2] == "the"
    assert view.charts.pca.labels == [] or not any(label.isVisible() for label in view.charts.pca.labels)


def test_model_tokenizer_corpus_needs_a_model_and_stops_on_switch(qtbot, view):
    view.set_text_corpus("the cat sees the dog .\n" * 50, "t.txt", use_model_tokenizer=True)
    assert "no tokenizer" in view.config_error.text()
    view._state.set_table(open_table("default"))
    assert view.buttons.start_button.isEnabled()
    view.set_config(steps=100000)
    view.start()
    _wait_steps(qtbot, view, 5)
    view._state.set_table(open_table("toy:robot"))
    assert not view.running and "model changed" in view.readout.message.text()
    _wait_phase(qtbot, view, Phase.STOPPED)
    assert "model changed" in view.readout.message.text()


def test_the_speed_control_paces_the_run_by_the_session_clock(qtbot, view):
    clock = FakeClock()
    view.session.clock = clock
    view.set_config(steps=15, steps_per_second=30.0)
    with qtbot.waitSignal(view.steps_reached, timeout=TIMEOUT):
        view.run_steps_then(15)
    assert clock.t == pytest.approx(15 / 30) and clock.waits == pytest.approx([1 / 30] * 15)
    view.settings.speed_combo.setCurrentIndex(0)  # as fast as possible, for the next run and a running one
    assert view.session.speed == 0.0


def test_shutdown_during_a_paused_run_is_clean(qtbot, view):
    view.set_config(steps=100000)
    view.start()
    _wait_steps(qtbot, view, 5)
    view.pause()
    # the app's shutdown: every JobRunner under the state is cancelled
    for r in view._state.findChildren(JobRunner):
        r.cancel(emit=False)
    assert await_all_workers(10_000)
    _wait_phase(qtbot, view, Phase.STOPPED)
    assert not view.running and not view.frame_timer.isActive()


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
    _run(qtbot, view, 10)
    assert view.session.phase is Phase.FAILED and "too short" in view.readout.message.text()
    assert view.buttons.start_button.isEnabled() and not view.buttons.save_button.isEnabled()


def test_a_hidden_view_does_not_draw_and_catches_up_when_shown(qtbot, view):
    view.set_config(steps=100000)
    view.start()
    _wait_steps(qtbot, view, 5)
    view.hide()
    drawn = len(view.frame_times_ms())
    n = view.history.n
    ticks = []
    view.frame_timer.timeout.connect(lambda: ticks.append(1))
    _wait_steps(qtbot, view, n + 200)
    qtbot.waitUntil(lambda: len(ticks) >= 2, timeout=TIMEOUT)
    assert len(view.frame_times_ms()) == drawn  # the timer ticked, nothing was drawn
    view.show()
    assert len(view.frame_times_ms()) == drawn + 1  # synchronize: one full redraw
    steps = binned(view.history.series("step"), MAX_POINTS)[0]  # the history as it was when shown
    np.testing.assert_array_equal(view.charts.loss.raw.getData()[0], steps)
    assert steps[-1] > n + 150
    view.stop()


def test_each_optimiser_starts_from_its_own_rate_and_keeps_the_users(view):
    s = view.settings
    assert view.config().optimizer == "adam" and view.config().lr == DEFAULT_LR["adam"]
    view.set_config(optimizer="sgd")
    assert view.config().lr == DEFAULT_LR["sgd"] == 1.0
    view.set_config(optimizer="adam")
    s.lr_spin.setValue(0.003)  # the user's rate for Adam
    view.set_config(optimizer="sgd")
    assert view.config().lr == 1.0
    view.set_config(optimizer="adam")
    assert view.config().lr == pytest.approx(0.003)
    assert "SGD 1" in s.lr_spin.toolTip() and "Adam 0.01" in s.lr_spin.toolTip()


def test_the_lesson_under_the_charts_and_the_decay_series(qtbot, view):
    assert "Start a run" in view.lesson.text()
    _run(qtbot, view, 30, optimizer="adamw", weight_decay=0.1)
    h, sp = view.history, view.charts.sparsity
    lesson = training_lesson(view.session.cfg, h)
    assert view.lesson.text() == lesson.text and "AdamW shrinks every row" in lesson.rows
    shown = view.lesson.text().replace("\u00a0", " ")
    assert f"{100 * h.series('changed_rows')[-1] / h.vocab_size:.1f} % changed" in shown or "100 % changed" in shown
    np.testing.assert_allclose(sp.decay.getData()[1], binned(h.fraction("decay_only_rows"), MAX_POINTS)[0])
    assert h.series("decay_only_rows").max() > 0
    # coinciding curves stay apart: the gradient a wide band under the thinner lines drawn over it
    assert sp.grad.pen().widthF() > sp.changed.pen().widthF() and sp.grad.zValue() < sp.changed.zValue()
    assert sp.decay.pen().style() != sp.changed.pen().style() and "decay only" in sp.plot.titleLabel.text
    # the lesson sits under the charts, and fits its lines
    assert view.lesson.geometry().top() >= view.charts.parentWidget().parentWidget().geometry().bottom()
    view.reset()
    assert "Start a run" in view.lesson.text()
