"""Bookmarks in the window (issue 25, item 21): save a view, come back to it after
moving elsewhere, and hand it to another explorer as a JSON file."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from explorer.app import Explorer, make_app
from tests.support.ui_helpers import load

TIMEOUT = 60_000


def test_a_view_is_saved_restored_and_handed_on(qtbot, explorer, tmp_path):
    ex = explorer
    load(qtbot, ex, "toy:robot")
    ex.state.set_text("box tool robot")
    ex.state.select_position(1)
    ex.window.show_view("cost")
    ex.view("cost").show_page("why")
    mark = ex.bookmarks.capture("robot, why vectors")
    assert (mark.model, mark.text, mark.position, mark.view) == ("toy:robot", "box tool robot", 1, "cost:why")
    assert "robot, why vectors" in [a.text() for a in ex.bookmarks.menu.actions()]
    # elsewhere: another model, text, tab and page
    load(qtbot, ex, "default")
    ex.state.set_text("the cat sat")
    ex.view("cost").show_page("card")
    ex.window.show_view("lookup")
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT):
        ex.bookmarks.restore(mark)
    qtbot.waitUntil(lambda: ex.state.selected_position == 1, timeout=TIMEOUT)
    w = ex.window
    assert ex.state.table.spec == "toy:robot" and ex.state.text == "box tool robot"
    assert w.tabs.tabText(w.tabs.currentIndex()) == "Cost" and ex.view("cost").current_page() == "why"
    # handed on: exported, imported into an explorer with settings of its own
    path = tmp_path / "lesson.json"
    ex.bookmarks.export_to(str(path))
    make_app()
    other = Explorer(settings=QSettings(str(tmp_path / "other.ini"), QSettings.IniFormat))
    qtbot.addWidget(other.window)
    try:
        assert other.bookmarks.bookmarks == []
        assert other.bookmarks.import_from(str(path)) == 1 and other.bookmarks.bookmarks == [mark]
        again = Explorer(settings=QSettings(str(tmp_path / "other.ini"), QSettings.IniFormat))  # kept
        qtbot.addWidget(again.window)
        assert again.bookmarks.bookmarks == [mark]
        again.shutdown()
    finally:
        other.shutdown()


def test_a_bookmark_to_a_view_never_shown_builds_it_a_step_a_turn_then_shows_its_page(qtbot, explorer):
    """Built whole in the turn of the click, the Lookup stalled a real window 146-189 ms; as the
    tour does, the view is built a step a turn first, then brought up on the bookmark's page."""
    from explorer.core.bookmarks import Bookmark

    ex = explorer
    load(qtbot, ex, "toy:robot")
    assert not ex.view_built("lookup")
    mark = Bookmark("backward", "toy:robot", ex.state.text, 0, "lookup:backward")
    ex.bookmarks.restore(mark)
    assert not ex.view_built("lookup")  # a step, not the whole view, in this turn
    w = ex.window
    qtbot.waitUntil(lambda: ex.view_built("lookup") and w.tabs.tabText(w.tabs.currentIndex()) == "Lookup",
                    timeout=TIMEOUT)
    assert ex.view("lookup").current_page() == "backward"
