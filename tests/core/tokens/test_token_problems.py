"""Tokens that name no row stay in the text, with their reason (issue 12, item 1):
"5 99 100 -1 abc" on 100 rows showed no chip at all, and "5 99 100 7"
counted 4 distinct rows read where only 3 can be."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.core.tokens.problems import TokenProblem, group_problems
from explorer.core.tokens.text import tokenize_text
from explorer.core.tokens.tokenize import MAX_TEXT_CHARS

P = TokenProblem


@pytest.fixture(scope="module")
def random100():
    return open_table("random:100x8")


def test_every_word_stays_with_its_reason(random100):
    tok = tokenize_text(random100.tokenizer, "5 99 100 -1 abc", random100.vocab_size)
    assert tok.error is None
    assert [t.text_in(tok.text) for t in tok.tokens] == ["5", "99", "100", "-1", "abc"]
    assert [t.problem for t in tok.tokens] == [None, None, P.PAST_LAST_ROW, P.NEGATIVE, P.NOT_A_NUMBER]
    assert [tok.problem_label(t) for t in tok.tokens] == ["", "", "past row 99", "negative", "not a number"]
    assert tok.problem_message(tok.tokens[2]).startswith("id 100 is past the last row: this table has rows 0 to 99")
    assert "index error" in tok.problem_message(tok.tokens[2])
    assert "'-1' is negative" in tok.problem_message(tok.tokens[3])
    assert "'abc' is not a token id" in tok.problem_message(tok.tokens[4])
    assert tok.problem_message(tok.tokens[0]) == ""
    # only rows are counted, read or selected
    assert tok.rows_read == 2 and dict(tok.counts) == {5: 1, 99: 1} and tok.n_bad == 3
    assert tok.distinct_ids() == [5, 99] and tok.first_selectable() == 0
    assert tok.position_of(-1) == -1
    assert tok.readable
    assert tok.problem_lines() == ["1 id is past the last row (99): '100'", "1 id is negative: '-1'",
                                   "1 word is not an id: 'abc'"]


def test_distinct_rows_read_counts_only_rows(random100):
    tok = tokenize_text(random100.tokenizer, "5 99 100 7 100 5", random100.vocab_size)
    assert tok.rows_read == 3  # 5, 99, 7: not 100
    assert tok.counts == {5: 2, 99: 1, 7: 1}
    (group,) = tok.problems
    assert (group.problem, group.count, group.examples, group.more) == (P.PAST_LAST_ROW, 2, ("100",), False)
    assert tok.problem_lines() == ["2 ids are past the last row (99): '100'"]


def test_text_with_no_row_at_all_is_not_readable(random100):
    tok = tokenize_text(random100.tokenizer, "The river bank", random100.vocab_size)
    assert len(tok.tokens) == 3 and tok.rows_read == 0 and not tok.readable
    assert tok.first_selectable() == 0  # a chip to select, and to explain
    assert tokenize_text(random100.tokenizer, "", random100.vocab_size).readable


def test_a_pasted_book_on_a_table_of_ids_is_one_summary_line(random100):
    """1 MB of English on a table of ids: cut at MAX_TEXT_CHARS, every word a
    chip, and one line with a count and three examples, not thousands."""
    words = "It was the best of times it was the worst of times 42".split()
    rng = np.random.default_rng(0)
    book = " ".join(words[i] for i in rng.integers(0, len(words), 250_000))
    assert len(book) > 1_000_000
    tok = tokenize_text(random100.tokenizer, book, random100.vocab_size)
    assert tok.truncated and tok.tokens[-1].end <= MAX_TEXT_CHARS
    n = len(tok.tokens)
    good = sum(t.ok for t in tok.tokens)
    assert n > 10_000 and 0 < good < n // 5
    assert tok.rows_read == 1 and tok.counts == {42: good}
    (group,) = tok.problems
    assert group.problem is P.NOT_A_NUMBER and group.count == n - good and group.more
    (line,) = tok.problem_lines()
    assert line.startswith(f"{n - good:,} words are not ids: ") and line.endswith(", …") and len(line) < 120


def test_toy_table_keeps_unknown_words():
    table = open_table("toy:robot")
    tok = tokenize_text(table.tokenizer, "robot dog arm", table.vocab_size)
    assert [t.problem for t in tok.tokens] == [None, P.UNKNOWN_WORD, None]
    assert tok.rows_read == 2
    assert "'dog' is not in this table's vocabulary" in tok.problem_message(tok.tokens[1])
    assert tok.problem_lines() == ["1 word is not in the vocabulary: 'dog'"]


def test_tokenizer_larger_than_the_table(mismatch_folder):
    """A real tokenizer that knows 40 more ids than its table has rows."""
    folder, backend = mismatch_folder
    table = open_table(str(folder))
    high = [backend.id_to_token(backend.get_vocab_size() - k) for k in (1, 2)]
    text = f"the {high[0]} cat {high[1]} {high[0]}"
    tok = tokenize_text(table.tokenizer, text, table.vocab_size)
    assert [t.problem for t in tok.tokens] == [None, P.NOT_IN_TABLE, None, P.NOT_IN_TABLE, P.NOT_IN_TABLE]
    bad = tok.tokens[1]
    assert bad.id == backend.get_vocab_size() - 1 >= table.vocab_size  # kept: it says which id
    assert tok.problem_label(bad) == f"{bad.id:,}: no row"
    msg = tok.problem_message(bad)
    assert f"the tokenizer gave id {bad.id:,}" in msg and f"only {table.vocab_size:,} rows" in msg
    assert tok.rows_read == 2 and set(tok.counts) == {tok.tokens[0].id, tok.tokens[2].id}
    assert tok.problem_lines() == [f"3 tokens have ids past the table's last row ({table.vocab_size - 1:,}): "
                                   f"'{high[0]}', '{high[1]}'"]


def test_group_problems_keeps_order_and_few_examples(random100):
    tok = random100.tokenizer.encode("a -1 b 100 c d -2 a")
    groups = group_problems(tok, examples=2)
    assert [(g.problem, g.count, g.examples, g.more) for g in groups] == [
        (P.NOT_A_NUMBER, 5, ("a", "b"), True),
        (P.NEGATIVE, 2, ("-1", "-2"), False),
        (P.PAST_LAST_ROW, 1, ("100",), False),
    ]


@pytest.mark.parametrize("spec, text", [("minilm", "the cat [SEP] sat the cat"),
                                        ("random:100x8", "5 99 100 -1 5 abc 7"),
                                        ("default", "the king and the queen <unk> the")])
def test_distinct_ids_follow_the_tokens(spec, text):
    """Made from the counts kept with the tokens: the same as walking every token."""
    from explorer.core.sources import package_path

    if spec == "minilm" and package_path("minilm") is None:
        pytest.skip("MiniLM is not installed")
    table = open_table(spec)
    tok = tokenize_text(table.tokenizer, text, table.vocab_size)
    for special in (False, True):
        walked = list(dict.fromkeys(t.id for t in tok.tokens if (special or not t.special) and t.ok))
        assert tok.distinct_ids(include_special=special) == walked
    assert any(t.special for t in tok.tokens) == bool(tok.special_ids)
