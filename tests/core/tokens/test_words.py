"""What a typed word names (explorer.core.tokens.words): one resolver for the
analogy command, the analogy panel, the search boxes, custom axes and the tour."""

from __future__ import annotations

import pytest

from explorer.core.sources import open_table
from explorer.core.tokens.word_row import NotOneRow, word_row
from explorer.core.tokens.words import candidate_ids, clean_piece, find_token_ids, resolve_word


def test_find_token_ids():
    t = open_table("toy:robot")
    assert find_token_ids(t, "box")[0] == 2
    assert find_token_ids(t, "#3")[0] == 3
    assert find_token_ids(t, "") == []
    m = open_table("minilm")
    assert find_token_ids(m, "king")[0] == m.tokenizer.id_of("king")
    assert find_token_ids(m, "zzzzqqq") == []


@pytest.fixture(scope="module")
def default():
    return open_table("default")


@pytest.mark.parametrize("word", ["king", "King", " queen ", "#3", "dog", "the"])
def test_the_search_box_the_panel_and_the_command_agree(default, word):
    tid = resolve_word(default.tokenizer, word, rows=default.vocab_size)
    assert tid is not None
    assert find_token_ids(default, word, limit=1) == [tid]  # the search box's Enter
    assert word_row(default, word) == tid  # the analogy command and panel


def test_a_word_without_a_row_is_none_for_the_resolver_and_a_reason_for_word_row(default):
    assert resolve_word(default.tokenizer, "zzqx") is None and resolve_word(default.tokenizer, "  ") is None
    with pytest.raises(NotOneRow, match="'zzqx'"):
        word_row(default, "zzqx")
    assert find_token_ids(default, "zzqx") == []


def test_ids_past_the_table_are_passed_over():
    t = open_table("toy:robot")
    assert resolve_word(t.tokenizer, "#9") == 9 and resolve_word(t.tokenizer, "#9", rows=t.vocab_size) is None
    with pytest.raises(NotOneRow, match="past the table"):
        word_row(t, "#9")
    assert resolve_word(t.tokenizer, "box", rows=t.vocab_size) == 2


def test_the_shown_form_of_a_piece_names_it():
    m = open_table("minilm")
    assert resolve_word(m.tokenizer, "##ness") == m.tokenizer.id_of("##ness")
    assert clean_piece("Ġbank") == "bank" and clean_piece("##ness") == "ness" and clean_piece("▁The") == "the"


def test_odd_numbers_are_words_not_crashes(default):
    # "²" passes str.isdigit but not int(); "##3" starts with "#" but is no id
    for word in ("²", "#²", "##3", "#", "#-1"):
        list(candidate_ids(default.tokenizer, word))
        find_token_ids(default, word)
