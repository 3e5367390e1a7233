"""The Measure panel says when the machine was busy (issue 23). The busy
machine is played by clocks of the test's own, so the outcome does not depend
on this machine's load (``bench --busy`` measures a real busy machine)."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt

from explorer.core import bench
from explorer.core.sources import open_table
from explorer.ui.lookup import LookupView
from tests.support.clocks import PlayedMachine
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def setup(qtbot):
    gen = standalone_view(qtbot, LookupView)
    view, state, _runner = next(gen)
    state.set_table(open_table("random:2000x32"))
    state.set_selected_token(7)
    yield state, view
    next(gen, None)


def _measure(qtbot, state, view):
    with qtbot.waitSignal(state.measurement.finished, timeout=TIMEOUT):
        qtbot.mouseClick(view.measure_panel.measure_button, Qt.LeftButton)
    return view.measurement


@pytest.mark.parametrize("busy_calls", [None, 0])
def test_the_lesson_shown_says_whether_the_machine_was_busy(qtbot, setup, busy_calls):
    state, view = setup
    panel = view.measure_panel
    m = bench.bench_lookup(state.table, batch_sizes=(1, 64), repeats=2, clocks=PlayedMachine(busy_calls).clocks)
    panel.show_measurement(m)
    shown = panel.status.text()
    assert f"{m.batches[0].ratio:,.0f}×" in shown  # the lesson is the first batch's ratio
    if busy_calls is None:
        assert m.disturbed
        assert "busy" in shown and panel.busy_text and panel.busy_text in shown and "Measure again" in shown
    else:
        assert not m.disturbed
        assert "busy" not in shown and panel.busy_text == ""


def test_a_disturbed_measurement_says_so_and_a_quiet_one_does_not(qtbot, setup):
    state, view = setup
    panel = view.measure_panel
    m = _measure(qtbot, state, view)
    assert f"{m.batches[0].ratio:,.0f}×" in panel.status.text()
    quiet = dataclasses.replace(m, batches=tuple(dataclasses.replace(b, disturbed=False) for b in m.batches))
    panel.show_measurement(quiet)
    assert "busy" not in panel.status.text()
    disturbed = dataclasses.replace(m, batches=(dataclasses.replace(m.batches[0], disturbed=True), *m.batches[1:]))
    panel.show_measurement(disturbed)
    assert "The machine was busy" in panel.status.text() and "Measure again" in panel.status.text()
