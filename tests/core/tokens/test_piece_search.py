"""Substring and regular-expression search over a vocabulary's shown pieces
(explorer.core.tokens.search): the one-pass search over the joined pieces
equals ``re.search`` on every piece, and a bad pattern is a PatternError."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table
from explorer.core.tokens.meta import iter_token_metadata
from explorer.core.tokens.search import PatternError, PieceIndex, search_pieces


@pytest.fixture(scope="module")
def minilm_meta():
    t = open_table("minilm")
    return t, run_to_end(iter_token_metadata(t))


def _reference(pieces, pattern, flags=re.IGNORECASE):
    rx = re.compile(pattern, flags)
    return np.array([i for i, p in enumerate(pieces) if rx.search(p)], np.int64)


@pytest.mark.parametrize("query", ["^qu", "ing$", r"^\d+$", "[aeiou]{3}", r"\s", "[^a-z]", "(?s).", r"\Aa",
                                   "(?<=q)u", "x*", "^$", r"\bthe\b", "(?:ab|cd)e"])
def test_regex_hits_equal_re_search_on_each_minilm_piece(minilm_meta, query):
    t, meta = minilm_meta
    hits = search_pieces(meta.pieces, query, regex=True)
    np.testing.assert_array_equal(hits.ids, _reference(meta.pieces.pieces, query))
    assert hits.count == len(hits.ids)


def test_substring_is_literal_and_case_insensitive_by_default(minilm_meta):
    t, meta = minilm_meta
    dots = search_pieces(meta.pieces, "..")  # two dots, not a pattern
    assert dots.count and all(".." in meta.pieces.pieces[i] for i in dots.ids)
    queen = search_pieces(meta.pieces, "QUEEN")
    assert t.tokenizer.id_of("queen") in queen.ids.tolist()
    assert search_pieces(meta.pieces, "QUEEN", case=True).count == 0
    assert meta.pieces.pieces[t.tokenizer.id_of("##ing")] == t.shown_piece(t.tokenizer.id_of("##ing")).text
    mask = queen.mask(t.vocab_size)
    assert mask.sum() == queen.count and mask[t.tokenizer.id_of("queen")]


@pytest.mark.parametrize("bad", ["(", "[a-", "a{2,1}", "*x", "(?P<n>a)(?P<n>b)"])
def test_a_bad_pattern_is_a_pattern_error_with_a_message(bad):
    with pytest.raises(PatternError, match="Not a valid regular expression"):
        search_pieces(PieceIndex.of(["a", "b"]), bad, regex=True)
    assert search_pieces(PieceIndex.of(["a(", "b"]), "(", regex=False).ids.tolist() == [0]


def test_empty_query_and_empty_vocabulary_find_nothing():
    assert search_pieces(PieceIndex.of(["a"]), "").count == 0
    assert search_pieces(PieceIndex.of([]), "a").count == 0


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.text(alphabet="ab c\n.", max_size=5), max_size=12),
       st.sampled_from(["a", "^a", "a$", "b.", r"\s", "[^a]", "a|^$", "^", "c?$", " "]))
def test_joined_search_equals_per_piece_search(pieces, pattern):
    index = PieceIndex.of(pieces)
    hits = search_pieces(index, pattern, regex=True)
    np.testing.assert_array_equal(hits.ids, _reference(index.pieces, pattern))


def test_a_search_goes_a_span_of_pieces_at_a_time_and_finds_what_one_pass_finds():
    """One pass of ``re`` over the 10,000,000 pieces of a random table held the GIL 114-572 ms (the
    window stood still while a query was typed); a span of pieces a pass, yielding between, finds the
    same tokens, a regular expression's ^ and $ at each piece's ends as before."""
    from explorer.core.tokens.search import iter_search_pieces

    pieces = ["the", "cat", "sat", "", "on", "the mat", "ca", "t", "atlas", "bat", "a\nb", "cat"]
    index = PieceIndex.of(pieces)
    for query, regex in [("at", False), ("the", False), ("^ca", True), ("t$", True), ("a.?t", True),
                         ("↵", False), ("zz", False), ("c", False)]:
        whole = run_to_end(iter_search_pieces(index, query, regex, span=len(pieces)))
        expected = [k for k, p in enumerate(index.pieces) if re.search(query if regex else re.escape(query), p,
                                                                       re.IGNORECASE)]
        assert whole.ids.tolist() == expected, query
        for span in (1, 2, 5, 11):
            steps = list(iter_search_pieces(index, query, regex, span=span))
            assert len(steps) == 1 + -(-len(pieces) // span)
            assert run_to_end(iter_search_pieces(index, query, regex, span=span)).ids.tolist() == expected
