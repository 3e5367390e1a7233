"""A plot is painted once when its window is resized, not a second time for what
pyqtgraph's preparation of the paint changed (the auto-range, the view's transform)."""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
import pytest
import shiboken6
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from explorer.ui.common.paint_once import PaintOnce, paint_now, prepare_shown_plots
from tests.support.ui_helpers import ticker_in_reported_turns


class CountingPlot(pg.PlotWidget):
    def __init__(self):
        super().__init__()
        self.paints = 0
        self.ranges = []  # the view's range at each paint
        self.plot(np.sin(np.linspace(0, 20, 500)) * np.linspace(1, 30, 500))  # auto-ranged

    def paintEvent(self, event):
        self.paints += 1
        self.ranges.append(self.getViewBox().viewRange())
        super().paintEvent(event)


def _turns(n: int = 6) -> None:
    """``n`` turns of the event loop: what the last paint queued (the scene's dirty items, then
    the view's update request) is painted by then, on any machine, with no wait on the clock."""
    for _ in range(n):
        QApplication.processEvents()


def _window(qtbot, once: bool):
    top = QWidget()
    qtbot.addWidget(top)
    plot = CountingPlot()
    QVBoxLayout(top).addWidget(plot)
    if once:
        PaintOnce(top)
    top.resize(500, 400)
    top.show()
    qtbot.waitExposed(top)
    qtbot.waitUntil(lambda: plot.paints > 0)
    _turns()
    return top, plot


@pytest.mark.parametrize("once, paints", [(True, 1), (False, 2)])
def test_a_resized_plot_paints_once_where_paint_once_watches(qtbot, monkeypatch, once, paints):
    from explorer.ui.common import paint_once

    # a long pass, on any machine: the plot waits for the next, prepared there (waiting is tested below)
    monkeypatch.setattr(paint_once._PLOT_PASSES, "pass_is_long", lambda: True)
    top, plot = _window(qtbot, once)
    for size in ((700, 520), (420, 300)):
        plot.paints = 0
        top.resize(*size)
        qtbot.waitUntil(lambda: plot.paints >= 1)
        _turns()
        assert plot.paints == paints  # without it, pyqtgraph's way: a second paint in the next turn


