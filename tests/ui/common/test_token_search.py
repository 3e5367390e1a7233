"""The token search box shared by the Projection and Similarity views."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent
from PySide6.QtWidgets import QApplication

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.state.app_state import AppState
from explorer.ui.common.token_search import TokenSearch
from explorer.workers import await_all_workers


def _box(qtbot, table=None):
    make_app()
    state = AppState()
    if table is not None:
        state.set_table(table)
    box = TokenSearch(state)
    qtbot.addWidget(box)
    return box, state


def _focus(box) -> None:
    QApplication.sendEvent(box, QFocusEvent(QEvent.FocusIn, Qt.OtherFocusReason))


def test_enter_finds_the_token_or_says_nothing_matched(qtbot):
    table = open_table("default")
    box, _state = _box(qtbot, table)
    box.setText("dog")
    with qtbot.waitSignal(box.token_found) as found:
        box.returnPressed.emit()
    assert found.args == [table.tokenizer.id_of("dog")] and box.text() == ""
    box.setText("zzqx<b>")
    with qtbot.waitSignal(box.not_found) as missing:
        box.returnPressed.emit()
    assert missing.args == ["No token “zzqx&lt;b&gt;” in this vocabulary"] and box.text() == "zzqx<b>"


def test_no_table_or_blank_query_does_nothing(qtbot):
    box, state = _box(qtbot)
    with qtbot.assertNotEmitted(box.token_found), qtbot.assertNotEmitted(box.not_found):
        box.setText("dog")
        box.returnPressed.emit()
        box.setText("   ")
        box.returnPressed.emit()
    _focus(box)  # no model: nothing to list
    assert box.offered == [] and not state.completions.running


def test_the_pieces_offered_are_listed_in_a_worker_when_a_box_is_first_used(qtbot):
    """Listing a vocabulary's pieces is a second of Python for SmolLM2: it ran in the model's
    load, beside the window's first paints. Now a box asks for it at its first focus."""
    table = open_table("default")
    box, state = _box(qtbot, table)
    other = TokenSearch(state)
    qtbot.addWidget(other)
    try:
        assert box.offered == [] and state.completions.value is None and not state.completions.running
        with qtbot.waitSignal(state.jobs.completions.finished, timeout=30_000):
            _focus(box)
            assert box.offered == [] and state.completions.running  # asked of a worker, not listed here
        want = sorted({table.shown_piece(i).text for i in range(table.trained_rows)})
        assert box.offered == want
        assert "␣dog" in want or "dog" in want
        # a second box of the same state takes the list as it is, without listing again
        with qtbot.assertNotEmitted(state.jobs.completions.started):
            _focus(other)
        assert other.offered == want
        # another model: nothing offered from the old one; the next focus lists the new one
        robot = open_table("toy:robot")
        state.set_table(robot)
        assert box.offered == [] and other.offered == []
        with qtbot.waitSignal(state.jobs.completions.finished, timeout=30_000):
            _focus(box)
        assert box.offered == sorted({robot.shown_piece(i).text for i in range(robot.trained_rows)})
    finally:
        await_all_workers()
