"""Process-wide memory settings: freed memory goes back to the system."""

from __future__ import annotations

import contextlib
import sys

import pytest

from explorer.core import runtime

#: a worker allocates blocks of 2-6 MB, each followed by a small block it
#: keeps, then frees the big ones: glibc's default (a mapping threshold that
#: rises to 32 MB) kept about 600 MB of them in the worker's heap
_HEAP_SCRIPT = """
import sys, threading
from explorer.core import runtime
from explorer.core.memory import resident_bytes
if sys.argv[1] == "on":
    assert runtime.return_big_blocks_at_once()
import numpy as np
kept, big = [], []
def worker():
    for i in range(150):
        big.append(np.ones(2**21 // 8 * (1 + i % 3)))
        kept.append(np.ones(64))
    del big[:]
before = resident_bytes()
for _ in range(3):
    t = threading.Thread(target=worker)
    t.start()
    t.join()
print((resident_bytes() - before) / 2**20)
"""


@pytest.mark.skipif(runtime._glibc() is None, reason="mallopt is glibc's")
def test_big_blocks_freed_by_a_worker_go_back_to_the_system():
    import subprocess
    import sys

    def grown_mb(mode: str) -> float:
        out = subprocess.run([sys.executable, "-c", _HEAP_SCRIPT, mode], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return float(out.stdout.strip())

    assert grown_mb("on") < 40  # what is kept: the small blocks, about 30 kB


def test_limit_torch_threads_waits_for_an_import_under_way_in_another_thread():
    """The warm-up imports torch in a worker while a load calls
    limit_torch_threads: the half-imported module must not be used."""
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "from explorer.core import runtime\n"
        "t = threading.Thread(target=lambda: __import__('torch'))\n"
        "t.start()\n"
        "while 'torch' not in sys.modules: pass\n"
        "runtime.limit_torch_threads(import_torch=False)\n"
        "t.join()\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_the_gui_thread_gets_the_gil_back_within_a_fifth_of_a_millisecond():
    import sys

    before = sys.getswitchinterval()
    try:
        runtime.favour_the_gui_thread()
        assert sys.getswitchinterval() == pytest.approx(runtime.GIL_SWITCH_INTERVAL_S)
        assert runtime.GIL_SWITCH_INTERVAL_S <= 0.0002
    finally:
        sys.setswitchinterval(before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a nice value per thread is Linux's")
def test_a_lowered_thread_runs_nicer_and_leaves_the_others_alone():
    import os
    import threading

    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def work():
        seen["lowered"] = runtime.lower_this_thread()
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        seen["again"] = runtime.lower_this_thread()  # already low: stays so, no error

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == {"lowered": True, "nice": max(mine, runtime.WORKER_NICENESS), "again": True}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine  # the caller's thread untouched


def test_the_collector_is_off_while_any_thread_pauses_it_and_back_as_it_was():
    """Two threads' pauses overlap: the collector stays off until the last one
    leaves, then is on again; a collector that was off before stays off."""
    import gc
    import threading

    from explorer.core.runtime import collector_paused

    was = gc.isenabled()
    try:
        gc.enable()
        inside, leave = threading.Event(), threading.Event()

        def other():
            with collector_paused():
                inside.set()
                leave.wait(30)

        t = threading.Thread(target=other)
        with collector_paused():
            assert not gc.isenabled()
            t.start()
            assert inside.wait(30)
        assert not gc.isenabled(), "the other thread is still inside its pause"
        leave.set()
        t.join(30)
        assert gc.isenabled()
        gc.disable()
        with collector_paused():
            pass
        assert not gc.isenabled()
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a block that fails")
        assert not gc.isenabled()
        gc.enable()
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("a block that fails")
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


_SETTLE_SCRIPT = """
import gc, weakref
from explorer.core import runtime

class Node:
    pass

gc.collect()
kept = [[i] for i in range(50_000)]  # long-lived containers the collector walks
node = Node()
node.me = node  # a reference cycle, garbage once its name goes
dead = weakref.ref(node)
del node
before = gc.get_freeze_count()
assert runtime.settle_collector(min_objects=10**9) == 0  # too few to be worth it
assert gc.get_freeze_count() == before and dead() is not None
with runtime.collector_paused():  # a worker's block: no collection meanwhile, and none here
    assert runtime.settle_collector(min_objects=1_000) == 0 and dead() is not None
    gc.enable()  # (as if turned on elsewhere: the block alone still keeps the collection off)
    assert runtime.settle_collector(min_objects=1_000) == 0 and dead() is not None
    gc.disable()
gc.disable()
assert runtime.settle_collector(min_objects=1_000) == 0 and dead() is not None
gc.enable()
parked = runtime.settle_collector(min_objects=1_000)
assert parked >= 50_000, parked
assert dead() is None  # the garbage was collected, not parked
assert gc.get_freeze_count() >= before + 50_000
walked = gc.get_objects()
assert len(walked) < 1_000, len(walked)  # what is left for later collections to walk
assert not any(o is kept[0] for o in walked) and kept[49_999] == [49_999]
print("ok")
"""


def test_an_idle_moment_collects_then_parks_what_lives_so_later_collections_walk_only_the_new():
    """In a process of its own: parking is for the life of the process."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _SETTLE_SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_a_worker_gives_way_while_the_window_is_in_a_turn_and_only_so_long():
    import threading

    turns = runtime.WindowTurns()
    assert not turns.in_turn and turns.give_way(0.0)  # the window rests: no wait
    turns.turn_began()
    assert turns.in_turn and not turns.give_way(0.001)  # still in its turn: the wait has a bound
    released = []
    waiting = threading.Thread(target=lambda: released.append(turns.give_way(60.0)))
    waiting.start()
    turns.turn_ended()  # the window is about to sleep: the worker goes on
    waiting.join(60.0)
    assert released == [True] and not turns.in_turn



def test_the_switch_interval_is_the_turns_own_while_a_turn_is_under_way_and_the_processs_outside():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.0002)
        outside = sys.getswitchinterval()
        turns = runtime.WindowTurns(turn_switch_interval_s=0.00002)
        turns.turn_began()
        assert sys.getswitchinterval() == pytest.approx(0.00002)
        turns.turn_began()  # the next event of the same turn
        turns.turn_ended()
        assert sys.getswitchinterval() == outside
        turns.turn_ended()  # a second end changes nothing
        assert sys.getswitchinterval() == outside
        turns.turn_began()
        sys.setswitchinterval(0.001)  # someone else's (a notebook's cell, run in the window's turn)
        turns.turn_ended()
        assert sys.getswitchinterval() == pytest.approx(0.001)  # theirs stays
        sys.setswitchinterval(0.0002)
        plain = runtime.WindowTurns()  # without an interval of its own: left alone
        plain.turn_began()
        assert sys.getswitchinterval() == outside
        plain.turn_ended()
        assert runtime.WINDOW_TURNS.turn_switch_interval_s == runtime.TURN_SWITCH_INTERVAL_S
        assert runtime.TURN_SWITCH_INTERVAL_S < runtime.GIL_SWITCH_INTERVAL_S
    finally:
        sys.setswitchinterval(before)


@contextlib.contextmanager
def _looping_worker(turns):
    """A thread looping in Python under ``turns.gate()``, recording the turn each pass sees; stopped
    and joined on leaving."""
    import threading

    seen, stop = [], threading.Event()

    def now() -> int:
        return turns.turn

    def loop() -> None:
        sys.setprofile(turns.gate())
        try:
            while not stop.is_set():
                seen.append(now())
        finally:
            sys.setprofile(None)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        assert _until(lambda: len(seen) > 100)  # it loops
        yield seen
    finally:
        stop.set()
        thread.join(60.0)
    assert not thread.is_alive()


def _until(condition, timeout_s: float = 60.0) -> bool:
    import time

    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        time.sleep(0.005)
    return condition()


def test_a_gated_worker_makes_no_call_while_the_window_is_in_a_turn():
    """A step can be long; the gate stops the worker at its next call while a turn is under way,
    so the window's Python does not share the GIL with it."""
    import time

    turns = runtime.WindowTurns()
    turns.max_wait_s = 60.0  # only the turn's end lets it on
    with _looping_worker(turns) as seen:
        turns.turn_began()
        turn = turns.turn
        time.sleep(0.2)  # the GIL is free: a worker not stepping aside loops on, seeing this turn
        during = seen.count(turn)
        turns.turn_ended()
        after = len(seen)
        assert _until(lambda: len(seen) > after + 100)  # the turn over, it goes on
    assert turn and during <= 1, during  # at most the pass under way when the turn began


def test_a_gated_worker_waits_once_a_turn_and_only_so_long():
    """A worker may hold a lock the window's turn waits for: after ``max_wait_s`` it goes on, and
    the same turn does not stop it again."""
    turns = runtime.WindowTurns()
    turns.max_wait_s = 0.01
    with _looping_worker(turns) as seen:
        turns.turn_began()
        turn = turns.turn
        assert _until(lambda: seen.count(turn) > 100)  # a turn that does not end
        turns.turn_ended()


def test_a_gated_worker_waiting_in_an_event_of_its_own_is_not_stopped_inside_it():
    """The gate may fire anywhere, inside ``threading``'s own waits too. A gate that waited on an
    Event deadlocked a walk: a worker, back from an Event's wait and holding its lock, was stopped
    by the gate, which waited on that same lock."""
    import threading

    turns = runtime.WindowTurns()
    turns.max_wait_s = 60.0
    passes, stop = [], threading.Event()

    def loop() -> None:
        sys.setprofile(turns.gate())
        try:
            while not stop.is_set():
                turns.give_way(60.0)  # an Event-like wait of the window's own, gated around
                passes.append(1)
        finally:
            sys.setprofile(None)

    def window() -> None:  # turns that begin and end while the worker waits and passes
        for _ in range(3000):
            turns.turn_began()
            turns.turn_ended()

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    turning = threading.Thread(target=window, daemon=True)  # a deadlock holds it, not the test
    try:
        turning.start()
        turning.join(60.0)
        assert not turning.is_alive(), "the window's turns and the gated worker deadlocked"
        before = len(passes)
        assert _until(lambda: len(passes) > before + 10, 30.0)
    finally:
        stop.set()
        worker.join(10.0)
    assert not worker.is_alive()


def test_a_job_looping_over_short_steps_waits_between_them_and_runs_them_unprofiled():
    """Training yields a tenth of a second apart but steps every 1-2 ms: between two steps it waits
    for the window's turn as at a yield, and its short steps run without the gate's profiling."""
    import threading
    import time

    turns = runtime.WindowTurns()
    turns.max_wait_s = 60.0
    turns._lively_until = float("inf")  # the window is at work
    seen, stop = [], threading.Event()

    def job() -> None:
        turns.before_step(turns.gate())  # a job's step, the window lively: under the gate
        seen.append((turns.turn, sys.getprofile() is not None))
        while not stop.is_set():
            turns.between_steps()
            seen.append((turns.turn, sys.getprofile() is not None))
        sys.setprofile(None)

    worker = threading.Thread(target=job, daemon=True)
    worker.start()
    try:
        assert _until(lambda: len(seen) > 100)
        turns.turn_began()
        turn = turns.turn
        time.sleep(0.2)  # the GIL is free: a job not waiting between its steps steps on
        during = sum(1 for t, _ in seen if t == turn)
        turns.turn_ended()
        after = len(seen)
        assert _until(lambda: len(seen) > after + 100)
    finally:
        stop.set()
        worker.join(60.0)
    assert seen[0][1] and not any(profiled for _, profiled in seen[1:])
    assert during <= 1, during
    turns.turn_began()  # the window's own thread never waits for its own turn
    turns.between_steps()
    turns.turn_ended()


def test_a_turn_begins_without_waiting_for_a_worker_still_passing_the_last_one():
    """A worker waiting for a turn to end takes the turn's lock for a moment once it has, and may
    need the GIL to let it go: a window that took the same lock again waited for that (up to 18 ms
    at the start of a turn with two gated workers). Each turn takes a lock of its own."""
    import threading

    turns = runtime.WindowTurns()
    turns.turn_began()
    ended = turns._held  # the lock of a turn that is about to end
    turns.turn_ended()
    assert ended.acquire(False)  # a worker passing it, not yet let go
    window = threading.Thread(target=turns.turn_began, daemon=True)
    try:
        window.start()
        window.join(10.0)
        assert not window.is_alive() and turns.in_turn  # the next turn began at once
    finally:
        ended.release()
        window.join(10.0)
        turns.turn_ended()


def test_the_window_is_lively_only_in_a_turn_and_for_a_while_after_a_busy_one():
    """A timer's tick or a job's progress is a short turn and gates nothing; a paint or a click is
    a busy turn, and for :data:`LIVELY_FOR_S` after it workers run their steps under the gate."""
    clock = [100.0]
    turns = runtime.WindowTurns(clock=lambda: clock[0])
    assert not turns.lively
    turns.turn_began()
    assert turns.lively and turns.in_turn
    clock[0] += runtime.BUSY_TURN_S / 4
    turns.turn_ended()
    assert not turns.lively  # a short turn
    turns.turn_began()
    clock[0] += runtime.BUSY_TURN_S * 1.5
    turns.turn_ended()
    assert turns.lively and not turns.in_turn
    clock[0] += runtime.LIVELY_FOR_S * 0.99
    assert turns.lively
    clock[0] += runtime.LIVELY_FOR_S * 0.02
    assert not turns.lively


_PARK_SCRIPT = """
import gc, threading, weakref
from explorer.core import runtime

class Node:
    pass

gc.collect()
gc.freeze()  # what the interpreter made: out of the counts below
runtime.park_after_full_collections()
runtime.park_after_full_collections()  # once only
assert gc.callbacks.count(runtime._park_survivors) == 1
kept = [[i] for i in range(50_000)]
node = Node()
node.me = node  # a reference cycle, garbage once its name goes
dead = weakref.ref(node)
del node
before = gc.get_freeze_count()
young = [[i] for i in range(5_000)]
gc.collect(0)
gc.collect(1)
assert gc.get_freeze_count() == before  # younger collections park nothing
worker = threading.Thread(target=gc.collect)  # a full collection, in any thread
worker.start()
worker.join()
assert dead() is None  # the garbage was collected, not parked
assert gc.get_freeze_count() >= before + 55_000
assert len(gc.get_objects()) < 1_000  # what the next full collection walks
with runtime.collector_paused():  # a block that makes containers in one call: nothing parked under it
    more = [[i] for i in range(10_000)]
    n = gc.get_freeze_count()
    gc.collect()
    assert gc.get_freeze_count() == n
extra = [[i] for i in range(20_000)]
assert runtime.settle_collector(min_objects=1_000) >= 20_000  # says how many it parked, with the callback on
n = gc.get_freeze_count()
runtime.park_after_full_collections(False)
assert runtime._park_survivors not in gc.callbacks
gc.collect()
assert gc.get_freeze_count() == n and kept[49_999] == [49_999]
print("ok")
"""


def test_after_a_full_collection_what_survived_is_parked_until_turned_off():
    """In a process of its own: parking is for the life of the process."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _PARK_SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
