"""Jobs' results reach the window a few per pass of its event loop (explorer.pacing)."""

import time

from PySide6.QtCore import QCoreApplication, QThreadPool

from explorer import pacing
from explorer.core.runtime import WindowTurns
from explorer.pacing import ResultPacer
from explorer.workers import JobRunner


def _turns(clock: list[float], elapsed: float = 0.0) -> WindowTurns:
    """Turns on a clock the test sets: a turn begins now, ``elapsed`` seconds ago; moving ``clock[0]``
    on a second makes it a long one."""
    turns = WindowTurns(clock=lambda: clock[0])
    clock[0] -= elapsed
    turns.turn_began()
    clock[0] += elapsed
    return turns


def test_results_land_at_once_while_the_pass_is_short(qapp):
    clock = [0.0]
    landings = ResultPacer(_turns(clock))
    got = []
    landings.land(got.append, "a")
    clock[0] = 0.005  # 5 ms into the pass: still under its budget
    landings.land(got.append, "b")
    assert got == ["a", "b"] and landings.waiting == 0 and landings.deferred == 0


def test_a_result_reaching_a_long_pass_waits_and_those_after_it_keep_their_order(qtbot):
    clock = [0.0]
    turns = _turns(clock)
    landings = ResultPacer(turns)
    got = []
    clock[0] = 1.0  # the pass has run a second
    landings.land(got.append, "a")
    landings.land(got.append, "b")
    assert got == [] and landings.waiting == 2
    landings._deliver()  # the next pass: the first waiting result however long the pass, then no more
    assert got == ["a"] and landings.waiting == 1
    turns.turn_ended()  # the window rested: a new pass is short
    landings.land(got.append, "c")  # a result that comes now still waits behind "b"
    assert got == ["a"] and landings.waiting == 2
    landings._deliver()  # a short pass takes every waiting result
    assert got == ["a", "b", "c"] and landings.waiting == 0
    assert landings.deferred == 3


def test_waiting_results_are_delivered_by_the_event_loop(qtbot):
    clock = [0.0]
    landings = ResultPacer(_turns(clock, elapsed=1.0))  # every pass long: one result per pass
    got = []
    for x in range(4):
        landings.land(got.append, x)
    assert got == []
    qtbot.waitUntil(lambda: got == [0, 1, 2, 3], timeout=5000)


def test_a_job_cancelled_while_its_result_waits_never_lands(qtbot, monkeypatch):
    """The runner's generation is checked when the result is delivered, not when it arrived."""
    clock = [0.0]
    monkeypatch.setattr(pacing.PACER, "_turns", _turns(clock, elapsed=1.0))

    def quick():
        return 42
        yield

    runner = JobRunner()
    landed = []
    runner.succeeded.connect(landed.append)
    runner.start(quick)
    pool = QThreadPool.globalInstance()
    end = time.monotonic() + 10
    while pool.activeThreadCount() and time.monotonic() < end:  # the job ends; no event handled meanwhile
        time.sleep(0.01)
    QCoreApplication.sendPostedEvents()  # the worker's signal arrives, in a long pass: the result waits
    assert landed == [] and pacing.PACER.waiting == 1 and runner.running
    runner.cancel()
    qtbot.waitUntil(lambda: pacing.PACER.waiting == 0, timeout=5000)
    assert landed == []
    monkeypatch.setattr(pacing.PACER, "_turns", _turns(clock))  # a short pass: the next result lands at once
    runner.start(quick)
    qtbot.waitUntil(lambda: landed == [42], timeout=5000)
