"""Switching models frees the old one, whichever views showed it.

A hidden view waits to redraw until it is shown again, but it must not keep
the old model meanwhile: the health view's piece names, the projection's
search box and the positions view's inputs each held the whole old table
(and its derived arrays: 316 MB of RSS kept after random:50257x768, back
on the default model, in a real window) until their tab was next shown."""

from __future__ import annotations

import gc
import weakref

from tests.support.ui_helpers import LOAD_TIMEOUT, load


def _holders(obj) -> list[str]:
    return sorted({type(r).__name__ for r in gc.get_referrers(obj)})


def test_the_old_model_is_freed_after_every_view_showed_it(qtbot, explorer):
    load(qtbot, explorer, "random:3000x32")
    explorer.state.set_text("1 2 3 42 2999")
    win = explorer.window
    for name in win.view_names():
        win.show_view(name)
        qtbot.waitUntil(lambda: not explorer.busy(), timeout=LOAD_TIMEOUT)
    win.show_view("matrix")
    old = weakref.ref(explorer.state.table)
    load(qtbot, explorer, "default")
    gc.collect()
    table = old()
    assert table is None, f"the old table is still held by {_holders(table)}"
