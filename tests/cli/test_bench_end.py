"""``bench --monkey``: when a job still runs after the walk's window closed,
the command ends the process once its report is printed, without the
interpreter's teardown (which crashed in that job's thread: exit 139)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_job_left_running_ends_the_process_after_the_report():
    code = textwrap.dedent("""
        import threading, time
        from explorer.benchmarks.monkey import MonkeyReport
        from explorer.cli.bench import _end
        assert _end(MonkeyReport()) == 0  # every job stopped: an ordinary return
        threading.Thread(target=time.sleep, args=(60,)).start()  # not a daemon: teardown would wait
        print("the report")
        _end(MonkeyReport(jobs_stopped=False))
        print("never printed")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["the report"]


def test_the_report_names_the_jobs_running_when_the_walk_ended():
    """A walk whose window left a job running said only that one did; the report now names the
    jobs running as the walk ended, one of which did not stop."""
    from explorer.benchmarks.monkey import MonkeyReport, format_monkey

    text = format_monkey(MonkeyReport(jobs_stopped=False, jobs_at_close=["load_model", "manifold_job"]))
    assert "still running a minute after the window closed (of load_model, manifold_job)" in text
    assert "still running" not in format_monkey(MonkeyReport(jobs_at_close=["load_model"]))


def test_thread_places_say_where_each_other_thread_is():
    """When a job does not stop, the walk's report says where every other thread is: its name
    and its innermost frame outside Python's own library (here, this file's ``waiter``)."""
    import threading

    from explorer.benchmarks.listeners import thread_places

    release = threading.Event()

    def waiter():
        release.wait(30)

    t = threading.Thread(target=waiter, name="the-waiter")
    t.start()
    try:
        places = thread_places()
    finally:
        release.set()
        t.join()
    mine = [p for p in places if p.startswith("the-waiter at ")]
    assert len(mine) == 1 and mine[0].endswith(" waiter") and "test_bench_end.py:" in mine[0]
    assert not any(p.startswith(threading.current_thread().name + " at ") for p in places)  # not this one


def test_the_stack_sampler_notes_a_full_collection_and_the_thread_that_made_it():
    """A stall with no samples of the window's thread had no place; a full collection in any
    thread holds the GIL throughout, so the sampler notes it, with the thread."""
    import gc
    import threading
    import time

    from explorer.benchmarks.listeners import StackSampler

    sampler = StackSampler()
    sampler.start()
    try:
        t0 = time.perf_counter()
        t = threading.Thread(target=gc.collect, name="the-collector")
        t.start()
        t.join()
        t1 = time.perf_counter()
    finally:
        sampler.stop()
    assert any(gen == 2 and name == "the-collector" for _, _, gen, name in sampler.gc_log.collections)
    assert "full GC" in sampler.place(t0, t1) and "in the-collector" in sampler.place(t0, t1)
    assert "the-collector" not in sampler.place(t1 + 1, t1 + 2)  # only what overlaps the stall
    assert sampler.gc_log._on_gc not in gc.callbacks  # stopped: the process's collections are its own again


def test_the_stack_sampler_says_where_the_other_threads_were_when_it_was_kept_from_the_gil():
    """A thread that runs Python without letting the GIL go (here for 0.3 s, with a switch
    interval of 1 s) keeps every sample out; the next sample says where that thread went on."""
    import sys
    import threading
    import time

    from explorer.benchmarks.listeners import StackSampler

    release, spun = threading.Event(), threading.Event()

    def hog():
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:
            pass
        spun.set()
        release.wait(30)

    sampler = StackSampler()
    interval = sys.getswitchinterval()
    sampler.start()
    time.sleep(0.05)
    t = threading.Thread(target=hog, name="the-hog")
    try:
        sys.setswitchinterval(1.0)
        t0 = time.perf_counter()
        t.start()
        spun.wait(30)
        time.sleep(0.1)  # a sample after the spin
        t1 = time.perf_counter()
    finally:
        sys.setswitchinterval(interval)
        sampler.stop()
        release.set()
        t.join()
    late = [(a, b, places) for a, b, places in sampler.starved if b - a >= 0.2]
    assert late and any(p.startswith("the-hog at ") and p.endswith(" hog") for p in late[0][2])
    place = sampler.place(t0, t1)
    assert "no sample for " in place and "the-hog at " in place.split("no sample for ", 1)[1]


