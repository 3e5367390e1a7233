"""The Measure panel on a busy machine: the lesson it shows stays within 2x of
the quiet one, or the panel says the machine was busy (issue 23)."""

from __future__ import annotations

import dataclasses
import statistics

import pytest
from PySide6.QtCore import Qt

from explorer.core.sources import open_table
from explorer.ui.lookup import LookupView
from tests.support.busy import busy_cores
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def setup(qtbot):
    gen = standalone_view(qtbot, LookupView)
    view, state, _runner = next(gen)
    state.set_table(open_table("random:20000x128"))
    state.set_selected_token(7)
    yield state, view
    next(gen, None)


def _measure(qtbot, state, view):
    with qtbot.waitSignal(state.measurement.finished, timeout=TIMEOUT):
        qtbot.mouseClick(view.measure_panel.measure_button, Qt.LeftButton)
    return view.measurement


def test_the_lesson_shown_holds_on_a_busy_machine_or_says_it_was_busy(qtbot, setup):
    state, view = setup
    panel = view.measure_panel
    quiet = statistics.median(_measure(qtbot, state, view).batches[0].ratio for _ in range(3))
    with busy_cores():
        busy = _measure(qtbot, state, view)
    shown = panel.status.text()
    assert f"{busy.batches[0].ratio:,.0f}×" in shown  # the lesson is the first batch's ratio
    if busy.disturbed:
        assert "busy" in shown and panel.busy_text and panel.busy_text in shown
    else:
        assert quiet / 2 <= busy.batches[0].ratio <= quiet * 2
        assert "busy" not in shown and panel.busy_text == ""


def test_a_disturbed_measurement_says_so_and_a_quiet_one_does_not(qtbot, setup):
    state, view = setup
    panel = view.measure_panel
    m = _measure(qtbot, state, view)
    quiet = dataclasses.replace(m, batches=tuple(dataclasses.replace(b, disturbed=False) for b in m.batches))
    panel.show_measurement(quiet)
    assert "busy" not in panel.status.text()
    disturbed = dataclasses.replace(m, batches=(dataclasses.replace(m.batches[0], disturbed=True), *m.batches[1:]))
    panel.show_measurement(disturbed)
    assert "The machine was busy" in panel.status.text() and "Measure again" in panel.status.text()
