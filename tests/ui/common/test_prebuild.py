"""Views built while the user is idle (pytest-qt, offscreen): one per idle
moment, never while the user is active, a dialog is open or a model loads;
in the real window every tab's view ends up built without being shown."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication, QDialog, QLabel

from explorer.ui.common import prebuild
from explorer.ui.common.lazy_page import LazyPage
from explorer.ui.common.prebuild import IDLE_S, IdleBuilder
from tests.support.clocks import SetClock as Clock
from tests.support.ui_helpers import load


def pages(qtbot, n=3):
    made = []

    def build(k):
        def make():
            made.append(k)
            return QLabel(f"view {k}")
        return make

    out = [LazyPage(build(k)) for k in range(n)]
    for p in out:
        qtbot.addWidget(p)
    return out, made


def test_one_view_per_idle_moment_in_tab_order(qtbot):
    ps, made = pages(qtbot)
    clock = Clock()
    b = IdleBuilder(ps, clock=clock)
    b.start()
    assert b.active and not made
    clock.now += IDLE_S / 2
    assert not b.poll() and not made  # not idle long enough
    clock.now += IDLE_S
    assert b.poll() and made == [0]
    assert not b.poll() and made == [0]  # the next one waits for another idle moment
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0, 1]
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0, 1, 2] and not b.pending()
    clock.now += IDLE_S + 0.1
    assert not b.poll() and not b.active  # all built, no parts asked for: the timer stops
    assert isinstance(ps[0].view(), QLabel) and made == [0, 1, 2]  # built once


def test_then_the_parts_views_make_on_demand_one_per_idle_moment(qtbot):
    made = []

    class View(QLabel):
        def idle_parts(self):
            return [lambda: made.append("a"), lambda: made.append("b")]

    page = LazyPage(View)
    qtbot.addWidget(page)
    clock = Clock()
    b = IdleBuilder([page], clock=clock)
    b.start()
    clock.now += IDLE_S + 0.1
    assert b.poll() and page.built and made == []
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == ["a"]
    b.touch()
    assert not b.poll() and made == ["a"]  # the user came back
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == ["a", "b"]
    clock.now += IDLE_S + 0.1
    assert not b.poll() and not b.active


def test_activity_postpones_and_a_busy_app_waits(qtbot):
    ps, made = pages(qtbot)
    clock = Clock()
    loading = [True]
    b = IdleBuilder(ps, ready=lambda: not loading[0], clock=clock)
    b.start()
    clock.now += IDLE_S + 1
    assert not b.poll() and not made  # a model is loading
    loading[0] = False
    assert not b.poll() and not made  # the load just ended: its results are being looked at
    clock.now += IDLE_S / 2
    assert not b.poll() and not made
    clock.now += IDLE_S / 2 + 0.1
    assert b.poll() and made == [0]  # a whole idle moment after the app's own work
    b.touch()  # the user typed: the state changed
    clock.now += IDLE_S / 2
    assert not b.poll() and made == [0]
    clock.now += IDLE_S
    assert b.poll() and made == [0, 1]


def test_what_is_asked_first_starts_before_any_view_then_its_job_is_waited_for(qtbot):
    """The app's imports left out of the warm-up (torch._dynamo) start at the first idle moment,
    a job each, before any view is built; the builder waits while the job runs."""
    ps, made = pages(qtbot)
    clock = Clock()
    jobs = []
    b = IdleBuilder(ps, ready=lambda: not any(jobs), clock=clock)
    b.start(first=[lambda: jobs.append("import")])
    clock.now += IDLE_S / 2
    assert not b.poll() and not jobs  # not idle long enough
    clock.now += IDLE_S
    assert b.poll() and jobs == ["import"] and not made  # the job, not a view
    clock.now += IDLE_S + 0.1
    assert not b.poll() and not made  # the job runs: the app is busy
    jobs.clear()  # it ended
    assert not b.poll() and not made  # its end counts as activity
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0]  # then the views, as before


def test_an_open_dialog_counts_as_activity(qtbot):
    ps, made = pages(qtbot)
    clock = Clock()
    b = IdleBuilder(ps, clock=clock)
    b.start()
    dialog = QDialog()
    qtbot.addWidget(dialog)
    dialog.setModal(True)
    dialog.show()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is dialog, timeout=5_000)
    clock.now += IDLE_S + 1
    assert not b.poll() and not made
    dialog.close()
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None, timeout=5_000)
    clock.now += IDLE_S + 1
    assert b.poll() and made == [0]


def test_a_pointer_that_moved_postpones_and_is_looked_at_only_when_idle(qtbot):
    ps, made = pages(qtbot)
    clock = Clock()
    b = IdleBuilder(ps, clock=clock)
    b.start()
    start = QCursor.pos()
    QCursor.setPos(start + QPoint(7, 5))
    if QCursor.pos() == start:
        pytest.skip(f"the {QApplication.platformName()!r} platform does not move the pointer")
    clock.now += IDLE_S / 2
    assert not b.poll() and not made
    assert b._cursor == start  # not idle yet: the pointer is not looked at (an X round trip)
    clock.now += IDLE_S
    assert not b.poll() and not made  # idle by the clock, but the pointer moved meanwhile
    clock.now += IDLE_S / 2
    assert not b.poll()  # moving it counted as activity: the wait starts again
    clock.now += IDLE_S
    assert b.poll() and made == [0]  # still since the last look


def test_once_all_is_built_the_chores_run_once_in_each_idle_moment_after_activity(qtbot):
    ps, made = pages(qtbot, n=1)
    clock = Clock()
    ran = []
    b = IdleBuilder(ps, clock=clock, chores=[lambda: ran.append("a")])
    b.start(chores=[lambda: ran.append("b")])  # the app gives its own once warmed up
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0] and not ran  # the views first
    clock.now += IDLE_S / 2
    assert not b.poll() and not ran  # not idle long enough
    clock.now += IDLE_S
    assert b.poll() and ran == ["a", "b"] and b.active  # every chore; the timer keeps looking
    clock.now += IDLE_S + 0.1
    QCursor.setPos(QCursor.pos() + QPoint(3, 2))
    looked = b._cursor
    assert not b.poll() and ran == ["a", "b"]  # once per idle moment
    assert b._cursor == looked  # and nothing to do: the pointer is not looked at (an X round trip)
    b.touch()  # the user came back
    assert not b.poll() and ran == ["a", "b"]
    clock.now += IDLE_S + 0.1
    b._cursor = QCursor.pos()  # (the pointer, where it is now: no move since the last look)
    assert b.poll() and ran == ["a", "b", "a", "b"]


def test_the_window_builds_every_view_once_warmed_up_and_left_alone_then_parks_what_lives(
        qtbot, explorer, monkeypatch):
    """Every view and part built at idle moments, as the app has it (one build of the whole
    window for both: it is the suite's slowest kind of test), then what lives parked from the
    collector at the next idle moments."""
    import gc

    from explorer import workers
    from explorer.core import runtime

    parked = []

    def recorded(*args, **kwargs):
        parked.append(real(*args, **kwargs))
        return parked[-1]

    real = workers.settle_collector
    monkeypatch.setattr(workers, "settle_collector", recorded)
    monkeypatch.setattr(prebuild, "IDLE_S", 0.2)  # the same rule, sooner
    explorer.build_when_idle = True  # as the app has it (the fixture turns it off)
    explorer.freeze_when_warm = True  # as explorer.launch.run has it
    with qtbot.waitSignal(explorer.warmed_up, timeout=60_000):
        explorer.start(model="default")
    assert explorer.idle_builder.chores == [workers.settle_collector_between_jobs]
    assert runtime._park_survivors in gc.callbacks  # and after every full collection, from now on
    names = explorer.window.view_names()[1:]
    assert explorer.idle_builder.active or all(explorer.view_built(n) for n in names)
    before = gc.get_freeze_count()
    try:
        qtbot.waitUntil(lambda: all(explorer.view_built(n) for n in names), timeout=60_000)
        # then what the views make on demand (the lookup's backward plots, the positions' pages, the
        # charts), and only then the collector's chore
        qtbot.waitUntil(lambda: bool(parked), timeout=60_000)
        assert explorer.lookup_view.backward.plots_built
        assert explorer.similarity_view.random_page.plots_built
        assert len(explorer.projection_view.linked.charts.charts) >= 5
        positions = explorer.view("positions")
        assert positions._table_page is not None and positions._rotary is not None
        assert explorer.window.tabs.currentIndex() == 0  # built in the background: the matrix stays in front
        # a view built hidden computes nothing until shown
        assert explorer.state.projection.value is None and not explorer.state.projection.running
        assert explorer.idle_builder.active  # it keeps looking, for the next idle moment
        assert parked[0] == 0 or gc.get_freeze_count() > before
    finally:
        explorer.shutdown(wait_ms=30_000)
        assert runtime._park_survivors not in gc.callbacks  # the window's, not the process's for good
        # the window's objects back in the collector's walk: a parked cycle is never collected, and the
        # window's teardown after the test is made of cycles (pyqtgraph's menus would be left behind)
        gc.unfreeze()


def test_nothing_is_parked_from_the_collector_where_the_app_does_not_freeze(qtbot, explorer, monkeypatch):
    monkeypatch.setattr(prebuild, "IDLE_S", 0.2)
    explorer.build_when_idle = True  # freeze_when_warm stays off, as the fixture has it (tests)
    with qtbot.waitSignal(explorer.warmed_up, timeout=60_000):
        explorer.start(model="default")
    try:
        assert explorer.idle_builder.chores == []
    finally:
        explorer.idle_builder.stop()


def test_nothing_is_parked_while_a_worker_thread_runs(qtbot, monkeypatch):
    import threading

    from explorer import workers

    calls = []
    monkeypatch.setattr(workers, "settle_collector", lambda: calls.append(1) or 7)
    release = threading.Event()

    def job():
        yield 0.0, "waiting"
        release.wait(30)
        return True

    runner = workers.JobRunner()
    runner.start(job)
    qtbot.waitUntil(lambda: workers.QThreadPool.globalInstance().activeThreadCount() > 0, timeout=10_000)
    runner.cancel()  # let go of by its runner, the thread runs on to its next yield
    assert workers.settle_collector_between_jobs() == 0 and not calls
    release.set()
    assert workers.await_all_workers(30_000)
    assert workers.settle_collector_between_jobs() == 7 and calls == [1]


def test_a_preferred_view_is_built_first(qtbot):
    ps, made = pages(qtbot)
    clock = Clock()
    b = IdleBuilder(ps, clock=clock)
    b.start()
    b.prefer(ps[2])
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [2]
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [2, 0]  # then the tab order again
    b.prefer(ps[2])  # built already: nothing to prefer
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [2, 0, 1]


def test_the_tour_has_its_next_steps_view_built_while_a_step_is_read(qtbot, explorer):
    """A tour step's first build (120-290 ms in a real window) came with the click on Next."""
    from explorer.core.tour.steps import STEPS

    ex = explorer
    load(qtbot, ex, "toy:cat-sat")
    ex.build_when_idle = True
    builder = ex.idle_builder
    tabs = [name for name in ex.window.view_names() if name != "matrix"]

    def in_tab_order_next(shown):  # the view an idle moment builds without a preference
        return next(name for name in tabs if name != shown)

    # a step whose next step's view is not the one the tab order builds next
    n = next(n for n in range(1, len(STEPS)) if STEPS[n].view not in ("matrix", STEPS[n - 1].view)
             and STEPS[n].view != in_tab_order_next(STEPS[n - 1].view))
    with qtbot.waitSignal(ex.tour.step_ready, timeout=60_000):
        ex.tour.start(n)  # step number n (index n - 1) is shown; the next is STEPS[n]
    wanted = STEPS[n].view
    assert not ex.view_built(wanted)
    builder._clock = lambda: 10**9  # idle for long
    builder._pointer_moved = lambda: False
    builder._ready = lambda: True
    for _ in range(10):  # a view made in steps takes one step a look
        assert builder.poll()
        if ex.view_built(wanted):
            break
    shown = STEPS[n - 1].view
    assert ex.view_built(wanted)
    assert [name for name in tabs if ex.view_built(name)] == sorted({wanted, shown} - {"matrix"}, key=tabs.index)
    ex.tour.close()


def test_a_build_in_steps_is_stepped_one_look_at_a_time_while_the_user_stays_away(qtbot):
    """A view made in steps (the Cost and Training tabs) is made one step per look of the idle
    builder: a user who comes back meets one step, not the whole build."""
    made = []

    def make_in_steps():
        for k in range(3):
            made.append(k)
            yield
        return QLabel("the view")

    page, other = LazyPage(make_in_steps), LazyPage(lambda: QLabel("other"))
    for p in (page, other):
        qtbot.addWidget(p)
    clock = Clock()
    b = IdleBuilder([page, other], clock=clock)
    b.start()
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0] and not page.built
    assert b.poll() and made == [0, 1]  # still away: the next step at the next look
    b.touch()
    assert not b.poll() and made == [0, 1]  # the user came back
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0, 1, 2] and not page.built
    assert b.poll() and page.built and page.widget().text() == "the view" and not other.built
    clock.now += IDLE_S + 0.1
    assert b.poll() and other.built


