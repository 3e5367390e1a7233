"""JobRunner and Computation: results land only for the newest inputs, lazy
work waits for a consumer, failures carry the exception (pytest-qt, no widgets)."""

from __future__ import annotations

import sys
import threading

import pytest

from explorer.core.errors import ExplorerError
from explorer.workers import Computation, JobRunner, await_all_workers


def _value_job(value, gate: threading.Event | None = None, runs: list | None = None):
    if runs is not None:
        runs.append(value)
    yield 0.5, "half way"
    if gate is not None:
        while not gate.wait(0.005):
            yield 0.5, "waiting"
    return value


class _Boom(ExplorerError):
    pass


def _failing_job():
    yield 0.1, "starting"
    raise _Boom("the table is on fire; open another one")


@pytest.fixture
def comp(qtbot):
    c = Computation()
    yield c
    c.clear()
    await_all_workers()


def test_a_request_runs_in_a_worker_and_publishes_its_value(qtbot, comp):
    with qtbot.waitSignal(comp.finished, timeout=5000) as blocker:
        comp.request(_value_job, 42)
    assert blocker.args == [42]
    assert comp.value == 42 and not comp.running


def test_a_newer_request_wins_and_the_older_result_never_lands(qtbot, comp):
    seen = []
    comp.finished.connect(seen.append)
    slow_gate = threading.Event()
    comp.request(_value_job, "old", slow_gate, key="old")
    qtbot.waitUntil(lambda: comp.running)
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.request(_value_job, "new", key="new")
    slow_gate.set()  # the old job may now finish: its value must be dropped
    await_all_workers()
    qtbot.wait(20)
    assert seen == ["new"] and comp.value == "new"


def test_new_inputs_drop_the_value_at_once(qtbot, comp):
    comp.publish("first", key=1)
    resets = []
    comp.reset.connect(lambda: resets.append(comp.value))
    gate = threading.Event()
    comp.request(_value_job, "second", gate, key=2)
    assert comp.value is None and resets == [None]  # nobody can read "first" for inputs 2
    gate.set()
    qtbot.waitUntil(lambda: comp.value == "second", timeout=5000)


def test_same_key_does_not_recompute(qtbot, comp):
    runs = []
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.request(_value_job, "x", None, runs, key="k")
    comp.request(_value_job, "x", None, runs, key="k")
    await_all_workers()
    assert runs == ["x"]
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.request(_value_job, "y", None, runs, key="k2")
    assert runs == ["x", "y"]


def test_a_lazy_computation_waits_for_a_consumer(qtbot):
    comp = Computation(lazy=True)
    runs = []
    comp.request(_value_job, 7, None, runs, key=7)
    await_all_workers()
    assert runs == [] and comp.pending and comp.value is None
    consumer = object()
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.want(consumer)
    assert runs == [7] and comp.value == 7
    comp.want(consumer, False)
    comp.request(_value_job, 8, None, runs, key=8)
    await_all_workers()
    assert runs == [7] and comp.pending  # nobody watches: nothing runs


def test_failure_carries_the_exception(qtbot, comp):
    with qtbot.waitSignal(comp.failed, timeout=5000) as blocker:
        comp.request(_failing_job)
    exc = blocker.args[0]
    assert isinstance(exc, _Boom) and comp.error is exc
    assert "open another one" in str(exc)


def _torch_failing_job():
    import torch

    yield 0.1, "starting"
    return torch.ones(2, 3) @ torch.ones(2, 3)  # torch says so with a RuntimeError


def test_a_runtime_error_from_torch_is_a_failure_and_the_job_ends(qtbot, comp):
    """superqt's worker took a RuntimeError for its own deletion: it only
    warned, and the job stayed running for good with no failure shown."""
    with qtbot.waitSignal(comp.failed, timeout=5000) as blocker:
        comp.request(_torch_failing_job)
    exc = blocker.args[0]
    assert isinstance(exc, RuntimeError) and "cannot be multiplied" in str(exc)
    assert comp.error is exc
    qtbot.waitUntil(lambda: not comp.running, timeout=5000)


def _warning_job(text: str, gate: threading.Event | None = None):
    import warnings

    yield 0.1, "starting"
    if gate is not None:
        while not gate.wait(0.005):
            yield 0.5, "waiting"
    warnings.warn(text, RuntimeWarning, stacklevel=1)
    return text


