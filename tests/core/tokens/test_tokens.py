"""Tokenizers: pieces, character spans, special tokens, words, limits."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.errors import shown
from explorer.core.tokens.pieces import PieceFamily, display_piece
from explorer.core.tokens.problems import TokenProblem
from explorer.core.tokens.tokenize import (
    MAX_TEXT_CHARS,
    HFTokenizer,
    IdTokenizer,
    NameTokenizer,
    ids_array,
    mark_rows,
    representable,
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


def test_name_tokenizer_keeps_unknown_words_flagged():
    tok = NameTokenizer(["the", "cat"])
    the, dog, cat = tok.encode("the dog cat")
    assert (the.id, the.ok) == (0, True) and (cat.id, cat.ok) == (1, True)
    assert (dog.id, dog.piece, dog.problem, dog.word) == (-1, "dog", TokenProblem.UNKNOWN_WORD, 1)


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


@pytest.mark.parametrize(
    "text, problems",
    [
        ("hello", ["NOT_A_NUMBER"]),
        ("1.5", ["NOT_A_NUMBER"]),
        ("-1", ["NEGATIVE"]),
        ("-0042", ["NEGATIVE"]),
        ("3 x 4", [None, "NOT_A_NUMBER", None]),
        ("0x10", ["NOT_A_NUMBER"]),
        ("²", ["NOT_A_NUMBER"]),  # isdigit() but not an int() literal
        ("1 ³", [None, "NOT_A_NUMBER"]),
        ("-", ["NOT_A_NUMBER"]),
        ("99 100 007", [None, "PAST_LAST_ROW", None]),
    ],
)
def test_id_tokenizer_keeps_every_word_and_flags_non_ids(text, problems):
    """Issue 12: the first word that was not an id raised, and every chip went."""
    toks = IdTokenizer(100).encode(text)
    assert [t.problem.name if t.problem else None for t in toks] == problems
    for t, word in zip(toks, text.split()):
        assert t.text_in(text) == word
        if t.problem is None:
            assert 0 <= t.id < 100 and t.piece == str(t.id) == str(int(word))
        elif t.problem is TokenProblem.PAST_LAST_ROW:
            assert t.id == int(word) and t.piece == word  # the id is kept: it is >= V, never a row
        else:
            assert t.id == -1 and t.piece == word  # never a negative index into the table


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
    assert display_piece("Ġbank", PieceFamily.BYTE_LEVEL).text == "␣bank"


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


def _mixed_text(n: int) -> str:
    """``n`` characters of words, punctuation, accents, CJK and emoji (a fixed sequence)."""
    import random

    rng = random.Random(7)
    return "".join(rng.choice("abcdefghij klmnopqrstuvwxyz,.!éü中文😀\n") for _ in range(n))


@pytest.mark.parametrize("fixture", ["minilm_table", "smollm2_table"])
def test_a_long_text_is_tokenized_as_the_library_encodes_it(request, fixture):
    """The app tokenizes through the library's batch call (which lets the GIL go): ids, pieces,
    spans and words as the library's own ``encode`` of the same text gives them."""
    tok = request.getfixturevalue(fixture).tokenizer
    text = _mixed_text(20_000)
    enc = tok.backend.encode(text)
    toks = tok.encode(text)
    assert len(toks) == len(enc.ids) > 2_000
    assert [t.id for t in toks] == enc.ids
    assert [t.piece for t in toks] == enc.tokens
    assert [(t.start, t.end) for t in toks] == [tuple(o) for o in enc.offsets]
    assert [t.word for t in toks if not t.special] == [enc.word_ids[t.position] for t in toks if not t.special]


@pytest.mark.parametrize("fixture", ["minilm_table", "smollm2_table"])
def test_a_long_text_is_tokenized_with_the_gil_let_go(request, fixture):
    """A worker tokenizing a pasted text lets the window's thread run meanwhile: the library's
    ``encode`` held the GIL through the whole call (40-60 ms for 50,000 characters), its batch
    call lets it go. The switch interval is an hour here: the counting thread runs only while
    the tokenizing thread lets the GIL go itself."""
    from tests.support.gil import lets_the_gil_go

    tok = request.getfixturevalue(fixture).tokenizer
    text = _mixed_text(MAX_TEXT_CHARS)
    tok.encode(text[:100])  # whatever the first call sets up, set up before counting
    toks, counted = lets_the_gil_go(lambda: tok.encode(text))
    assert len(toks) > 5_000
    assert counted


def test_words_of_skips_special_and_keeps_order():
    tok = NameTokenizer(["a", "b", "<s>"], special=["<s>"])
    toks = tok.encode("<s> a b a")
    groups = words_of(toks)
    assert [[t.piece for t in g] for g in groups] == [["a"], ["b"], ["a"]]


