"""The monkey (issue 23): a seeded random walk of ~300 user actions through
the real window, offscreen. No exception reaches sys.excepthook, no Qt
warning, no RuntimeWarning (numpy meeting a NaN), and at the end every
visible readout agrees with AppState; once the window is closed nothing it
made stays behind (the autouse leak check).
Stall times are not asserted here (offscreen, on a shared machine): ``bench
--monkey`` reports them from a real window."""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QApplication

from explorer.benchmarks.monkey import Monkey, format_monkey

ACTIONS = int(os.environ.get("EXPLORER_MONKEY_ACTIONS", "300"))


def test_a_walk_of_user_actions_leaves_no_exception_warning_or_stale_readout(qtbot, explorer):
    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="default")
    report = Monkey(QApplication.instance(), ex, seed=1, heavy=False, settle_ms=5).run(ACTIONS)
    print(format_monkey(report))
    assert report.actions == ACTIONS and report.platform == "offscreen"
    assert report.exceptions == 0, report.messages
    assert report.qt_warnings == 0, report.messages
    assert report.runtime_warnings == 0, report.messages  # numpy met a NaN or an overflow (an All-NaN ring did)
    assert report.readouts_agree, report.disagreements
    assert report.rss_growth_mb < 1500
    # how fast the machine ran Python just before and just after the walk: two timings, and the text says so
    assert len(report.machine_ms) == 2 and all(0 < ms < 60_000 for ms in report.machine_ms)
    assert "a fixed loop took" in format_monkey(report)
    kinds = report.stalls_by_action  # every action is counted under its kind
    assert sum(n for n, _, _ in kinds.values()) == ACTIONS and len(kinds) >= 8
    assert sum(over for _, over, _ in kinds.values()) == report.stalls_over_100ms
    assert max(ms for _, _, ms in kinds.values()) == round(report.max_stall_ms, 1)
    by_jobs = report.stalls_by_jobs  # and under the number of jobs running when it began
    assert by_jobs and set(by_jobs) <= {"0", "1", "2+"}
    assert sum(n for n, _ in by_jobs.values()) == ACTIONS
    assert sum(over for _, over in by_jobs.values()) == report.stalls_over_100ms
    by_job = report.stalls_by_job  # and under each job's name running then
    with_jobs = [by_jobs.get(k, [0, 0]) for k in ("1", "2+")]
    assert by_job and all(0 <= over <= n for n, over in by_job.values())
    assert sum(n for n, _ in by_job.values()) >= sum(n for n, _ in with_jobs)  # each such action, once a job
    assert sum(over for _, over in by_job.values()) >= sum(over for _, over in with_jobs)
    assert len(report.stalls) == report.stalls_over_100ms  # each one listed, with what caused it
    assert all(ms >= 100 and what.startswith("#") and jobs >= 0 for ms, what, jobs in report.stalls)  # rounded