def test_parts_are_made_one_per_look_while_the_user_stays_away_then_the_chores_run(qtbot):
    """Parts are small: the next is made at the next look (every POLL_MS) while the user stays away,
    not after another idle moment each (nine parts had put the chores off by seconds)."""
    made, chores = [], []

    class View(QLabel):
        def idle_parts(self):
            return [lambda k=k: made.append(k) for k in range(4)]

    page = LazyPage(View)
    qtbot.addWidget(page)
    clock = Clock()
    b = IdleBuilder([page], clock=clock, chores=[lambda: chores.append(clock.now)])
    b.start()
    clock.now += IDLE_S + 0.1
    assert b.poll() and page.built and made == []  # the view: then another idle moment
    clock.now += IDLE_S + 0.1
    for k in range(4):
        assert b.poll() and made == list(range(k + 1))  # the same idle moment: a part a look
    b.touch()
    assert not b.poll() and not chores  # the user came back: nothing more
    clock.now += IDLE_S + 0.1
    b.poll()
    assert chores  # every part made: the chores run at the next idle moment


def watching(qtbot, ps, window):
    """``window`` shown, and a started builder of ``ps`` watching it on its own clock: (clock, builder)."""
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    clock = Clock()
    b = IdleBuilder(ps, clock=clock, window=window)
    b.start()
    return clock, b


