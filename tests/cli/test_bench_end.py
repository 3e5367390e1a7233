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

    from explorer.core.runtime import thread_places

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