def test_the_walk_counts_runtime_warnings_of_the_window_and_other_threads(qtbot, explorer):
    """A NaN met by numpy, in the window's thread, another thread or a job's worker, is a
    finding of the walk (pyqtgraph's "All-NaN slice" at every paint of a ring at y = NaN was
    only a line in the suite's summary). Each one counts, not the first per place. A job
    running meanwhile hides none (superqt's worker took every warning of the process)."""
    import threading
    import warnings

    import numpy as np

    from explorer.workers import JobRunner

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)
    runner = JobRunner()

    def nan_job():
        yield 0.5, "a NaN"
        return np.nanmean(np.array([np.nan]))

    def all_nan():
        runner.start(nan_job)
        np.nanmin(np.array([np.nan]))
        worker = threading.Thread(target=lambda: np.nanmax(np.array([np.nan])))
        worker.start()
        worker.join()
        qtbot.waitUntil(lambda: not runner.running, timeout=30_000)
        return "three NaN slices"

    monkey.actions = [("nan", all_nan)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what the walk must see past
        report = monkey.run(3)
    assert report.runtime_warnings == 9  # in any order: the job's may come first
    assert sum("All-NaN" in m for m in report.messages) == 6
    assert sum("Mean of empty slice" in m for m in report.messages) == 3
    # each says where it came from: the action, and the frames and thread that raised it
    assert sum("in #" in m and "three NaN slices" in m for m in report.messages) == 9
    places = report.warning_places
    assert sum(n for n, _ in places.values()) == 9
    assert any("test_monkey.py" in p and " all_nan " in p and "[window thread]" in p and "All-NaN" in p
               for p in places)  # the window's thread, in the action itself
    assert any(" <lambda> " in p and "[other thread]" in p for p in places)  # the other thread
    assert any(" nan_job " in p and "Mean of empty slice" in p for p in places)  # the job's worker
    # ... and the model open then (a path's flat axis was found on one model of many)
    assert all(first.startswith("#") and first.endswith("three NaN slices (model toy:robot)")
               for _, first in places.values())
    assert report.exceptions == 0 and report.qt_warnings == 0


def test_with_stacks_sampled_each_stall_says_where_the_window_thread_was(qtbot, explorer):
    """``bench --monkey N --stacks``: the old walk named a 2.7 s stall only "tour close". A stall
    of at least 150 ms (a busy loop: a slower machine only makes it longer) is placed in the
    function that made it; an action that ends at once is no stall and has no place."""
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1, stacks=True)

    def hold_the_window():
        end = time.perf_counter() + 0.15
        while time.perf_counter() < end:
            pass
        return "held"

    texts = iter(f"text {k}" for k in range(100))

    def type_a_text():  # a slot of the state's holds the window: the app's handler is named
        ex.state.set_text(next(texts))
        return "typed"

    monkey.actions = [("hold", hold_the_window), ("nothing", lambda: "nothing"), ("type", type_a_text)]
    ex.state.text_changed.connect(hold_the_window)
    try:
        report = monkey.run(9)
    finally:
        ex.state.text_changed.disconnect(hold_the_window)
    held = [ms for ms, what, _ in report.stalls if what.endswith(("held", "typed"))]
    assert held and all(ms >= 150 for ms in held)
    assert len(report.stall_places) == len(report.stalls)
    for (_, what, _), place in zip(report.stalls, report.stall_places, strict=True):
        if what.endswith(("held", "typed")):
            assert "test_monkey.py" in place and "hold_the_window" in place, place
        # the handler of the turn is the app's outermost frame: none when the walk itself held it
        assert ("in handlers app_state.py:" in place and " set_text " in place) == what.endswith("typed"), place
    assert any(what.endswith("typed") for _, what, _ in report.stalls)
    assert "hold_the_window" in format_monkey(report)


def test_each_stall_says_what_background_work_landed_in_it(qtbot, explorer):
    """A stall whose action was cheap is the cost of what a job brought back: the walk names it
    (the loader's result and the model installed here; a slot standing for a costly install
    holds the window 150 ms after each load). A stall of the action's own, with nothing
    running, names nothing."""
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)

    def hold():
        end = time.perf_counter() + 0.15
        while time.perf_counter() < end:
            pass

    ex.load_finished.connect(hold)
    specs = iter(["toy:cat-sat", "toy:robot"])

    def open_toy_or_hold():
        if monkey.report.actions % 2:
            qtbot.waitUntil(lambda: not ex.running_jobs(), timeout=60_000)
            hold()
            return "held"
        with qtbot.waitSignal(ex.load_finished, timeout=60_000):
            ex.open_spec(next(specs))
        return "opened"

    monkey.actions = [("step", open_toy_or_hold)]
    try:
        report = monkey.run(4)
    finally:
        ex.load_finished.disconnect(hold)
    assert [what.split()[-1] for _, what, _ in report.stalls] == ["opened", "held"] * 2
    for (_, what, _), landed in zip(report.stalls, report.stall_landings, strict=True):
        if what.endswith("opened"):
            assert "load_model result" in landed and "model installed" in landed, landed
        else:
            assert landed == "", landed
    # per kind of landing, the actions it came in and how many of them stalled (both opens)
    assert report.stalls_by_landing["model installed"] == [2, 2]
    assert report.stalls_by_landing["load_model result"] == [2, 2]
    text = format_monkey(report)
    assert "opened while landing: " in text and "while model installed landed: 2 actions, 2 over 100 ms" in text


def test_each_stall_says_how_much_of_it_the_window_thread_worked(qtbot, explorer):
    """A stall is the window's thread working (its CPU time near the stall) or waiting for
    something (a lock, the GIL, the cores: far below). A hold that sleeps 150 ms is a stall the
    thread did not work; one that loops is a stall it did (some of it, however busy the machine)."""
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)

    def wait():
        time.sleep(0.15)
        return "waited"

    def work():
        end = time.thread_time() + 0.05  # 50 ms of the thread's own CPU time, however long that takes
        while time.thread_time() < end:
            pass
        time.sleep(0.15)
        return "worked"

    monkey.actions = [("wait", wait), ("work", work)]
    began = time.perf_counter()
    report = monkey.run(6)
    ended = time.perf_counter() - began
    assert len(report.stall_cpu_ms) == len(report.stalls) == 6
    # when each began and ended, to place it in a profiler's trace: in walk order, as long as it says (to a ms)
    times = report.stall_times_s
    assert len(times) == 6 and all(0 <= a < b <= ended for a, b in times)
    assert all(b0 <= a1 for (_, b0), (a1, _) in zip(times, times[1:]))
    assert all(abs((b - a) * 1000 - ms) <= 2 for (a, b), (ms, _, _) in zip(times, report.stalls, strict=True))
    for (ms, what, _), cpu in zip(report.stalls, report.stall_cpu_ms, strict=True):
        assert ms >= 150
        if what.endswith("waited"):
            assert cpu < 40, (ms, cpu)
        else:
            assert cpu >= 50, (ms, cpu)
    assert "waited: the window's thread worked " in format_monkey(report)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not os.path.exists("/proc/self/schedstat"),
                    reason="pins threads to a core and reads Linux's scheduler statistics")
