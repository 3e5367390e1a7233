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


def test_the_first_tokens_after_none_and_none_after_tokens_lay_the_strip_out_once(qtbot, explorer):
    """From no tokens (an empty text box) to tokens and back: the chips, the summary and the
    empty state come and go in one step. They came in three (84 -> 140 -> 146 -> 98 px on
    SmolLM2's first open): the chips' scroll area was shown at its default height before
    its height was fitted, and the summary was shown after it, each show laying the strip
    out at once and resizing every view under it."""
    ex = explorer
    load(qtbot, ex, "toy:robot")
    ex.window.show_view("matrix")
    strip = ex.window.token_strip

    def type_text(text):
        before = strip.height()
        watch = layout_watch(strip, ex.window.tabs)
        ex.state.set_text(text)
        qtbot.waitUntil(lambda: bool(ex.state.tokens) == bool(text) and not ex.state.tokenizing)
        settle_layout()
        steps = [s for s in watch.seen if s[0] == "TokenStrip"]
        assert len(steps) <= 1 and len(watch.seen) - len(steps) <= 1, watch.seen
        assert strip.height() == (steps[-1][2] if steps else before)
        return steps

    type_text("")
    assert strip.empty.isVisible() and not strip.scroll.isVisible()
    assert not strip.summary.text() and strip.summary.height() == 0
    assert type_text("robot arm tool robot"), "the strip holds chips and a summary now: it grew"
    assert strip.scroll.isVisible() and not strip.empty.isVisible()
    assert "4 tokens" in strip.summary.text() and strip.summary.height() > 0
    assert type_text(""), "the empty state is smaller than a line of chips and a summary"
    assert strip.empty.isVisible() and not strip.scroll.isVisible() and strip.summary.height() == 0