class _PlatformPaints(QObject):
    """Counts the paint and expose events the window system sends a platform window."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
        if event.type() in (QEvent.Paint, QEvent.Expose):
            self.count += 1
        return False


@pytest.mark.parametrize("made_again", [False, True])
def test_a_resize_the_window_system_paints_at_once_paints_the_plot_once_prepared(qtbot, monkeypatch, made_again):
    """The window's own paint of a resize waits for the next pass when the pass is long; the window
    system asks for its paint meanwhile (a paint of the platform window), and Qt paints every widget
    there at once. The plot is prepared for that paint too: painted once, in its new range. Also after
    the platform window is made again (as Qt does for the first OpenGL view of a window)."""
    from explorer import pacing
    from explorer.ui.common import paint_once

    top, plot = _window(qtbot, True)
    if made_again:
        first = top.windowHandle()
        top.destroy()
        top.create()
        top.show()
        qtbot.waitExposed(top)
        assert top.windowHandle() is not first
        _turns()
    monkeypatch.setattr(pacing.PACER, "pass_is_long", lambda: True)  # the window's paint waits
    monkeypatch.setattr(paint_once._PLOT_PASSES, "pass_is_long", lambda: False)  # the plot does not
    platform = _PlatformPaints()
    top.windowHandle().installEventFilter(platform)
    for size in ((700, 520), (420, 300), (900, 640)):
        plot.paints, platform.count, plot.ranges = 0, 0, []
        top.resize(*size)
        qtbot.waitUntil(lambda: plot.paints >= 1)
        _turns()
        assert platform.count >= 1  # the window system's paint came, as it does on every platform here
        assert plot.paints == 1  # unprepared, it was painted there and again in the next turn
        assert plot.ranges[0] == plot.getViewBox().viewRange()  # painted in its final range
    top.windowHandle().removeEventFilter(platform)


def test_only_shown_plots_of_the_window_are_prepared_and_gone_scenes_are_dropped(qtbot):
    top, plot = _window(qtbot, True)
    other, _ = _window(qtbot, False)
    assert prepare_shown_plots(top) == 1  # not the other window's plot
    plot.hide()
    assert prepare_shown_plots(top) == 0
    plot.show()
    scene = plot.scene()
    plot.setParent(None)
    shiboken6.delete(plot)
    assert not shiboken6.isValid(scene)
    assert prepare_shown_plots(top) == 0


def test_a_synchronous_repaint_paints_the_new_data_and_later_updates_still_paint(qtbot):
    top, plot = _window(qtbot, True)
    curve = plot.getPlotItem().listDataItems()[0]
    curve.setData(np.arange(50.0) * 1000)  # a new range: the preparation moves the view and its axes
    plot.paints = 0
    with paint_now():  # painted before it returns, whatever painted earlier in this pass
        top.repaint()
    assert plot.paints >= 1
    assert plot.getViewBox().viewRange()[1][1] >= 49_000  # auto-ranged to the new data before it painted
    _turns()
    plot.paints = 0
    plot.viewport().update()
    qtbot.waitUntil(lambda: plot.paints >= 1)


@pytest.mark.parametrize("long", ["click", "paint"])
def test_a_paint_requested_in_a_long_pass_waits_behind_the_windows_timers(qtbot, monkeypatch, long):
    """A paint of the window requested in a pass already long waits for the next pass, after a timer
    of the window that fell due meanwhile: a click (30 ms) and its paint are not one stall, nor is a
    paint (30 ms) and a second one for what it dirtied (as a label that grows, or a plot whose items
    moved after it painted). Everything is painted."""
    from PySide6.QtCore import QTimer

    order = []
    ticker = ticker_in_reported_turns(monkeypatch, order)

    def long_work():
        ticker.start(1)  # due during the work
        time.sleep(0.03)

    class Part(QWidget):
        def __init__(self, name, then=None):
            super().__init__()
            self.name, self.then, self.armed = name, then, False

        def paintEvent(self, event):
            if self.armed:
                self.armed = False
                order.append(self.name)
                if self.then is not None:
                    self.then.armed = True
                    self.then.update()  # dirtied by this paint
                    if long == "paint":
                        long_work()

    top = QWidget()
    qtbot.addWidget(top)
    second = Part("second paint")
    first = Part("first paint", then=second)
    lay = QVBoxLayout(top)
    lay.addWidget(first)
    lay.addWidget(second)
    PaintOnce(top)
    top.resize(300, 200)
    top.show()
    qtbot.waitExposed(top)
    qtbot.wait(50)

    def click():
        first.armed = True
        first.update()
        if long == "click":
            long_work()

    QTimer.singleShot(20, click)
    qtbot.waitUntil(lambda: "second paint" in order and "tick" in order, timeout=5000)
    if long == "click":  # the click's paint after the tick, and what it dirtied in the same pass
        assert order == ["tick", "first paint", "second paint"]
    else:
        assert order == ["first paint", "tick", "second paint"]


class SlowPlot(CountingPlot):
    """A plot whose next paint (once armed) takes 50 ms, longer than a pass's plot budget, and says when."""

    def __init__(self, name, order):
        super().__init__()
        self.name, self.order, self.armed = name, order, False

    def paintEvent(self, event):
        if self.armed:
            self.armed = False
            self.order.append(self.name)
            if self.name == "first plot":
                time.sleep(0.05)
        super().paintEvent(event)


def _two_plots(qtbot, order):
    top = QWidget()
    qtbot.addWidget(top)
    first, second = SlowPlot("first plot", order), SlowPlot("second plot", order)
    lay = QVBoxLayout(top)
    lay.addWidget(first)
    lay.addWidget(second)
    once = PaintOnce(top)
    top.resize(400, 500)
    top.show()
    qtbot.waitExposed(top)
    qtbot.waitUntil(lambda: first.paints > 0 and second.paints > 0)
    # settled: a window paint the first show put off (a slow machine's first paints) is done, so that
    # no paint of the show is still due when a test begins
    qtbot.waitUntil(lambda: not once._later.isActive(), timeout=5000)
    _turns()
    return top, first, second, once


def test_a_plot_the_windows_paint_reaches_late_in_a_long_pass_waits_behind_the_windows_timers(qtbot, monkeypatch):
    """A window paint whose first plot took 50 ms paints the second in the next pass, after a timer of the
    window that fell due meanwhile: the second plot is painted, and the put-off is counted."""
    from PySide6.QtCore import QTimer

    from explorer.core import runtime

    order = []
    top, first, second, once = _two_plots(qtbot, order)  # shown as the app would (rests count), then:
    waited = once.plots.put_off
    ticker = ticker_in_reported_turns(monkeypatch, order)
    # the loop's 20 ms of sleep before the change is a rest: the change and its paint begin a pass
    monkeypatch.setattr(runtime, "REST_S", 0.001)
    # the pass is long once the first plot has painted (its 50 ms), not before, on any machine
    from explorer.ui.common import paint_once
    monkeypatch.setattr(paint_once._PLOT_PASSES, "pass_is_long", lambda: "first plot" in order)

    def change():
        first.armed = second.armed = True
        first.viewport().update()
        second.viewport().update()
        ticker.start(20)  # due during the first plot's paint

    QTimer.singleShot(20, change)
    qtbot.waitUntil(lambda: "second plot" in order and "tick" in order, timeout=5000)
    assert order == ["first plot", "tick", "second plot"]  # without: first plot, second plot, tick
    assert once.plots.put_off - waited == 1