def test_each_stall_says_how_long_the_window_thread_waited_for_a_core(qtbot, explorer):
    """What a stall's thread did not work it either waited for a core or slept (the GIL, a lock). Pinned
    to one core beside a process spinning there, 50 ms of the thread's own work take turns with it:
    the stall says the thread waited for that core; asleep alone, it waited for none to speak of."""
    import subprocess
    import sys
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)
    core, mine = min(os.sched_getaffinity(0)), os.sched_getaffinity(0)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        try:
            os.sched_setaffinity(spinner.pid, {core})
        except OSError as exc:
            pytest.skip(f"cannot pin a process to a core here: {exc}")

        def crowded():
            os.sched_setaffinity(0, {core})  # this thread only (0: the calling thread)
            try:
                end = time.thread_time() + 0.05
                while time.thread_time() < end:
                    pass
            finally:
                os.sched_setaffinity(0, mine)
            time.sleep(0.15)
            return "crowded"

        def asleep():
            time.sleep(0.15)
            return "asleep"

        time.sleep(0.2)  # the spinner past its start-up, spinning
        monkey.actions = [("crowded", crowded), ("asleep", asleep)]
        report = monkey.run(4)
    finally:
        spinner.kill()
        spinner.wait()
    assert len(report.stall_ready_ms) == len(report.stalls) == 4
    for (ms, what, _), ready in zip(report.stalls, report.stall_ready_ms, strict=True):
        if what.endswith("crowded"):
            assert ready >= 10, (ms, ready)
        else:
            assert ready < 50, (ms, ready)
    assert "crowded: the window's thread worked " in format_monkey(report)


def test_each_stall_names_the_jobs_running_when_it_began(qtbot, explorer):
    """"5 jobs" said how many workers shared the cores with a stall, not which: each stall names them."""
    import threading
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    qtbot.waitUntil(lambda: not ex.running_jobs(), timeout=60_000)
    release = threading.Event()

    def waiting_job():
        while not release.wait(0.01):
            yield

    runner = ex._runner()
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)

    def start_or_hold():
        if not runner.running:
            runner.start(waiting_job)
            qtbot.waitUntil(lambda: ex.running_jobs() == ["waiting_job"], timeout=10_000)
            return "started"
        time.sleep(0.15)
        if monkey.report.actions == 2:  # the last: the job ends (the walk waits for its jobs at its end)
            release.set()
        return "held"

    monkey.actions = [("step", start_or_hold)]
    try:
        report = monkey.run(3)
    finally:
        release.set()
        qtbot.waitUntil(lambda: not runner.running, timeout=10_000)
    held = [jobs for (_, what, _), jobs in zip(report.stalls, report.stall_jobs, strict=True) if what.endswith("held")]
    assert held == [["waiting_job"]] * 2
    assert "held: the window's thread worked " in format_monkey(report)
    assert ", begun while waiting_job ran" in format_monkey(report)


def test_the_walk_reports_its_gaps_percentiles_and_the_results_that_waited(qtbot, explorer, monkeypatch):
    """Each action's longest gap goes into the walk's percentiles (a steadier comparison of two walks
    than the few stalls over 100 ms), and the results that reached a long pass and waited are counted."""
    import time

    from explorer import pacing
    from explorer.core.runtime import WindowTurns

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=3, settle_ms=1)
    got = []

    def slow():
        time.sleep(0.15)
        return "slow"

    def two_results():  # in a pass that has run a second: both wait for the next pass
        clock = [1.0]
        turns = WindowTurns(clock=lambda: clock[0])
        turns.turn_began()
        clock[0] = 2.0
        monkeypatch.setattr(pacing.PACER, "_turns", turns)
        pacing.PACER.land(got.append, 1)
        pacing.PACER.land(got.append, 2)
        monkeypatch.undo()
        return "two results"

    monkey.actions = [("slow", slow), ("results", two_results)]
    report = monkey.run(20)
    kinds = report.stalls_by_action
    assert kinds["slow"][0] >= 1 and kinds["results"][0] >= 1  # the seed walks both
    p = report.stall_percentiles_ms
    assert list(p) == ["p50", "p90", "p99"]
    assert p["p50"] <= p["p90"] <= p["p99"] == round(report.max_stall_ms, 1)  # the 99th of 20: the longest
    assert p["p99"] >= 150
    assert report.landings_waited >= 2 * kinds["results"][0]  # and the model's own jobs' results that met a sleep
    assert got == [1, 2] * kinds["results"][0]  # each delivered, in order
    text = format_monkey(report)
    assert "longest gap of an action: p50 " in text and f"{report.landings_waited:,} results waited" in text


