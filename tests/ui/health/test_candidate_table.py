"""The candidate table holds its rows in Qt's own model, made as they come into view
(explorer.ui.common.rows_in_view): what each row says, against the report, and a
repaint that calls no Python."""

from __future__ import annotations

import pytest

from explorer.core.health import Flag, health_report
from explorer.core.health.text import format_number
from explorer.core.sources import open_table
from explorer.ui.common.roles import FONT, FOREGROUND, TOOLTIP
from explorer.ui.health.candidates import CandidateTable
from tests.support.ui_helpers import python_calls_during


@pytest.fixture(scope="module")
def checked():
    table = open_table("default")
    return table, health_report(table)


@pytest.fixture
def shown(qtbot, checked):
    table, report = checked
    t = CandidateTable()
    qtbot.addWidget(t)
    t.resize(640, 300)
    t.set_report(report, table.piece)
    t.show()
    qtbot.waitExposed(t)
    return t, table, report


def _in_view(t) -> range:
    first = t.rowAt(0)
    last = t.rowAt(t.viewport().height() - 1)
    return range(first, (last if last >= 0 else t.model_.rowCount() - 1) + 1)


def _says(t, table, report, row: int) -> None:
    """Row ``row`` shows the report's ``row``-th ranked token, in every column."""
    m = t.model_
    i = int(report.ranked[row])
    assert m.token_id(row) == i
    text = {name: m.data(m.index(row, c)) for c, name in enumerate(m.columns)}
    assert text["#"] == f"{row + 1:,}" and text["id"] == f"{i:,}" and text["piece"] == table.piece(i)
    assert text["norm"] == format_number(report.norms[i]) and text["score"] == format_number(report.scores[i])
    flagged = bool(report.flags[i] & Flag.UNDER_TRAINED)
    first = m.index(row, 0)
    assert (m.data(first, FONT) is not None) == flagged and (m.data(first, FOREGROUND) is not None) == flagged
    assert (m.data(first, TOOLTIP) or "").startswith("flagged: ") == flagged


def test_the_rows_in_view_say_what_the_report_ranks_and_the_rest_wait(shown):
    t, table, report = shown
    m = t.model_
    rows = m.rowCount()
    shown_rows = _in_view(t)
    assert len(shown_rows) >= 5 and rows > 3 * len(shown_rows)
    for row in shown_rows:
        _says(t, table, report, row)
    assert m.data(m.index(rows - 1, 0)) is None  # far below the view: not made
    assert m.item(rows - 1, 0) is None


def test_rows_scrolled_to_are_made_before_they_are_painted(qtbot, shown):
    t, table, report = shown
    m = t.model_
    t.scrollToBottom()  # the scroll bar moves: the rows now in view are made at once
    bottom = _in_view(t)
    assert bottom[-1] == m.rowCount() - 1
    for row in bottom:
        _says(t, table, report, row)
    t.resize(640, 700)  # taller: more rows in view
    qtbot.waitUntil(lambda: t.viewport().height() > 600)
    for row in _in_view(t):
        _says(t, table, report, row)


def test_a_repaint_calls_no_python(qtbot, shown):
    """Qt paints the cells from its own items: a repaint of a table of some 80 cells
    calls into Python a few times at most, not for each cell and role (over 500 before)."""
    t, _, _ = shown
    assert len(_in_view(t)) * t.model_.columnCount() >= 50
    calls = python_calls_during(t.viewport().repaint)
    assert len(calls) < 20, calls[:20]
