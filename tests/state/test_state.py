"""AppState without a window: tokens, selection and the derived results it
publishes, on real tables (the bundled model, toys, MiniLM, random)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.matrix.overview import matrix_overview
from explorer.core.sources import open_table
from explorer.core.sources.loading import LoadedModel, load_model
from explorer.core.tokens.text import INLINE_CHARS, tokenize_text
from explorer.core.tokens.tokenize import MAX_TEXT_CHARS
from explorer.state.app_state import N_NEIGHBORS, AppState
from explorer.workers import await_all_workers
from tests.support.ui_helpers import assert_nearest


def run(gen):
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


@pytest.fixture
def state(qtbot):
    s = AppState()
    yield s
    for comp in s.findChildren(type(s.neighbors)):
        comp.clear()
    await_all_workers()


def test_short_text_is_tokenized_on_the_spot(state):
    table = open_table("default")
    state.set_table(table)
    state.set_text("the cat")
    assert [t.id for t in state.tokens] == [t.id for t in table.tokenizer.encode("the cat")]
    assert not state.tokenizing


def test_long_text_is_tokenized_in_a_worker_and_the_last_text_wins(qtbot, state):
    table = open_table("minilm")
    state.set_table(table)
    first = "the river bank " * 400
    second = "a quiet harbour " * 5_000  # longer than the limit: cut there
    assert len(first) > INLINE_CHARS
    seen = []
    state.tokens_changed.connect(lambda tok: seen.append(tok.text))
    state.set_text(first)
    assert state.tokenizing  # set_text returned before the tokenizer ran
    state.set_text(second)
    qtbot.waitUntil(lambda: state.tokenized.text == second and not state.tokenizing, timeout=30_000)
    await_all_workers()
    assert first not in seen  # the older text's tokens never landed
    want = table.tokenizer.encode(second[:MAX_TEXT_CHARS])
    assert [t.id for t in state.tokens] == [t.id for t in want]
    assert state.tokenized.truncated


def test_model_switch_installs_table_and_tokens_together(qtbot, state):
    state.set_table(open_table("default"))
    state.set_text("the cat sat")
    robot = open_table("toy:robot")
    loaded = run(load_model("toy:robot", "the cat sat"))
    order = []
    state.model_changed.connect(lambda t: order.append(("model", t.spec, list(state.tokens))))
    state.tokens_changed.connect(lambda tok: order.append(("tokens", state.table.spec, [t.id for t in tok.tokens])))
    state.set_model(loaded)
    # no view ever saw the old tokens next to the new table
    assert order[0] == ("model", "toy:robot", [])
    assert order[1][0] == "tokens" and order[1][1] == "toy:robot"
    # English means nothing to the robot table: its example text replaced it
    assert state.text == robot.example_text
    assert order[1][2] == [t.id for t in robot.tokenizer.encode(robot.example_text)]


def test_each_kind_of_tokenizer_gets_its_own_text_back(state):
    texts = {"ids": "1 2 3", "text": "the dog"}
    loaded = run(load_model("random:100x8", "the cat", texts))
    assert loaded.tokenized.text == "1 2 3"
    loaded = run(load_model("default", "1 2 3", texts))
    assert loaded.tokenized.text == "the dog"


def test_neighbours_of_a_small_table_are_published_at_once(state):
    table = open_table("default")
    state.set_table(table)
    state.set_text("the cat")
    tid = state.selected_id
    result = state.neighbors.value
    assert result is not None and result.token_id == tid
    assert len(result.ids()) == N_NEIGHBORS
    assert_nearest(table.matrix(), tid, result.ids())


def test_neighbours_of_a_big_table_come_from_a_worker_for_the_newest_selection(qtbot, state):
    table = open_table("random:50257x768")
    state.set_table(table)
    state.set_text("42 7 999")
    landed = []
    state.neighbors.finished.connect(lambda r: landed.append(r.token_id))
    for position in (0, 1, 2):  # three clicks faster than one search
        state.select_position(position)
    qtbot.waitUntil(lambda: state.neighbors.value is not None, timeout=30_000)
    await_all_workers()
    assert landed == [999]  # the two older searches never landed
    assert_nearest(table.matrix(), 999, state.neighbors.value.ids())


def test_a_selection_computes_its_neighbours_once(state):
    state.set_table(open_table("default"))
    state.set_text("the cat sat")
    results = []
    state.neighbors.finished.connect(results.append)
    state.select_position(1)
    state.select_position(1)  # the same token again: nothing new
    assert len(results) == 1


def test_a_model_switch_drops_every_derived_result(qtbot, state):
    state.set_table(open_table("default"))
    state.set_text("the cat")
    assert state.neighbors.value is not None
    state.set_table(open_table("toy:robot"))
    assert state.neighbors.value is None or state.neighbors.value.token_id == state.selected_id
    assert state.overview is not None and state.overview.image.shape[0] == 4
    np.testing.assert_array_equal(state.overview.image, matrix_overview(state.table).image)


def test_out_of_range_ids_select_nothing(state):
    state.set_table(open_table("random:100x8"))
    state.set_text("5 300")
    state.select_position(1)
    assert state.selected_id == -1 and state.selected_position == 1
    assert state.neighbors.value is None
    assert state.tokenized.rows_read == 1  # 300 names no row


def test_loaded_model_tokens_match_tokenize_text():
    loaded: LoadedModel = run(load_model("minilm", "The river bank"))
    want = tokenize_text(loaded.table.tokenizer, "The river bank", loaded.table.vocab_size)
    assert [t.id for t in loaded.tokenized.tokens] == [t.id for t in want.tokens]
    assert loaded.overview.image.shape[1] == loaded.table.dim


def _want_all(state):
    consumer = object()
    for comp in (state.interest, state.projection, state.lookup_check, state.random_check):
        comp.want(consumer)
    return consumer


def test_lazy_results_wait_for_a_view_then_follow_the_inputs(qtbot, state):
    table = open_table("default")
    state.set_table(table)
    state.set_text("the cat sat")
    assert state.interest.pending and state.lookup_check.pending and state.random_check.pending
    _want_all(state)
    qtbot.waitUntil(lambda: state.interest.value is not None and state.lookup_check.value is not None
                    and state.random_check.value is not None, timeout=30_000)
    interest = state.interest.value
    assert list(interest.text) == state.tokenized.distinct_ids()
    assert not set(interest.neighbors) & set(interest.text)
    assert state.lookup_check.value.equal  # one-hot @ E gave E[i] exactly
    assert state.random_check.value.dim == table.dim
    state.add_extra_token(7)
    qtbot.waitUntil(lambda: state.interest.value is not None and 7 in state.interest.value.extra, timeout=30_000)


def test_projection_on_the_chosen_tokens_waits_for_them(qtbot, state):
    state.set_table(open_table("default"))
    state.set_text("the cat sat on the mat")
    _want_all(state)
    state.request_projection("chosen")
    qtbot.waitUntil(lambda: state.projection.value is not None, timeout=30_000)
    result = state.projection.value
    assert result.mode == "chosen"
    assert sorted(result.ids.tolist()) == state.interest.value.all_ids()
    state.request_projection("all")
    qtbot.waitUntil(lambda: state.projection.value is not None and state.projection.value.mode == "all",
                    timeout=30_000)
    assert len(state.projection.value.ids) == state.table.trained_rows


def test_the_lookup_check_is_not_run_on_a_table_too_big_to_hold(qtbot, state):
    state.set_table(open_table("random:1000000x128"))
    state.set_text("5")
    _want_all(state)
    assert state.selected_id == 5 and state.lookup_check.value is None and not state.lookup_check.running


def test_a_selection_goes_to_another_model_by_word_not_by_position(state):
    """Issue 25, item 8: MiniLM's "king" (after [CLS], position 1) became SmolLM2's
    "␣queen" (position 1, no [CLS]). It follows the word through the word
    resolver, or is cleared when the word is not one token there."""
    from explorer.core.sources import package_path
    from explorer.core.tokens.words import candidate_ids

    if package_path("minilm") is None or package_path("smollm2") is None:
        pytest.skip("MiniLM and SmolLM2 are not installed")
    text = "the king and the queen"
    minilm, smol = open_table("minilm"), open_table("smollm2")
    state.set_table(minilm)
    state.set_text(text)
    king = next(t for t in state.tokens if t.text_in(text) == "king")
    state.select_position(king.position)
    assert king.position == 2 and minilm.piece(state.selected_id) == "king"
    state.set_table(smol)
    picked = state.tokens[state.selected_position]
    assert picked.text_in(text).strip() == "king" and picked.id in set(candidate_ids(smol.tokenizer, "king"))
    assert state.selected_position != king.position  # SmolLM2 writes no [CLS]: the position moved
    # and back again
    state.set_table(minilm)
    assert minilm.piece(state.selected_id) == "king" and state.selected_position == 2
    # a word the other model splits into several pieces: nothing selected, rather than a wrong token
    state.set_text("the mozart")
    whole = next(t for t in state.tokens if t.text_in("the mozart") == "mozart")
    state.select_position(whole.position)
    assert len([t for t in smol.tokenizer.encode("the mozart") if not t.special]) > 2  # SmolLM2 splits it
    state.set_table(smol)
    assert state.selected_position == -1 and state.selected_id == -1
