"""state.training: the Qt glue between the training session and its worker."""

from __future__ import annotations

import pytest

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.core.training.config import ConfigError, TrainConfig
from explorer.core.training.language import make_corpus
from explorer.core.training.session import Phase, StopReason
from explorer.state.app_state import AppState
from explorer.state.training_runner import TrainingRunner
from explorer.workers import JobRunner, await_all_workers
from tests.support.training_clock import FakeClock  # noqa: E402

TIMEOUT = 30_000


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(500, seed=0)


@pytest.fixture
def state(qtbot):
    make_app()
    s = AppState()
    yield s
    for r in s.findChildren(JobRunner):  # what the app's shutdown does
        r.cancel(emit=False)
    assert await_all_workers(10_000)


def _cfg(**kw):
    return TrainConfig(**{**dict(steps=20, dim=8, batch_size=8), **kw})


def _phase(qtbot, training, phase):
    qtbot.waitUntil(lambda: training.session.phase is phase, timeout=TIMEOUT)


def test_the_state_owns_the_runner_and_its_jobs(state):
    assert isinstance(state.training, TrainingRunner) and state.training.parent() is state
    # the app's shutdown finds the training's JobRunner with the others
    assert len(state.training.findChildren(JobRunner)) == 1
    assert set(state.training.findChildren(JobRunner)) <= set(state.findChildren(JobRunner))


def test_a_run_reports_its_phases_and_steps(qtbot, state, corpus):
    t = state.training
    phases, steps, runs = [], [], []
    t.phase_changed.connect(phases.append)
    t.stepped.connect(steps.append)
    t.run_started.connect(runs.append)
    t.start(_cfg(), lambda: corpus)
    assert phases == [Phase.PREPARING] and t.job_running
    _phase(qtbot, t, Phase.FINISHED)
    assert phases[-1] is Phase.FINISHED and len(runs) == 1
    assert steps == sorted(steps) and steps[-1] == 20 and t.session.history.n == 20
    qtbot.waitUntil(lambda: not t.job_running, timeout=TIMEOUT)


def test_impossible_settings_raise_and_start_nothing(state, corpus):
    with pytest.raises(ConfigError):
        state.training.start(_cfg(sparse=True, tied=True), lambda: corpus)
    assert state.training.session.phase is Phase.IDLE and not state.training.job_running


def test_shutdown_stops_a_paused_run(qtbot, state, corpus):
    t = state.training
    t.start(_cfg(steps=100000), lambda: corpus)
    qtbot.waitUntil(lambda: t.session.last_step > 5, timeout=TIMEOUT)
    t.pause()
    qtbot.waitUntil(lambda: t.session.held, timeout=TIMEOUT)
    # the app's shutdown: cancel every JobRunner it finds; the held job must wake and end
    for r in state.findChildren(JobRunner):
        r.cancel(emit=False)
    assert await_all_workers(10_000)
    _phase(qtbot, t, Phase.STOPPED)
    assert not t.job_running


def test_a_model_switch_stops_a_run_on_its_tokenizer_only(qtbot, state, corpus):
    t = state.training
    state.set_table(open_table("default"))
    t.start(_cfg(steps=100000), lambda: corpus, uses_model=True)
    qtbot.waitUntil(lambda: t.session.last_step > 2, timeout=TIMEOUT)
    state.set_table(open_table("toy:robot"))
    assert t.session.phase is Phase.STOPPING and t.session.stop_reason is StopReason.MODEL_CHANGED
    _phase(qtbot, t, Phase.STOPPED)
    # a run on the synthetic language goes on through a switch
    t.start(_cfg(steps=100000), lambda: corpus, uses_model=False)
    qtbot.waitUntil(lambda: t.session.last_step > 2, timeout=TIMEOUT)
    state.set_table(open_table("default"))
    assert t.session.phase is Phase.RUNNING
    t.stop()
    _phase(qtbot, t, Phase.STOPPED)


def test_a_new_start_drops_the_older_run(qtbot, state, corpus):
    t = state.training
    t.start(_cfg(steps=100000, seed=1), lambda: corpus)
    qtbot.waitUntil(lambda: t.session.last_step > 2, timeout=TIMEOUT)
    t.stop()
    t.start(_cfg(steps=15, seed=2), lambda: corpus)  # while the first one is still stopping
    _phase(qtbot, t, Phase.FINISHED)
    h = t.session.history
    assert h.n == 15 and list(h.series("step")) == list(range(1, 16))


def test_reset_clears_and_a_slow_run_is_paced_by_its_clock(qtbot, corpus):
    make_app()
    clock = FakeClock()
    t = TrainingRunner(clock=clock)
    t.start(_cfg(steps=10), lambda: corpus, steps_per_second=4.0)
    _phase(qtbot, t, Phase.FINISHED)  # 2.5 s at 4 steps/s, by the fake clock: no real wait
    assert clock.t == pytest.approx(2.5)
    t.reset()
    assert t.session.phase is Phase.IDLE and t.session.history is None
    qtbot.waitUntil(lambda: not t.job_running, timeout=TIMEOUT)
    t.deleteLater()
