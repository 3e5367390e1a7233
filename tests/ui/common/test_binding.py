"""ShownGate and JobBinding: a hidden view does no work, catches up once
when shown, and wants a lazy computation only while on screen."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QTabWidget, QVBoxLayout, QWidget

from explorer.app import make_app
from explorer.ui.common.binding import JobBinding, ShownGate
from explorer.workers import Computation, await_all_workers
from tests.support.ui_helpers import click_then_timer


def _job(value, runs):
    runs.append(value)
    yield 0.5, f"computing {value}"
    return value


class _View(QWidget):
    def __init__(self):
        super().__init__()
        self.syncs = 0
        self.draws = []
        self.progress = QProgressBar()
        self.status = QLabel()
        self.cancel = QPushButton("Cancel")
        lay = QVBoxLayout(self)
        for w in (self.progress, self.status, self.cancel):
            lay.addWidget(w)
        self.gate = ShownGate(self, self.synchronize)

    def synchronize(self):
        self.syncs += 1

    def draw(self, what):
        self.draws.append(what)


def _tabs(qtbot):
    make_app()
    tabs = QTabWidget()
    first, view = QWidget(), _View()
    tabs.addTab(first, "first")
    tabs.addTab(view, "view")
    qtbot.addWidget(tabs)
    tabs.show()
    return tabs, view


def test_a_hidden_view_only_becomes_stale_and_catches_up_once(qtbot):
    tabs, view = _tabs(qtbot)
    assert view.syncs == 0 and not view.gate.visible
    for k in range(5):
        view.gate.update(view.draw, k)
    assert view.draws == [] and view.gate.stale
    tabs.setCurrentIndex(1)
    assert view.syncs == 1 and not view.gate.stale  # one redraw from the state, not five
    view.gate.update(view.draw, "now")
    assert view.draws == ["now"]
    tabs.setCurrentIndex(0)
    tabs.setCurrentIndex(1)
    assert view.syncs == 1  # nothing changed while hidden: no redraw


def test_a_lazy_computation_runs_only_while_its_view_is_shown(qtbot):
    tabs, view = _tabs(qtbot)
    comp = Computation(lazy=True)
    results = []
    binding = JobBinding(view.gate, comp, on_result=results.append, progress=view.progress,
                         status=view.status, cancel=view.cancel)
    runs = []
    comp.request(_job, "a", runs, key="a")
    await_all_workers()
    assert runs == [] and comp.pending
    with qtbot.waitSignal(comp.finished, timeout=5000):
        tabs.setCurrentIndex(1)
    assert runs == ["a"] and results == ["a"]
    assert view.progress.isHidden() and view.cancel.isHidden()  # only while the job runs
    tabs.setCurrentIndex(0)
    comp.request(_job, "b", runs, key="b")
    await_all_workers()
    assert runs == ["a"]
    binding.release()


def test_a_result_for_a_hidden_view_waits_for_its_synchronize(qtbot):
    tabs, view = _tabs(qtbot)
    tabs.setCurrentIndex(1)
    comp = Computation()
    results = []
    JobBinding(view.gate, comp, on_result=results.append)
    tabs.setCurrentIndex(0)
    with qtbot.waitSignal(comp.finished, timeout=5000):
        comp.request(_job, "x", [])
    assert results == [] and view.gate.stale
    syncs = view.syncs
    tabs.setCurrentIndex(1)
    assert view.syncs == syncs + 1 and comp.value == "x"


def test_redraw_draws_the_value_or_clears(qtbot):
    make_app()
    view = _View()
    qtbot.addWidget(view)
    comp = Computation(view)
    binding = JobBinding(view.gate, comp, on_reset=lambda: view.draw("cleared"), on_result=view.draw)
    binding.redraw()
    assert view.draws == ["cleared"]  # no value yet
    comp.publish("value")
    view.draws.clear()
    binding.redraw()
    assert view.draws == ["value"]
    comp.clear()
    view.draws.clear()
    binding.redraw()
    assert view.draws == ["cleared"]


def test_a_job_coming_and_going_leaves_the_layout_as_it_was(qtbot):
    """The progress bar keeps its room while hidden: shown and hidden with every job, it made
    its row and every plot under it change height (four relayouts in one switch to Positions)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication, QHBoxLayout

    from explorer.ui.common.binding import job_progress, job_status

    page = QWidget()
    qtbot.addWidget(page)
    lay = QVBoxLayout(page)
    row = QHBoxLayout()
    status, bar = job_status(), job_progress()
    row.addWidget(status, 1)
    row.addWidget(bar)
    lay.addLayout(row)
    below = QLabel("a plot")
    lay.addWidget(below, 1)
    page.resize(600, 300)
    page.show()
    qtbot.waitExposed(page)
    before = (status.geometry(), below.geometry())
    assert not bar.isVisible() and bar.sizeHint().height() > status.sizeHint().height()
    for running in (True, False):
        bar.setVisible(running)
        status.setText("Reading the model's input layer…" if running else "")
        QApplication.sendPostedEvents(None, QEvent.LayoutRequest)
        assert below.geometry() == before[1] and status.geometry().height() == before[0].height()


