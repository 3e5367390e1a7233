"""The token strip across a model switch, in the real window (offscreen): the old model's
chips go at once and the new ones come in the same turn, the strip keeping its shape."""

from __future__ import annotations

from tests.support.ui_helpers import layout_watch, load, settle_layout


def test_a_model_switch_shows_no_empty_state_and_moves_no_view(qtbot, explorer):
    """Its empty state ("Type some text…") was shown and hidden again inside each switch;
    showing a widget lays its parent out at once, so the window was laid out twice more and
    every plot under the strip resized and repainted (Health: 14 plot resizes per switch)."""
    ex = explorer
    load(qtbot, ex, "toy:robot")
    ex.state.set_text("robot arm tool")
    ex.window.show_view("matrix")
    settle_layout()
    strip = ex.window.token_strip
    assert strip.scroll.isVisible() and not strip.empty.isVisible()
    watch = layout_watch(strip.empty, strip.scroll, ex.window.tabs, shows=True)
    load(qtbot, ex, "toy:cat-sat")  # its example text, as many chip lines
    assert ex.state.tokens and strip.scroll.isVisible() and not strip.empty.isVisible()
    assert not watch.seen, watch.seen
    assert list(strip.chips.tokens()) == list(ex.state.tokens)