def test_a_jobs_warnings_reach_the_process_and_its_handler_is_left_alone(qtbot):
    """superqt's run() sent every warning of the process to the worker's
    unconnected ``warned`` signal while a job ran, and two overlapping jobs
    left a finished worker's handler in ``warnings.showwarning``."""
    import warnings

    first, second = JobRunner(), JobRunner()
    gate = threading.Event()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        handler = warnings.showwarning
        with qtbot.waitSignal(first.running_changed, timeout=5000):
            first.start(_warning_job, "the first job's", gate)
        with qtbot.waitSignal(second.succeeded, timeout=5000):
            second.start(_warning_job, "the second job's")
        warnings.warn("the window's own, while a job runs", RuntimeWarning, stacklevel=1)
        with qtbot.waitSignal(first.succeeded, timeout=5000):
            gate.set()
        await_all_workers()
        assert warnings.showwarning is handler
    texts = sorted(str(w.message) for w in seen)
    assert texts == ["the first job's", "the second job's", "the window's own, while a job runs"]


def test_progress_is_forwarded(qtbot, comp):
    seen = []
    comp.progressed.connect(lambda f, m: seen.append((f, m)))
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.request(_value_job, 1)
    assert (0.5, "half way") in seen


def test_cancel_stops_a_job_and_keeps_no_value(qtbot, comp):
    gate = threading.Event()
    comp.request(_value_job, "never", gate)
    qtbot.waitUntil(lambda: comp.running)
    with qtbot.waitSignal(comp.cancelled, timeout=5000):
        comp.cancel()
    gate.set()
    await_all_workers()
    qtbot.wait(20)
    assert comp.value is None and not comp.running


def test_runner_ignores_reports_after_its_owner_is_deleted(qtbot):
    import shiboken6

    runner = JobRunner()
    gate = threading.Event()
    runner.start(_value_job, 1, gate)
    shiboken6.delete(runner)
    gate.set()
    assert await_all_workers()  # no report reaches the deleted runner, nothing crashes


@pytest.mark.parametrize("ending", ["returns", "raises"])
def test_a_job_outliving_its_workers_signals_ends_quietly(qtbot, capfd, ending):
    """A job still running when the interpreter ends (past the window's close wait) found its worker's
    signals deleted: its end's emit raised "Signal source has been deleted" into Qt's runnable, which
    printed a traceback on the way out. Now the worker sees nobody is left to tell and ends. (The
    signals are deleted while the job waits inside a step, not while the worker emits: deleting an
    object another thread is emitting from is undefined, and crashed.)"""
    import shiboken6

    runner, inside, gate = JobRunner(), threading.Event(), threading.Event()

    def job():
        yield 0.5, "started"
        inside.set()
        gate.wait(10)  # one step, no emit meanwhile
        if ending == "raises":
            raise ValueError("late")
        return 1

    runner.start(job)
    worker = runner._worker
    assert inside.wait(10)
    shiboken6.delete(worker.signals)
    gate.set()
    assert await_all_workers()
    err = capfd.readouterr().err
    assert "Signal source has been deleted" not in err and "Traceback" not in err, err


class _Arg:
    """Stands for a job's big argument (a table)."""


def test_a_finished_or_stopped_job_lets_go_of_its_arguments(qtbot):
    import gc
    import weakref

    runner = JobRunner()
    kept = []  # superqt may keep a worker object alive after its job: so do we, on purpose
    for cancel in (False, True):
        arg = _Arg()
        ref = weakref.ref(arg)
        gate = threading.Event()
        runner.start(_value_job, arg, gate)
        kept.append(runner._worker)
        del arg
        if cancel:
            runner.cancel()
        gate.set()
        await_all_workers()
        qtbot.waitUntil(lambda: all(not w.is_running for w in kept), timeout=5000)
        qtbot.wait(10)  # the worker's finished signal reaches the GUI thread
        gc.collect()
        assert ref() is None, "the job's generator still holds its argument"


def _freeing_job(freed_in: list, gate: threading.Event):
    try:
        while not gate.wait(0.005):
            yield 0.5, "waiting"
    except GeneratorExit:
        freed_in.append(threading.current_thread())
        raise


def test_a_cancelled_job_is_closed_and_freed_in_its_worker_s_thread(qtbot):
    """A cancelled job's generator is closed where it ran: closing it frees its frame (a vocabulary of
    strings: 131-155 ms for a health report's on 10,000,000 rows), which the window's thread paid."""
    runner, freed_in, gate = JobRunner(), [], threading.Event()
    runner.start(_freeing_job, freed_in, gate)
    worker = runner._worker
    qtbot.waitUntil(lambda: worker.is_running, timeout=5000)
    runner.cancel()
    qtbot.waitUntil(lambda: not worker.is_running, timeout=5000)
    await_all_workers()
    qtbot.wait(10)  # the worker's finished signal reaches the GUI thread
    assert len(freed_in) == 1 and freed_in[0] is not threading.main_thread()
    assert worker.steps is None