def test_newest_only_draws_the_newest_of_a_turns_values_once(qtbot):
    """A job's frames queued faster than they are drawn (a UMAP of 100 rows): one draw a turn."""
    from PySide6.QtCore import QObject

    from explorer.ui.common.binding import NewestOnly

    owner, drawn, running = QObject(), [], [True]
    frames = NewestOnly(drawn.append, lambda: running[0], owner)
    for k in range(300):  # what one pass over the queued signals delivers
        frames.push(k)
    assert drawn == []  # not in the pushes' turn
    qtbot.waitUntil(lambda: drawn == [299], timeout=5000)
    frames.push(300)
    frames.push(301)
    qtbot.waitUntil(lambda: drawn == [299, 301], timeout=5000)
    frames.push(302)
    running[0] = False  # the final result came in the same turn: the frame lost to it
    frames.push(303)
    frames.drop()
    frames.push(304)
    qtbot.wait(20)
    assert drawn == [299, 301]
    running[0] = True
    frames.push(305)
    frames.drop()  # a new run began: the old run's frame is forgotten
    qtbot.wait(20)
    assert drawn == [299, 301]


def test_one_a_turn_draws_one_per_turn_and_drops_or_finishes_the_rest(qtbot):
    """OneATurn: the first draw now (or next turn), each of the others in a turn of its own; a new
    run or a cancel drops those waiting; finish draws them now."""
    from PySide6.QtCore import QCoreApplication, QObject, QTimer

    from explorer.ui.common.binding import OneATurn

    owner = QObject()
    turns = OneATurn(owner)
    turn, drawn = [0], []
    ticker = QTimer(owner)
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)

    def draw(name):
        return lambda: drawn.append((name, turn[0]))

    turns.run([draw("a"), draw("b"), draw("c")])
    assert drawn == [("a", 0)] and turns.pending == 2  # the first now
    qtbot.waitUntil(lambda: turns.pending == 0, timeout=2000)
    assert [n for n, _ in drawn] == ["a", "b", "c"]
    at = [t for _, t in drawn]
    assert at[0] < at[1] < at[2]  # one a turn

    drawn.clear()
    turns.run([draw("x"), draw("y")], now=False)
    assert drawn == [] and turns.pending == 2  # none in this turn
    turns.run([draw("z")], now=False)  # a new run: x and y are dropped
    qtbot.waitUntil(lambda: turns.pending == 0, timeout=2000)
    assert [n for n, _ in drawn] == ["z"]

    drawn.clear()
    turns.run([draw("p"), draw("q"), draw("r")])
    turns.cancel()
    for _ in range(5):
        QCoreApplication.processEvents()
    qtbot.wait(10)
    assert [n for n, _ in drawn] == ["p"]

    drawn.clear()
    turns.run([draw("s"), draw("t"), draw("u")], now=False)
    turns.finish()  # whoever reads the page now
    assert [n for n, _ in drawn] == ["s", "t", "u"] and turns.pending == 0
    qtbot.wait(10)
    assert len(drawn) == 3  # the timer left running finds nothing to draw
    ticker.stop()


def test_a_draw_whose_turn_comes_in_a_long_pass_waits_behind_the_windows_timers(qtbot, monkeypatch):
    """A draw put off to the next turn during a click falls due during it, before a timer of the window
    started after it: it waits for the next pass instead of making one stall with the click (a tour
    step's view, token and words were each drawn in the pass of the click's paint)."""
    from explorer.ui.common.binding import OneATurn

    owner = QObject()  # kept: the draws' timer lives with it
    turns = OneATurn(owner)
    order = click_then_timer(qtbot, monkeypatch, lambda order: turns.run([lambda: order.append("work")], now=False))
    assert order == ["click", "tick", "work"]