def test_the_stack_sampler_goes_on_past_a_frame_it_cannot_read(monkeypatch):
    """Walking the window thread's frames one at a time while that thread runs, a frame's f_back
    once gave an int (Python 3.11) and the sampler's thread died: every later stall of the walk had
    no place. A sample that cannot be read is lost; the next ones are taken."""
    import sys
    import threading
    import time
    from types import SimpleNamespace

    from explorer.benchmarks.listeners import StackSampler

    real, calls = sys._current_frames, []

    def now_and_then_unreadable():
        calls.append(1)
        frames = real()
        if len(calls) == 2:  # the main thread's frame, its caller an int
            code = frames[threading.main_thread().ident].f_code
            frames[threading.main_thread().ident] = SimpleNamespace(f_code=code, f_lineno=1, f_back=7)
        return frames

    monkeypatch.setattr(sys, "_current_frames", now_and_then_unreadable)
    sampler = StackSampler(interval_s=0.005)
    sampler.start()
    try:
        end = time.perf_counter() + 30
        while len(calls) < 6 and time.perf_counter() < end:
            time.sleep(0.01)
        alive = sampler._thread.is_alive()
    finally:
        sampler.stop()
    assert len(calls) >= 6 and alive
    assert len(sampler._samples) >= len(calls) - 2  # all but the unreadable one (and one being taken)


def test_a_walk_that_crashes_the_process_leaves_every_thread_s_stack():
    """A walk once ended in a segmentation fault inside the interpreter with nothing on stderr and an
    empty report. ``bench --monkey`` now has faulthandler on: a fatal fault in the walk prints where
    each thread was. (Here the walk itself faults, reading address 0 through ctypes.)"""
    code = textwrap.dedent("""
        import ctypes
        import explorer.benchmarks.monkey as monkey

        def walk_that_faults(*_args, **_kwargs):
            ctypes.string_at(0)

        monkey.bench_monkey = walk_that_faults
        from explorer.cli import main
        main(["bench", "--monkey", "3", "--json"])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "Fatal Python error: Segmentation fault" in out.stderr, out.stderr[-2000:]
    assert "in walk_that_faults" in out.stderr and "Current thread" in out.stderr


def test_the_sampler_reads_a_thread_s_frames_in_one_go():
    """The sampler reads another thread's frames with no call and no backward jump between the first
    and the last, so that thread cannot run (and change their links) while they are read: read in a
    loop, a frame's f_back once gave an int, and a walk with the sampler on ended in a segmentation
    fault. The frames read are those a loop over f_back gives, innermost first, up to the limit."""
    import dis
    import sys

    from explorer.benchmarks.listeners import STACK_LIMIT, _stack_of

    ops = {i.opname for i in dis.get_instructions(_stack_of)}
    assert not {op for op in ops if op.startswith(("CALL", "PRECALL", "JUMP_BACKWARD", "FOR_ITER"))}, ops
    assert "LOAD_ATTR" in ops

    def deep(n):
        return deep(n - 1) if n else sys._getframe()

    def loop(f):
        read = []
        while f is not None and len(read) < STACK_LIMIT:
            read.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
            f = f.f_back
        return tuple(read)

    for depth in (0, 5, STACK_LIMIT + 20):
        frame = deep(depth)
        assert _stack_of(frame) == loop(frame)
    assert len(_stack_of(deep(STACK_LIMIT + 20))) == STACK_LIMIT
    assert _stack_of(None) == ()