def test_an_urgent_runner_starts_at_once_while_every_pool_thread_runs_a_job(qtbot):
    """A model's load must not queue behind the analysis jobs: cancelled, each runs on to its next
    yield, and opening a toy model from 128,256 x 4,096 waited 5-13.5 s for them."""
    from PySide6.QtCore import QThreadPool

    gate = threading.Event()
    busy = [JobRunner() for _ in range(QThreadPool.globalInstance().maxThreadCount())]
    try:
        for runner in busy:
            runner.start(_value_job, "busy", gate)
        qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount()
                        >= QThreadPool.globalInstance().maxThreadCount(), timeout=5000)
        urgent, got = JobRunner(urgent=True), []
        urgent.succeeded.connect(got.append)
        urgent.start(_value_job, "loaded")
        qtbot.waitUntil(lambda: got == ["loaded"], timeout=5000)  # the busy jobs still wait at their gate
        assert not gate.is_set() and all(r.running for r in busy)
    finally:
        gate.set()
        await_all_workers()


def _own_priority():
    import os

    yield 0.5, "asking"
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a nice value per thread is Linux's")
def test_jobs_run_at_a_lower_priority_than_the_window(qtbot, comp):
    import os

    from explorer.core.runtime import WORKER_NICENESS

    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    with qtbot.waitSignal(comp.finished, timeout=5000) as blocker:
        comp.request(_own_priority)
    assert blocker.args[0] >= WORKER_NICENESS  # the worker's thread yields the cores to the window
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == gui  # the window's thread keeps its own


def test_a_job_waits_at_its_yields_while_the_window_handles_a_turn(qtbot, monkeypatch):
    """While the window's thread handles an event, a job running Python would take its share
    of the GIL and stretch the window's turn two or three times: it waits at its next yield
    until the event loop is about to sleep again."""
    import time

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from explorer.core.runtime import WINDOW_TURNS
    from explorer.ui.application import report_turns

    report_turns(QApplication.instance())
    monkeypatch.setattr(WINDOW_TURNS, "max_wait_s", 60.0)  # only the turn's end lets it on
    steps = []

    def counting_job():
        while True:
            steps.append(1)
            yield 0.0, "a step"

    runner = JobRunner()
    runner.start(counting_job)
    seen = {}
    loop = QEventLoop()

    def a_long_turn():  # the GIL is free while it sleeps: a job not giving way would step on
        before = len(steps)
        time.sleep(0.05)
        seen["stepped"], seen["before"] = len(steps) - before, before
        loop.quit()

    qtbot.waitUntil(lambda: len(steps) > 3, timeout=10_000)
    QTimer.singleShot(0, a_long_turn)
    loop.exec()
    runner.cancel()
    rest = QEventLoop()  # a turn that ends: the job sees it was cancelled
    QTimer.singleShot(20, rest.quit)
    rest.exec()
    assert await_all_workers()
    assert seen["before"] > 3 and seen["stepped"] <= 1, seen  # at most the step already under way



def test_a_jobs_steps_run_under_the_gate_while_the_window_is_lively_and_the_thread_ends_unprofiled(monkeypatch):
    """Inside a step a worker steps aside for the window's turns (a profile function), but only
    while the window is at work: profiling halves the speed of its Python. Every step then, short
    or long: no job knows how long its next step is (a long one after short ones ran beside every
    turn). The pool's thread goes back unprofiled."""
    from explorer.core.runtime import WINDOW_TURNS
    from explorer.workers import _run_steps, _Worker

    WINDOW_TURNS.turn_ended()  # the window rests (an earlier test's turn may still be under way)
    lively = float("inf")  # a busy turn has just ended
    monkeypatch.setattr(WINDOW_TURNS, "_lively_until", lively)
    profiles = []

    def probing_job():
        profiles.append(sys.getprofile())  # the first step: lively
        yield 0.0, "a short step"
        profiles.append(sys.getprofile())  # lively, after a short step
        WINDOW_TURNS._lively_until = 0.0  # the window has rested since
        yield 0.0, "a step"
        profiles.append(sys.getprofile())  # resting
        WINDOW_TURNS._lively_until = lively
        yield 0.0, "a step"
        profiles.append(sys.getprofile())  # lively again

    after = []

    def pool_thread():
        _Worker(_run_steps, probing_job(), True).run()
        after.append(sys.getprofile())

    thread = threading.Thread(target=pool_thread)
    thread.start()
    thread.join(60.0)
    assert not thread.is_alive() and len(profiles) == 4
    gated = [p is not None for p in profiles]
    assert gated == [True, True, False, True] and after == [None], (gated, after)
    assert sys.getprofile() is None  # the window's thread is never gated


