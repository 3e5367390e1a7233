"""Every view fits a 1024 x 700 window: no view forces the window bigger
(its panels scroll or stack instead). MiniLM's cost card at 1024 px used to
crash the app here: its reflowing tile grid and the tab's scroll area resized
each other until the stack overflowed."""

from __future__ import annotations

import pytest

from ui_helpers import load

PAGES = ["matrix", "lookup", "projection", "similarity", "similarity:random", "training", "cost",
         "cost:famous", "cost:why", "cost:context", "health"]


@pytest.mark.parametrize("spec", ["default", "minilm"])
def test_every_view_fits_1024x700(qtbot, explorer, spec):
    win = explorer.window
    win.resize(1024, 700)
    win.show()
    qtbot.waitExposed(win)
    load(qtbot, explorer, spec)
    explorer.state.set_text("the river bank was flooded " * 20)
    explorer.state.select_position(2)
    for page in PAGES:
        assert win.show_view(page), page
        win.resize(1024, 700)
        qtbot.wait(1)
        hint = win.minimumSizeHint()
        assert hint.width() <= 1024 and hint.height() <= 700, (page, hint)
        assert (win.width(), win.height()) == (1024, 700), page
        # every tab page fits or scrolls: nothing is laid out past the window's edge
        tab = win.tabs.currentWidget()
        assert tab.mapTo(win, tab.rect().bottomRight()).y() < 700, page

