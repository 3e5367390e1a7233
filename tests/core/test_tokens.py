"""Tokenizers: pieces, character spans, special tokens, words, limits."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.tokens import (
    MAX_TEXT_CHARS,
    representable,
    shown,
    HFTokenizer,
    IdTokenizer,
    NameTokenizer,
    TokenizeError,
    display_piece,
    ids_array,
    words_of,
)

MB = 1_000_000


def _check_spans(text, tokens):
    for pos, t in enumerate(tokens):
        assert t.position == pos
        assert 0 <= t.start <= t.end <= len(text)
        if not t.special:
            assert t.end > t.start
    starts = [t.start for t in tokens if not t.special]
    assert starts == sorted(starts)


# --------------------------------------------------------------------------
# NameTokenizer
# --------------------------------------------------------------------------


def test_name_tokenizer_spans_and_words():
    tok = NameTokenizer(["the", "cat", "sat", "<pad>"], special=["<pad>"])
    text = "  the cat\tsat  <pad> the"
    toks = tok.encode(text)
    assert [t.id for t in toks] == [0, 1, 2, 3, 0]
    for t in toks:
        assert t.text_in(text) == t.piece == tok.piece(t.id)
    assert [t.special for t in toks] == [False, False, False, True, False]
    assert [t.word for t in toks] == [0, 1, 2, None, 4]  # <pad> is special: no word
    _check_spans(text, toks)
    assert tok.vocab_size == 4 and tok.id_of("sat") == 2 and tok.id_of("dog") is None
    assert tok.piece(9) == "<9>"


def test_name_tokenizer_refuses_unknown_words():
    tok = NameTokenizer(["the", "cat"])
    with pytest.raises(TokenizeError, match="'dog' is not in this table's vocabulary.*the, cat"):
        tok.encode("the dog")


# --------------------------------------------------------------------------
# IdTokenizer
# --------------------------------------------------------------------------


def test_id_tokenizer_spans():
    tok = IdTokenizer(100)
    text = "42 7\n 42 250"
    toks = tok.encode(text)
    assert [t.id for t in toks] == [42, 7, 42, 250]  # out of range is flagged later, not here
    for t in toks:
        assert t.text_in(text) == t.piece == str(t.id)
        assert not t.special
    assert [t.word for t in toks] == [0, 1, 2, 3]
    _check_spans(text, toks)
    assert tok.id_of("12") == 12 and tok.id_of("x") is None
    assert tok.id_of("²") is None  # isdigit() but not an int() literal


@pytest.mark.parametrize("text", ["hello", "1.5", "-1", "3 x 4", "0x10", "²", "1 ³"])
def test_id_tokenizer_refuses_non_ids(text):
    with pytest.raises(TokenizeError, match="not a token id"):
        IdTokenizer(100).encode(text)


# --------------------------------------------------------------------------
# HFTokenizer on the real models
# --------------------------------------------------------------------------


def test_minilm_spans_match_pieces(minilm_table):
    text = "The Unhappiness of a river bank, explained!"
    toks = minilm_table.tokenizer.encode(text)
    _check_spans(text, toks)
    for t in toks:
        if not t.special:
            # WordPiece lower-cases and marks continuations with ##
            assert t.text_in(text).lower() == t.piece.removeprefix("##")


def test_minilm_word_grouping(minilm_table):
    text = "unhappiness is real"
    toks = minilm_table.tokenizer.encode(text)
    body = [t for t in toks if not t.special]
    pieces = [t for t in body if t.start < len("unhappiness")]
    assert len(pieces) > 1  # WordPiece splits it
    assert "".join(p.piece.removeprefix("##") for p in pieces) == "unhappiness"
    assert len({p.word for p in pieces}) == 1
    groups = words_of(toks)
    assert [[t.position for t in g] for g in groups][0] == [p.position for p in pieces]
    assert [text[g[0].start : g[-1].end] for g in groups] == ["unhappiness", "is", "real"]
    # words are numbered in order
    assert [g[0].word for g in groups] == sorted(g[0].word for g in groups)


def test_minilm_special_tokens(minilm_table):
    toks = minilm_table.tokenizer.encode("hello world")
    first, last = toks[0], toks[-1]
    assert (first.piece, last.piece) == ("[CLS]", "[SEP]")
    assert (first.id, last.id) == (minilm_table.tokenizer.id_of("[CLS]"), minilm_table.tokenizer.id_of("[SEP]"))
    for t in (first, last):
        assert t.special and t.word is None and t.start == t.end
    assert not any(t.special for t in toks[1:-1])
    assert all(t not in sum(words_of(toks), []) for t in (first, last))


def test_smollm2_byte_level_spans(smollm2_table):
    text = "The river bank, again and again."
    toks = smollm2_table.tokenizer.encode(text)
    _check_spans(text, toks)
    for t in toks:
        if not t.special:
            assert t.text_in(text) == t.piece.replace("Ġ", " ")
    assert display_piece("Ġbank") == "␣bank"


def test_hf_tokenizer_matches_the_tokenizers_library(minilm_dir):
    from tokenizers import Tokenizer

    raw = Tokenizer.from_file(str(minilm_dir / "tokenizer.json"))
    ours = HFTokenizer.from_file(minilm_dir / "tokenizer.json")
    text = "Embedding tables map ids to rows."
    # the file asks for padding to a fixed length; the explorer shows only real pieces
    assert len(raw.encode(text).ids) > 20
    raw.no_padding()
    raw.no_truncation()
    enc = raw.encode(text)
    assert len(enc.ids) < 20
    toks = ours.encode(text)
    assert [t.id for t in toks] == enc.ids
    assert [t.piece for t in toks] == enc.tokens
    assert [(t.start, t.end) for t in toks] == [tuple(o) for o in enc.offsets]
    assert ours.vocab_size == raw.get_vocab_size(with_added_tokens=True)
    for i in (0, 100, 2924, 30_521):
        assert ours.piece(i) == raw.id_to_token(i)
    assert ours.piece(10**6) == f"<{10**6}>"
    np.testing.assert_array_equal(ids_array(toks), np.asarray(enc.ids, dtype=np.int64))


# --------------------------------------------------------------------------
# Empty and huge texts
# --------------------------------------------------------------------------


def _tokenizers(minilm_table):
    return {
        "names": NameTokenizer(["the", "cat"]),
        "ids": IdTokenizer(1000),
        "wordpiece": minilm_table.tokenizer,
    }


@pytest.mark.parametrize("kind", ["names", "ids", "wordpiece"])
def test_empty_text_gives_no_tokens(minilm_table, kind):
    tok = _tokenizers(minilm_table)[kind]
    assert tok.encode("") == []
    assert words_of(tok.encode("")) == []


@pytest.mark.parametrize("kind", ["names", "ids", "wordpiece"])
def test_huge_text_is_cut(minilm_table, kind):
    """A pasted megabyte is cut to MAX_TEXT_CHARS before tokenizing: the
    bound is on the size of the work, not on a wall-clock time."""
    tok = _tokenizers(minilm_table)[kind]
    unit = {"names": "the cat ", "ids": "12 7 ", "wordpiece": "the cat sat on unhappiness. "}[kind]
    text = unit * (MB // len(unit) + 1)
    assert len(text) >= MB
    toks = tok.encode(text)
    assert toks
    assert max(t.end for t in toks) <= MAX_TEXT_CHARS < len(text)
    # what is kept is tokenized exactly as the same prefix alone
    prefix = text[:MAX_TEXT_CHARS]
    assert [t.id for t in toks] == [t.id for t in tok.encode(prefix)]


def test_words_of_skips_special_and_keeps_order():
    tok = NameTokenizer(["a", "b", "<s>"], special=["<s>"])
    toks = tok.encode("<s> a b a")
    groups = words_of(toks)
    assert [[t.piece for t in g] for g in groups] == [["a"], ["b"], ["a"]]


def test_display_piece():
    assert display_piece("") == "∅"
    assert display_piece("▁the") == "␣the"
    assert display_piece("Ċ") == "↵"
    assert display_piece("##ness") == "##ness"


def test_unknown_word_maps_to_a_special_unk_token():
    from explorer.core.sources import open_table

    table = open_table("default")
    tokens = table.tokenizer.encode("the zzzz cat")
    unk = tokens[1]
    assert unk.piece == "<unk>" and unk.special
    assert not tokens[0].special and not tokens[2].special


# --------------------------------------------------------------------------
# Issue 11: texts no tokenizer should crash on
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["\udcff", "caf\udce9 bank", "a\ud800b\udfffc", "\x00 bank \x00", "\ufeff\u200b bank"])
@pytest.mark.parametrize("table", ["minilm_table", "smollm2_table", "default"])
def test_lone_surrogates_and_nul_are_tokenized(request, table, text):
    """Invalid UTF-8 in argv arrives as lone surrogates: every HF tokenizer
    raised TypeError. They read as U+FFFD now, at the same character offsets."""
    from explorer.core.sources import open_table

    t = request.getfixturevalue(table) if table.endswith("_table") else open_table(table)
    toks = t.tokenizer.encode(text)
    _check_spans(text, toks)
    shown_text = representable(text)
    assert len(shown_text) == len(text) and "\udcff" not in shown_text
    same = t.tokenizer.encode(shown_text)
    assert [(x.id, x.start, x.end) for x in same] == [(x.id, x.start, x.end) for x in toks]


def test_representable_keeps_offsets():
    assert representable("ok") == "ok"
    assert representable("a\udcffb\ud83d") == "a\ufffdb\ufffd"
    assert representable("\U0001F600") == "\U0001F600"  # a real (paired) emoji stays


@pytest.mark.parametrize("text", ["9" * 5000, "0" * 30 + "7", "1" * 19, "123456789012345678 " + "9" * 4301])
def test_id_tokenizer_bounds_digits(text):
    tok = IdTokenizer(100)
    first = text.split()[-1]
    if len(first.lstrip("0")) <= 18 and len(text.split()) == 1:
        assert [t.id for t in tok.encode(text)] == [int(first)]
    else:
        with pytest.raises(TokenizeError, match="digits\\) is far past the last row") as info:
            tok.encode(text)
        assert len(str(info.value)) < 200
    assert tok.id_of("9" * 5000) is None


def test_shown_quotes_one_line():
    assert shown("a\nb") == "'a\\nb'"
    assert shown("x" * 100, 10) == "'xxxxxxxxxx…'"
    assert shown("\udcff") == "'\\udcff'"
    assert "\u2028" not in shown("a\u2028b")
