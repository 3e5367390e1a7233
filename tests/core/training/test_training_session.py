"""The Qt-free training session: tiny seeded runs driven by hand, the job's
values applied to the history, pause / stop / reset, failures as objects,
and pacing by a clock that never waits."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.core.errors import user_message
from explorer.core.training.config import ConfigError, TrainConfig
from explorer.core.training.corpus import text_corpus
from explorer.core.training.job import RunHeld, StepBatch, TrainingRun
from explorer.core.training.model import TrainingDiverged
from explorer.core.training.session import NothingToSave, Phase, StopReason, TrainingSession
from tests.support.training_clock import FakeClock

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _drive(session, gen, until=None):
    """Apply what ``gen`` yields to ``session`` until it ends (or ``until(value)``);
    returns the values yielded. The end goes to finish() or fail()."""
    values = []
    while True:
        try:
            value = next(gen)
        except StopIteration as stop:
            session.finish(stop.value)
            return values
        except Exception as exc:  # what a JobRunner hands over as `failed`
            session.fail(exc)
            return values
        values.append(value)
        if not isinstance(value, tuple):
            session.apply(value)
        if until is not None and until(value):
            return values


def _cfg(**kw):
    return TrainConfig(**{**dict(steps=30, dim=8, batch_size=16, seed=1), **kw})


def test_a_run_fills_the_history_step_by_step(corpus):
    fed = []  # the ids each step feeds the embedding, captured by an independent hook
    hook = torch.nn.modules.module.register_module_forward_pre_hook(
        lambda mod, args: fed.append(np.unique(args[0].numpy())) if isinstance(mod, torch.nn.Embedding) else None)
    try:
        session = TrainingSession(clock=FakeClock())
        job = session.start(_cfg(), lambda: corpus, batch_seconds=0.0)
        assert session.phase is Phase.PREPARING and session.running and not session.can_save
        assert job.__name__ == "live_training_job"  # as the runner names it (a walk's reports said "partial")
        _drive(session, job())
    finally:
        hook.remove()
    assert session.phase is Phase.FINISHED and not session.active
    h = session.history
    assert h.n == 30 and h.last_step == 30 and len(fed) == 30
    # untied: the rows with gradient are exactly the batch's distinct ids
    np.testing.assert_array_equal(h.series("grad_rows"), [len(ids) for ids in fed])
    np.testing.assert_array_equal(h.series("batch_distinct_ids"), h.series("grad_rows"))
    counts = np.zeros(corpus.vocab_size, int)
    for ids in fed:
        counts[ids] += 1
    np.testing.assert_array_equal(h.grad_count, counts)
    # the last frame is the trained table's
    assert h.frame_step == 30 and session.can_save
    r = session.readout()
    assert r.step == 30 and r.steps == 30 and r.tied_rows is None
    assert r.loss == pytest.approx(np.mean(h.series("loss")[-30:]))
    assert r.ln_v == pytest.approx(np.log(corpus.vocab_size))


def test_tied_tables_give_every_row_a_gradient(corpus):
    session = TrainingSession(clock=FakeClock())
    _drive(session, session.start(_cfg(tied=True, steps=8), lambda: corpus, batch_seconds=0.0)())
    h = session.history
    np.testing.assert_array_equal(h.series("grad_rows"), corpus.vocab_size)
    assert np.all(h.series("input_grad_rows") < corpus.vocab_size)
    assert session.readout().tied_rows == corpus.vocab_size


def test_divergence_fails_the_run_and_keeps_its_history(corpus):
    session = TrainingSession(clock=FakeClock())
    job = session.start(_cfg(steps=300, dim=16, batch_size=32, lr=1e4, optimizer="sgd"), lambda: corpus,
                        batch_seconds=0.0)
    _drive(session, job())  # the job raises; the runner hands the exception over
    assert session.phase is Phase.FAILED and not session.active
    assert isinstance(session.error, TrainingDiverged) and isinstance(session.error, FloatingPointError)
    assert session.history.n > 0 and session.history.n < 300
    assert user_message(session.error).startswith("Training diverged")
    assert session.can_save  # the model up to there can still be saved (the run has ended)


def test_a_text_too_short_fails_with_its_config_error():
    session = TrainingSession(clock=FakeClock())
    _drive(session, session.start(_cfg(), lambda: text_corpus("just three words"))())
    assert session.phase is Phase.FAILED and isinstance(session.error, ConfigError)
    assert session.history is None and not session.can_save


def test_impossible_settings_start_nothing():
    session = TrainingSession()
    with pytest.raises(ConfigError):
        session.start(_cfg(sparse=True, tied=True), lambda: None)
    assert session.phase is Phase.IDLE and not session.active


def test_pause_holds_then_resume_and_stop(corpus, tmp_path):
    session = TrainingSession(clock=FakeClock(tick=0.01))
    gen = session.start(_cfg(steps=100000), lambda: corpus, batch_seconds=0.05)()
    _drive(session, gen, until=lambda v: isinstance(v, StepBatch) and v.last_step >= 10)
    assert session.phase is Phase.RUNNING and not session.can_save
    with pytest.raises(NothingToSave):
        session.save(tmp_path / "early")
    assert session.pause() and session.phase is Phase.PAUSED and not session.held
    assert not session.can_save  # asked to hold, but the job may still be inside a step
    values = _drive(session, gen, until=lambda v: isinstance(v, RunHeld))
    assert session.held and session.can_save
    held_at = values[-1].step
    assert session.last_step == held_at  # every step done before the hold is in the history
    folder = session.save(tmp_path / "held")
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["hidden_size"] == 8 and cfg["vocab_size"] == corpus.vocab_size
    assert session.resume() and session.phase is Phase.RUNNING and not session.held
    _drive(session, gen, until=lambda v: isinstance(v, StepBatch))
    assert session.history.series("step")[held_at] == held_at + 1  # it went on where it held
    assert session.stop() and session.phase is Phase.STOPPING and not session.running and session.active
    assert not session.can_save  # until the job has ended
    _drive(session, gen)
    assert session.phase is Phase.STOPPED and session.stop_reason is StopReason.USER and session.can_save
    assert not session.pause() and not session.stop()  # nothing to pause or stop now


def test_reset_forgets_the_run_and_ignores_its_job(corpus):
    session = TrainingSession(clock=FakeClock())
    gen = session.start(_cfg(steps=1000), lambda: corpus, batch_seconds=0.0)()
    _drive(session, gen, until=lambda v: isinstance(v, StepBatch))
    session.reset()
    assert session.phase is Phase.IDLE and session.history is None and session.run is None
    late = next(gen, None)  # the old job's last word (it was told to stop)
    assert late is None or not session.apply(late)
    assert session.history is None


def test_a_new_start_stops_the_older_job(corpus):
    session = TrainingSession(clock=FakeClock())
    old = session.start(_cfg(steps=1000), lambda: corpus, batch_seconds=0.0)()
    _drive(session, old, until=lambda v: isinstance(v, TrainingRun))
    session.start(_cfg(steps=5), lambda: corpus, batch_seconds=0.0)
    assert session.history is None and session.phase is Phase.PREPARING
    rest = [v for v in old]  # the old job ends at its next step
    assert sum(len(v.steps) for v in rest if isinstance(v, StepBatch)) <= 1


def test_pacing_by_a_fake_clock(corpus):
    clock = FakeClock()
    session = TrainingSession(clock=clock)
    gen = session.start(_cfg(steps=20), lambda: corpus, steps_per_second=10.0, batch_seconds=0.0)()
    _drive(session, gen)
    # 20 steps at 10 steps/s: 2 s of the clock's time, spent in waits of a tenth of a second
    assert session.phase is Phase.FINISHED
    assert clock.t == pytest.approx(2.0)
    assert clock.waits == pytest.approx([0.1] * 20)
    assert session.steps_per_second() == pytest.approx(10.0, rel=0.1)
    session.set_speed(0.0)
    assert session.speed == 0.0


def test_speed_changes_apply_to_the_running_job(corpus):
    clock = FakeClock()
    session = TrainingSession(clock=clock)
    gen = session.start(_cfg(steps=1000), lambda: corpus, steps_per_second=5.0, batch_seconds=0.0)()
    _drive(session, gen, until=lambda v: isinstance(v, StepBatch) and v.last_step >= 3)
    assert clock.waits == pytest.approx([0.2] * 3)
    session.set_speed(0.0)
    clock.waits.clear()
    _drive(session, gen, until=lambda v: isinstance(v, StepBatch) and v.last_step >= 10)
    assert clock.waits == []
    session.stop()
    _drive(session, gen)


def test_a_run_on_a_text_has_no_classes_and_no_silhouette():
    session = TrainingSession(clock=FakeClock())
    text = "the cat sat on the mat .\nthe dog sat on the log .\n" * 20
    _drive(session, session.start(_cfg(steps=5), lambda: text_corpus(text), batch_seconds=0.0)())
    assert session.phase is Phase.FINISHED
    assert session.run.classes is None and session.silhouette_init is None
    assert session.history.frame.silhouette is None