def test_a_key_press_or_a_click_in_the_window_is_activity_though_the_state_stays(qtbot):
    """A user working the keyboard, or clicking through pages and settings, moves no pointer and
    may change nothing the state holds; a build (or the collector's chore) came between their keys."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QLineEdit

    ps, made = pages(qtbot)
    window = QLineEdit()
    clock, b = watching(qtbot, ps, window)
    clock.now += IDLE_S + 0.1
    QTest.keyClick(window.windowHandle(), Qt.Key_A)  # through the window, as a keyboard's keys come
    assert window.text() == "a"  # the key reached the widget
    assert not b.poll() and not made  # a key just now: not idle
    clock.now += IDLE_S + 0.1
    QTest.mouseClick(window.windowHandle(), Qt.LeftButton, pos=QPoint(5, 5))
    assert not b.poll() and not made
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0]  # idle since the click


class ResizeSeen(QObject):
    """Notes the resize events a window receives."""

    seen = 0

    def eventFilter(self, _obj, event):  # noqa: N802 (Qt's name)
        self.seen += event.type() == QEvent.Resize
        return False


def test_a_resize_of_the_window_is_activity(qtbot):
    """The window manager resizes the window (its frame, its maximise button, its keys) with no press
    the app sees and, often, no pointer movement after: a build came in the middle of a run of resizes."""
    ps, made = pages(qtbot)
    window = QLabel("the window")
    window.resize(400, 300)
    clock, b = watching(qtbot, ps, window)
    clock.now += IDLE_S + 0.1
    resized = ResizeSeen()
    window.windowHandle().installEventFilter(resized)  # after the builder's: it has seen it too
    window.resize(500, 350)
    qtbot.waitUntil(lambda: resized.seen > 0)
    assert not b.poll() and not made  # resized just now: not idle
    clock.now += IDLE_S + 0.1
    assert b.poll() and made == [0]  # idle since the resize