def test_each_paint_of_the_window_paints_one_plot_that_waited_and_a_grab_paints_every_plot(qtbot, monkeypatch):
    """In a window whose every pass is long (no rest counts), both plots wait, then each paint of the
    window paints one of them and the other waits again: they are painted in two paints, never both in
    one pass. A grab of the window into an image (not a paint on screen) paints every plot however long
    the pass."""
    order = []
    top, first, second, once = _two_plots(qtbot, order)  # shown as the app would (rests count), then:
    ticker_in_reported_turns(monkeypatch, order)  # no rest of the loop under 250 ms counts
    from explorer.ui.common import paint_once
    monkeypatch.setattr(paint_once._PLOT_PASSES, "pass_is_long", lambda: True)  # every pass long, on any machine
    waited = once.plots.put_off
    painted_in = {}
    for plot in (first, second):
        plot.scene().sigPrepareForPaint.connect(lambda p=plot: painted_in.__setitem__(p.name, once.plots.paints))
    first.armed = second.armed = True
    first.viewport().update()
    second.viewport().update()
    qtbot.waitUntil(lambda: "first plot" in order and "second plot" in order, timeout=5000)
    assert set(order) == {"first plot", "second plot"}  # and the window had no other work: no tick asked
    # each once in the paint where both waited, then the second again (without: both in one paint)
    assert once.plots.put_off - waited == 3
    assert painted_in["second plot"] == painted_in["first plot"] + 1  # the last preparation: its paint's
    order.clear()
    first.armed = second.armed = True
    top.grab()
    assert order == ["first plot", "second plot"]
    assert once.plots.put_off - waited == 3


def test_a_plot_waits_at_most_plot_waits_passes_in_a_row(qtbot, monkeypatch):
    """However many plots wait, each paint of the window paints one of them at least, and none waits more
    than PLOT_WAITS paints in a row: with two plots more than that, the last three are painted together,
    in the paint after their third wait."""
    from explorer.ui.common import paint_once

    order = []
    ticker_in_reported_turns(monkeypatch, order)
    top = QWidget()
    qtbot.addWidget(top)
    plots = [SlowPlot(f"plot {k}", order) for k in range(paint_once.PLOT_WAITS + 2)]
    lay = QVBoxLayout(top)
    for plot in plots:
        plot.name = plot.name.replace("first plot", "")  # none sleeps: every pass is long anyway
        lay.addWidget(plot)
    once = PaintOnce(top)
    top.resize(400, 900)
    top.show()
    qtbot.waitExposed(top)
    qtbot.waitUntil(lambda: all(p.paints for p in plots) and not once.plots.waiting)  # the show's waits over
    _turns()
    painted_in = {}
    for plot in plots:
        plot.scene().sigPrepareForPaint.connect(lambda p=plot: painted_in.__setitem__(p.name, once.plots.paints))
        plot.armed = True
        plot.viewport().update()
    qtbot.waitUntil(lambda: len(order) == len(plots), timeout=5000)
    paints = [painted_in[p.name] for p in plots]
    start = paints[0]  # the paint after the one where every plot waited
    last = start + paint_once.PLOT_WAITS - 1
    assert paints == [start + k for k in range(paint_once.PLOT_WAITS)] + [last] * 2  # without: all in one


def test_a_plot_that_waits_is_prepared_in_the_pass_that_paints_it_not_before(qtbot, monkeypatch):
    """A plot whose paint waits for the next pass is not prepared in the pass it waits in (pyqtgraph's
    preparation, its auto-range and transform, is work for a paint not made): every preparation of the
    two plots, in a window whose every pass is long, comes after both were put off."""
    order = []
    top, first, second, once = _two_plots(qtbot, order)  # shown as the app would (rests count), then:
    ticker_in_reported_turns(monkeypatch, order)  # no rest of the loop under 250 ms counts
    from explorer.ui.common import paint_once
    monkeypatch.setattr(paint_once._PLOT_PASSES, "pass_is_long", lambda: True)  # every pass long, on any machine
    waited = once.plots.put_off
    prepared = []
    for plot in (first, second):
        plot.scene().sigPrepareForPaint.connect(lambda p=plot: prepared.append((p.name, once.plots.put_off)))
    first.armed = second.armed = True
    first.viewport().update()
    second.viewport().update()
    qtbot.waitUntil(lambda: "first plot" in order and "second plot" in order, timeout=5000)
    assert once.plots.put_off - waited == 3  # both, then the second again
    assert {name for name, _ in prepared} == {"first plot", "second plot"}  # each prepared before it painted
    assert all(put_off >= waited + 2 for _, put_off in prepared)  # without: prepared in the pass it waited too
