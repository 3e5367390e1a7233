"""Heatmap axis labels (explorer.core.matrix.axis_labels): across the cells when they
fit, upwards when not, every k-th cell when not even a line fits."""

from __future__ import annotations

import doctest

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.matrix import axis_labels
from explorer.core.matrix.axis_labels import AxisLabelPlan, label_step, plan_axis_labels


def test_labels_that_fit_are_written_across():
    assert plan_axis_labels([20, 30], cell_px=40, line_px=14, gap=4) == AxisLabelPlan(False, 1, 14)


def test_labels_wider_than_their_cells_turn_upwards():
    # "chases" and "sleepy" side by side would read "chasessleepy"
    plan = plan_axis_labels([40, 42], cell_px=30, line_px=14, gap=4)
    assert plan == AxisLabelPlan(True, 1, 42)


def test_cells_thinner_than_a_line_label_every_kth():
    plan = plan_axis_labels([40] * 50, cell_px=6, line_px=14, gap=4)
    assert plan.rotated and plan.step == 3 and plan.extent == 40


def test_stacked_rows_skip_when_a_line_is_taller_than_a_row():
    assert plan_axis_labels([60] * 10, cell_px=20, line_px=14, gap=1, along=False) == AxisLabelPlan(False, 1, 60)
    assert plan_axis_labels([60] * 30, cell_px=10, line_px=14, gap=1, along=False).step == 2


def test_no_labels_take_no_room():
    assert plan_axis_labels([], cell_px=10, line_px=14) == AxisLabelPlan(False, 1, 0.0)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(1, 120), min_size=1, max_size=60), st.floats(0.5, 200), st.floats(8, 24),
       st.booleans())
def test_labels_never_overlap(widths, cell_px, line_px, along):
    gap = 4.0 if along else 1.0
    plan = plan_axis_labels(widths, cell_px, line_px, gap, along)
    pitch = plan.step * cell_px  # distance between the centres of two written labels
    if along and not plan.rotated:
        assert max(widths) + gap <= pitch
    else:
        assert line_px + gap <= pitch + 1e-9
        assert plan.step == 1 or line_px + gap > (plan.step - 1) * cell_px  # no more skipped than needed


def test_label_step_is_the_rule_of_every_stacked_axis():
    # the matrix view's band rows (gap 1) and the Positions maps' rows (gap 4) thin their labels by it
    assert doctest.testmod(axis_labels).failed == 0
    for cell, line, gap in ((20, 14, 1), (10, 14, 1), (7.5, 15, 0), (3, 16, 4), (0.5, 16, 4)):
        assert label_step(cell, line, gap) == plan_axis_labels([60], cell, line, gap, along=False).step


def test_column_ticks_are_round_and_never_past_the_table():
    from explorer.core.matrix.axis_labels import column_ticks

    assert column_ticks(576) == [0, 100, 200, 300, 400, 500]
    assert column_ticks(768) == [0, 200, 400, 600]
    assert column_ticks(64) == [0, 20, 40, 60]
    assert column_ticks(5) == [0, 1, 2, 3, 4, 5]
    assert column_ticks(0) == [0]
    for dim in range(1, 5000, 37):
        ticks = column_ticks(dim)
        assert ticks[0] == 0 and ticks[-1] <= dim and len(ticks) <= 6