def test_the_warm_up_does_not_wait_for_the_windows_turns(monkeypatch):
    """Its steps are imports, which hold the GIL in C whatever the window does: waiting only
    moved them into the window's first interactions."""
    import threading

    from explorer.core.runtime import WINDOW_TURNS
    from explorer.workers import _run_steps, warm_up_job

    monkeypatch.setattr(WINDOW_TURNS, "max_wait_s", 600.0)
    WINDOW_TURNS.turn_began()  # a turn that does not end while the job runs
    try:
        done = []
        job = warm_up_job(("json", "csv"), ())
        runner = threading.Thread(target=lambda: done.append(list(_run_steps(job, warm_up_job.gives_way))))
        runner.start()
        runner.join(60.0)
        assert not runner.is_alive() and len(done[0]) == 2  # a step a module, none held back
    finally:
        WINDOW_TURNS.turn_ended()


def test_the_imports_of_the_first_idle_moment_run_every_step_under_the_gate(qtbot, monkeypatch):
    """Nobody waits for them, and the user comes back from the pause while they run (1.3-1.5 s of
    module code, sharing the GIL with each turn of the window): each step runs under the gate even
    while the window rests and after short steps, where another job's would run unprofiled."""
    from explorer.core.runtime import WINDOW_TURNS
    from explorer.warm_up import idle_imports_job
    from explorer.workers import JobRunner

    WINDOW_TURNS.turn_ended()  # the window rests
    monkeypatch.setattr(type(WINDOW_TURNS), "lively", property(lambda _self: False))  # and stays at rest
    profiles = {}

    def probe(name):
        def job():
            for _ in range(3):  # short steps
                profiles.setdefault(name, []).append(sys.getprofile() is not None)
                yield 0.0, "a short step"
            return name

        job.always_gated = name == "gated"
        return job

    done = []
    for name in ("gated", "plain"):
        runner = JobRunner()
        runner.succeeded.connect(done.append)
        runner.start(probe(name))
    qtbot.waitUntil(lambda: sorted(done) == ["gated", "plain"], timeout=30_000)
    assert profiles == {"gated": [True] * 3, "plain": [False] * 3}
    assert idle_imports_job.always_gated and getattr(idle_imports_job, "gives_way", True)
    assert list(idle_imports_job(("json", "csv"))) and {"json", "csv"} <= set(sys.modules)


def test_the_window_is_watched_for_the_first_event_of_a_turn_only(qtbot):
    """An application event filter calls into Python (taking the GIL) for every event of the
    thread: a dialog's opening sent thousands, each a wait while workers ran. The watch sees
    the first event of a turn and no other until the event loop has rested."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication, QWidget

    from explorer.core.runtime import TURN_SWITCH_INTERVAL_S, WINDOW_TURNS
    from explorer.ui.application import _TurnWatch

    app = QApplication.instance()
    seen = []

    class Counting(_TurnWatch):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            seen.append(event.type())
            return super().eventFilter(obj, event)

    target = QWidget()
    qtbot.addWidget(target)
    watch = Counting(app)
    try:
        watch.rest()  # the loop is about to sleep: resting, watched
        assert not WINDOW_TURNS.in_turn
        outside = sys.getswitchinterval()
        for _ in range(50):  # one turn, many events
            QApplication.sendEvent(target, QEvent(QEvent.User))
        assert len(seen) == 1 and WINDOW_TURNS.in_turn
        assert sys.getswitchinterval() == pytest.approx(TURN_SWITCH_INTERVAL_S)  # workers hand the GIL back sooner
        watch.rest()
        assert not WINDOW_TURNS.in_turn and sys.getswitchinterval() == outside
        QApplication.sendEvent(target, QEvent(QEvent.User))  # the next turn is seen again
        assert len(seen) == 2 and WINDOW_TURNS.in_turn
    finally:
        app.removeEventFilter(watch)
        WINDOW_TURNS.turn_ended()
