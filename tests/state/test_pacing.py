"""Jobs' results reach the window a few per pass of its event loop (explorer.pacing)."""

import time

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThreadPool, QTimer, Signal

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


def test_turns_without_a_rest_between_them_are_one_pass(qapp):
    """The event loop ends a turn before each of its passes, even with events waiting: a turn that begins
    at once after another continues its pass, and only a rest of the loop begins a short one."""
    clock = [0.0]
    turns = _turns(clock)
    landings = ResultPacer(turns)
    got = []
    clock[0] = 0.020
    turns.turn_ended()  # a click's work: 20 ms
    clock[0] = 0.0201
    turns.turn_began()  # the next pass at once (the result and the click's paint were waiting)
    landings.land(got.append, "a")
    assert got == [] and landings.waiting == 1
    clock[0] = 0.030
    turns.turn_ended()
    clock[0] = 0.040  # the loop slept: timers and input had their turn
    turns.turn_began()
    landings.land(got.append, "b")  # still behind "a"
    landings._deliver()  # a short pass takes both
    assert got == ["a", "b"] and landings.waiting == 0


def test_a_result_waiting_behind_a_click_lands_after_the_windows_timers(qtbot, monkeypatch):
    """In a real event loop: a click's work (30 ms), and a job's result that arrived meanwhile. The result
    lands after a timer of the window that fell due during the click, not in the same breath (the old
    pacing landed it in the next turn at once, before the timers: a stall of click, result and paint)."""
    from explorer.core import runtime
    from explorer.core.runtime import WINDOW_TURNS
    from explorer.ui.application import report_turns

    report_turns(QCoreApplication.instance())  # as make_app does
    # a busy machine may pause this thread between the click's turn and the next for more than the 1 ms
    # that counts as a rest: here a rest is 250 ms, longer than any such pause (nothing here needs less)
    monkeypatch.setattr(runtime, "REST_S", 0.25)
    landings = ResultPacer(WINDOW_TURNS)
    order = []

    class Source(QObject):
        result = Signal(str)

    source = Source()
    source.result.connect(lambda value: landings.land(order.append, value), Qt.QueuedConnection)
    ticker = QTimer()
    ticker.setTimerType(Qt.PreciseTimer)
    ticker.timeout.connect(lambda: order.append("tick") if order and order[-1] == "click" else None)

    def click():
        ticker.start(1)  # falls due during the click (started before it, it might fall due with the click)
        source.result.emit("result")  # a worker's result, posted while the click's work runs
        time.sleep(0.03)  # longer than a pass's budget
        order.append("click")

    QTimer.singleShot(20, click)
    qtbot.waitUntil(lambda: "result" in order, timeout=5000)
    ticker.stop()
    assert order.index("click") < order.index("tick") < order.index("result")


def test_a_turn_wait_puts_work_off_once_while_the_pass_is_long(qapp):
    """TurnWait: work whose timer fires in a long pass is put off to the next pass, once in a row (then it
    runs however long that one is); in a short pass it runs at once."""
    from explorer.pacing import TurnWait

    clock = [0.0]
    turns = _turns(clock, elapsed=0.030)  # 30 ms into the pass: past the budget
    wait = TurnWait(ResultPacer(turns))
    assert wait.put_off()  # the first time: to the next pass
    assert not wait.put_off()  # it has waited: now, however long this pass
    assert wait.put_off()  # the next piece of work waits again
    assert not wait.put_off()
    clock[0] = 0.050
    turns.turn_ended()
    clock[0] = 0.060  # the loop rested
    turns.turn_began()
    assert not wait.put_off()  # a short pass: at once
