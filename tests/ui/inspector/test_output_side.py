"""The inspector's output side: the selected token's output row and its
direct path, on the bundled (untied) model, SmolLM2 (tied) and MiniLM (none)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.ui.inspector.view import RowInspector
from tests.support.ui_helpers import layout_watch, settle_layout, standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, RowInspector, size=(420, 900))


def _select(qtbot, state, spec, word):
    table = open_table(spec)
    state.set_table(table)
    tid = table.tokenizer.id_of(word)
    state.set_selected_token(tid)
    qtbot.waitUntil(lambda: state.ends.direct_path.value is not None, timeout=TIMEOUT)
    return table, tid


def test_untied_model_shows_its_own_output_row_and_direct_predictions(qtbot, view):
    v, state, _ = view
    table, tid = _select(qtbot, state, "default", "king")
    w = table.output_table().matrix().astype(np.float64)
    e = table.row(tid).astype(np.float64)
    logits = w @ e
    side = v.output_side
    assert side.heading.text().startswith("Output side · not tied")
    cos = e @ w[tid] / (np.linalg.norm(e) * np.linalg.norm(w[tid]))
    assert f"cos(E[i], W_out[i]) = {cos:+.3f}" in side.rows_line.text()
    assert side.shown_ids == np.argsort(-logits, kind="stable")[: len(side.shown_ids)].tolist()
    rank = int((logits > logits[tid]).sum())
    assert state.ends.direct_path.value.self_rank == rank and "Not tied" in side.lesson.text()
    # a predicted token is a link: the inspector says which token the user clicked
    clicked = []
    v.neighbor_clicked.connect(clicked.append)
    side.predicts.linkActivated.emit(str(side.shown_ids[1]))
    assert clicked == [side.shown_ids[1]]


def test_tied_model_says_the_same_row(qtbot, view):
    v, state, _ = view
    table, tid = _select(qtbot, state, "smollm2", "Hello")
    assert v.output_side.heading.text().startswith("Output side · tied: the same row")
    r = state.ends.direct_path.value
    assert r.tied and r.cosine == pytest.approx(1.0)
    np.testing.assert_array_equal(r.output_row, table.row(tid))


def test_an_encoder_has_no_output_side(qtbot, view):
    v, state, _ = view
    table = open_table("minilm")
    state.set_table(table)
    state.set_selected_token(table.tokenizer.id_of("hello"))
    assert state.ends.direct_path.value is None
    heading = v.output_side.heading.text()
    assert heading == "Output side · no output layer: the model has no language-model head (an encoder)"
    assert not v.output_side.predicts.isVisible() and not v.output_side.lesson.isVisible()


def test_a_new_token_keeps_the_panel_in_place_while_its_direct_path_runs(qtbot, view):
    """SmolLM2's direct path runs in a worker: the panel keeps the last token's room until the
    next one comes, instead of shrinking to its heading and growing back (every click made
    the inspector beside every view lay out and repaint twice)."""
    v, state, _ = view
    table, _ = _select(qtbot, state, "smollm2", "Hello")
    side = v.output_side
    settle_layout()
    before = side.height()
    heights = layout_watch(side)
    state.set_selected_token(table.tokenizer.id_of("world"))
    assert state.ends.direct_path.running  # not inline: the value comes in a later turn
    settle_layout()
    assert side.height() == before and side.predicts.isVisible() and side.lesson.isVisible()
    qtbot.waitUntil(lambda: state.ends.direct_path.value is not None, timeout=TIMEOUT)
    settle_layout()
    assert len(heights.seen) <= 1, heights.seen  # at most once, to the new token's own lines
    assert side.predicts.text().startswith("Predicts directly: ") and not side.predicts.held


def test_a_model_without_output_gives_the_room_back(qtbot, view):
    """When no value is coming (MiniLM has no output layer), the held lines go in the next turn."""
    v, state, _ = view
    _select(qtbot, state, "default", "king")
    side = v.output_side
    settle_layout()
    two_lines = side.height()
    table = open_table("minilm")
    state.set_table(table)
    state.set_selected_token(table.tokenizer.id_of("hello"))
    qtbot.waitUntil(lambda: not side.predicts.isVisible() and not side.lesson.isVisible())
    settle_layout()
    assert not (side.predicts.held or side.lesson.held or side.heading.held)
    assert side.heading.text().startswith("Output side · no output layer")
    assert side.height() < two_lines
