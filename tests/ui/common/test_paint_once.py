"""A plot is painted once when its window is resized, not a second time for what
pyqtgraph's preparation of the paint changed (the auto-range, the view's transform)."""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
import pytest
import shiboken6
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from explorer.ui.common.paint_once import PaintOnce, paint_now, prepare_shown_plots
from tests.support.ui_helpers import ticker_in_reported_turns


class CountingPlot(pg.PlotWidget):
    def __init__(self):
        super().__init__()
        self.paints = 0
        self.plot(np.sin(np.linspace(0, 20, 500)) * np.linspace(1, 30, 500))  # auto-ranged

    def paintEvent(self, event):
        self.paints += 1
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
def test_a_resized_plot_paints_once_where_paint_once_watches(qtbot, once, paints):
    top, plot = _window(qtbot, once)
    for size in ((700, 520), (420, 300)):
        plot.paints = 0
        top.resize(*size)
        qtbot.waitUntil(lambda: plot.paints >= 1)
        _turns()
        assert plot.paints == paints  # without it, pyqtgraph's way: a second paint in the next turn


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