def test_mark_rows_flags_ids_a_tokenizer_gives_past_the_table(mismatch_folder):
    from explorer.core.sources import open_table

    folder, tok = mismatch_folder
    t = open_table(str(folder))
    high = tok.id_to_token(tok.get_vocab_size() - 1)
    toks = mark_rows(t.tokenizer.encode(f"the {high} cat"), t.vocab_size)
    assert [x.problem for x in toks] == [None, TokenProblem.NOT_IN_TABLE, None]
    assert toks[1].id == tok.get_vocab_size() - 1 >= t.vocab_size
    ok = mark_rows(toks[:1], t.vocab_size)
    assert ok[0] is toks[0]  # tokens that are fine are not copied


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
    from explorer.core.tokens.problems import problem_message

    tok = IdTokenizer(100)
    last = text.split()[-1]
    toks = tok.encode(text)
    if len(last.lstrip("0")) <= 18:
        assert toks[-1].id == int(last) and toks[-1].ok == (int(last) < 100)
    else:
        # never converted (Python refuses ints of more than 4,300 digits), one short message
        assert toks[-1].problem is TokenProblem.TOO_MANY_DIGITS and toks[-1].id == -1
        msg = problem_message(toks[-1], 100)
        assert "digits, far past the last row" in msg and len(msg) < 200
    if len(toks) > 1:
        assert toks[0].problem is TokenProblem.PAST_LAST_ROW and toks[0].id == 123456789012345678
    assert tok.id_of("9" * 5000) is None


def test_shown_quotes_one_line():
    assert shown("a\nb") == "'a\\nb'"
    assert shown("x" * 100, 10) == "'xxxxxxxxxx…'"
    assert shown("\udcff") == "'\\udcff'"
    assert "\u2028" not in shown("a\u2028b")


@pytest.mark.parametrize("spec", ["default", "minilm", "smollm2", "random:50x4"])
def test_words_are_counted_as_a_reader_counts_them(spec):
    """Issue 25, item 5: "5 tokens · 0 words" on the bundled model, which maps
    every one of these words to <unk> (a special token, in no word)."""
    from explorer.core.sources import open_table, package_path
    from explorer.core.tokens.text import tokenize_text

    if spec in ("minilm", "smollm2") and package_path(spec) is None:
        pytest.skip(f"{spec} is not installed")
    table = open_table(spec)
    text = "café 🤖 日本語 naïve 👍🏽" if not spec.startswith("random") else "3 1  3\n7"
    tok = tokenize_text(table.tokenizer, text, table.vocab_size)
    assert tok.tokens and tok.n_words == (5 if not spec.startswith("random") else 4)
    tok = tokenize_text(table.tokenizer, "the cat sat on the mat", table.vocab_size, limit=11)
    assert tok.n_words == 3  # only the tokenized part ("the cat sat") is counted


@pytest.mark.parametrize("spec, text", [
    ("minilm", "Unhappiness is unbelievably tokenizable, said the bank. The bank! " * 20),
    ("random:50x4", "3 7 3 x 99 -1 7 3"),  # ids past the table, words that are no ids
    ("toy:cat-sat", "the cat sat on the dog and the cat"),  # words the table lacks
])
def test_token_runs_come_with_the_tokens_and_say_what_each_token_is(spec, text):
    """The kinds, word edges, bad flags and rows that showing the tokens needs, made with the
    tokens (in the worker for a long text) and equal to looking at each token on its own."""
    from explorer.core.sources import open_table
    from explorer.core.tokens.text import TokenizedText, token_runs, tokenize_text

    table = open_table(spec)
    tok = tokenize_text(table.tokenizer, text, table.vocab_size)
    tokens = tok.tokens
    runs = tok.runs
    assert runs is not None and len(runs.kind_of) == len(tokens)
    key = lambda t: (t.id, t.piece) if t.ok else (t.id, t.piece, t.problem)  # noqa: E731
    for i, t in enumerate(tokens):
        first = runs.kinds[runs.kind_of[i]]
        assert first <= i and key(tokens[first]) == key(t)  # the first token of its kind ...
        assert all(key(tokens[j]) != key(t) for j in range(first))  # ... and none of it before
        word = t.word
        assert runs.word_starts[i] == (word is None or i == 0 or tokens[i - 1].word != word)
        assert runs.word_ends[i] == (word is None or i == len(tokens) - 1 or tokens[i + 1].word != word)
        assert runs.rows[i] == (t.id if t.ok else -1)
    assert len(set(runs.kinds)) == len(runs.kinds) == len({key(t) for t in tokens})
    assert any(runs.rows < 0) == (spec != "minilm")
    # a text made without them (the state's empty ones) makes them when asked
    bare = TokenizedText(tok.text, tokens, tok.vocab_size)
    assert bare.runs is None and _same_runs(bare.token_runs, runs) and _same_runs(token_runs(tokens), runs)


def _same_runs(a, b) -> bool:
    return (a.kinds, a.kind_of, a.word_starts, a.word_ends) == (b.kinds, b.kind_of, b.word_starts, b.word_ends) \
        and np.array_equal(a.rows, b.rows)