def test_each_stall_says_what_the_window_showed_when_it_began(qtbot, explorer):
    """A walk cannot be replayed to a stall (its actions follow what has loaded by then): each stall
    says the tab, the model and the text's length it began in, to look for it again there."""
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)
    tabs = ex.window.tabs
    names = [tabs.tabText(i) for i in range(tabs.count())]

    def hold_then_switch():
        time.sleep(0.15)
        tabs.setCurrentIndex(names.index("Cost" if tabs.tabText(tabs.currentIndex()) == "Matrix" else "Matrix"))
        return "held"

    tabs.setCurrentIndex(names.index("Matrix"))
    monkey.actions = [("hold", hold_then_switch)]
    report = monkey.run(2)
    chars = f"{len(ex.state.text):,} chars"
    assert report.stall_scenes == [f"tab 'Matrix', toy:robot, {chars}", f"tab 'Cost', toy:robot, {chars}"]
    assert f"held begun in tab 'Cost', toy:robot, {chars}" in format_monkey(report)


def _drop_from_page_cache(path) -> bool:
    """Asks the kernel to forget ``path``'s pages (its page cache, as a machine that reclaims cold files
    does); True when reading it then comes from disk (not so where the temp dir lives in memory)."""
    import resource

    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_inblock
        os.pread(fd, 4096, 0)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return resource.getrusage(resource.RUSAGE_SELF).ru_inblock > before
    finally:
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="drops a file from the page cache (posix_fadvise)")
def test_each_stall_says_what_had_to_come_from_disk_and_who_read_it(qtbot, explorer, tmp_path):
    """A stall the window's thread slept through may be a wait for the disk: its own read of a file the
    machine dropped from memory, or a lock held by a thread reading one. Each stall says the kilobytes
    read from disk while it lasted, the window thread's and the whole process's."""
    import threading
    import time

    cold = tmp_path / "cold.bin"
    cold.write_bytes(os.urandom(4 << 20))
    if not _drop_from_page_cache(cold):
        pytest.skip("reading a file here never reaches a disk (the temp dir is in memory)")
    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)

    def read_here():
        _drop_from_page_cache(cold)
        cold.read_bytes()
        time.sleep(0.15)
        return "read here"

    def read_there():
        _drop_from_page_cache(cold)
        reader = threading.Thread(target=cold.read_bytes)
        reader.start()
        reader.join()
        time.sleep(0.15)
        return "read there"

    def asleep():
        time.sleep(0.15)
        return "asleep"

    monkey.actions = [("here", read_here), ("there", read_there), ("asleep", asleep)]
    report = monkey.run(9)
    assert len(report.stall_disk) == len(report.stalls) == 9
    for (_, what, _), (own_faults, faults, own_kb, kb) in zip(report.stalls, report.stall_disk, strict=True):
        assert 0 <= own_faults <= faults and 0 <= own_kb <= kb
        if what.endswith("read here"):
            assert own_kb >= 2048, (what, own_kb, kb)
        elif what.endswith("read there"):
            assert own_kb < 1024 and kb >= 2048, (what, own_kb, kb)
        else:  # the app's own threads may read (the warm-up's imports): only the window's thread is known
            assert own_kb < 1024, (what, own_kb)
    assert "KB of it by the window's thread" in format_monkey(report)


def test_each_stall_names_the_full_collections_made_in_it_in_any_thread(qtbot, explorer):
    """A full collection holds the GIL throughout: the window's thread waits for it asleep, whichever
    thread made it. Each stall names the collections that overlapped it, with the thread, without the
    stack sampler (``--stacks``) that noted them before."""
    import gc
    import threading
    import time

    ex = explorer
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="toy:robot")
    monkey = Monkey(QApplication.instance(), ex, seed=0, settle_ms=1)

    def collected_there():
        t = threading.Thread(target=gc.collect, name="the-collector")
        t.start()
        t.join()
        time.sleep(0.15)
        return "collected"

    monkey.actions = [("collect", collected_there)]
    report = monkey.run(3)
    assert len(report.stall_collections) == len(report.stalls) == 3
    for notes in report.stall_collections:
        assert any(n.startswith("full GC ") and n.endswith(" in the-collector") for n in notes), notes
    assert " in the-collector" in format_monkey(report)
