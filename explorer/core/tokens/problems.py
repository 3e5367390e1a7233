"""Why a token of a text names no row of the table, in words. No Qt here.

A token that names no row (a typed ``-1``, ``abc`` or ``100`` on a table of
100 rows, a word a toy table does not know, an id from a tokenizer whose
vocabulary is larger than the table) stays in the text: it is shown, red,
with its reason, and every consumer skips it instead of indexing the table
with it. The reason is computed once, here; views only print it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from explorer.core.errors import shown

__all__ = ["TokenProblem", "ProblemGroup", "problem_label", "problem_message", "group_problems"]


class TokenProblem(Enum):
    """Why a token names no row of the table."""

    #: a table without tokenizer reads whole numbers; this word is not one
    NOT_A_NUMBER = "not a number"
    #: a typed id below 0 (rows are numbered from 0)
    NEGATIVE = "negative"
    #: a typed id of more digits than any row number has
    TOO_MANY_DIGITS = "too many digits"
    #: a typed id at or past V
    PAST_LAST_ROW = "past the last row"
    #: the tokenizer gave an id at or past V (its vocabulary is larger than the table)
    NOT_IN_TABLE = "not in the table"
    #: a word a table of named rows (a toy table) does not have
    UNKNOWN_WORD = "unknown word"


@dataclass(frozen=True)
class ProblemGroup:
    """Tokens of a text that share one problem.

    Attributes
    ----------
    problem : TokenProblem
    count : int
        How many tokens have it.
    examples : tuple of str
        The first few distinct pieces with it, as typed.
    more : bool
        Other distinct pieces have it too.
    """

    problem: TokenProblem
    count: int
    examples: tuple[str, ...]
    more: bool = False

    def sentence(self, vocab_size: int) -> str:
        """One line for a summary: "9,800 words are not ids: 'It', 'was', …"."""
        n = self.count
        one = n == 1
        quoted = ", ".join(_quote(e) for e in self.examples)
        more = ", …" if self.more else ""
        last = vocab_size - 1
        what = {
            TokenProblem.NOT_A_NUMBER: ("word is not an id" if one else "words are not ids"),
            TokenProblem.NEGATIVE: ("id is negative" if one else "ids are negative"),
            TokenProblem.TOO_MANY_DIGITS: ("id has too many digits" if one else "ids have too many digits"),
            TokenProblem.PAST_LAST_ROW: (f"id is past the last row ({last:,})" if one
                                         else f"ids are past the last row ({last:,})"),
            TokenProblem.NOT_IN_TABLE: (f"token has an id past the table's last row ({last:,})" if one
                                        else f"tokens have ids past the table's last row ({last:,})"),
            TokenProblem.UNKNOWN_WORD: ("word is not in the vocabulary" if one else "words are not in the vocabulary"),
        }[self.problem]
        return f"{n:,} {what}: {quoted}{more}"


def _quote(text: str, limit: int = 20) -> str:

    return shown(text, limit)


def problem_label(token, vocab_size: int) -> str:
    """A few words for a chip's second line ("negative", "past row 99")."""
    p = token.problem
    if p is TokenProblem.PAST_LAST_ROW:
        return f"past row {vocab_size - 1:,}"
    if p is TokenProblem.NOT_IN_TABLE:
        return f"{token.id:,}: no row"
    return "" if p is None else p.value


def problem_message(token, vocab_size: int) -> str:
    """A sentence saying why ``token`` names no row and what to do ("" if it does)."""
    p = token.problem
    last = vocab_size - 1
    rows = f"rows 0 to {last:,}" if vocab_size > 0 else "no rows"
    if p is None:
        return ""
    piece = _quote(token.piece, 40)
    if p is TokenProblem.NOT_A_NUMBER:
        return (f"{piece} is not a token id: this table has no tokenizer, so it reads whole numbers "
                f"from 0 to {last:,} separated by spaces")
    if p is TokenProblem.NEGATIVE:
        return f"{piece} is negative: ids count rows from 0, and this table has {rows}"
    if p is TokenProblem.TOO_MANY_DIGITS:
        digits = len(token.piece.lstrip("0"))
        return f"{_quote(token.piece, 24)} has {digits:,} digits, far past the last row: this table has {rows}"
    if p is TokenProblem.PAST_LAST_ROW:
        return (f"id {token.id:,} is past the last row: this table has {rows} (V = {vocab_size:,}); "
                f"a lookup would fail with an index error")
    if p is TokenProblem.NOT_IN_TABLE:
        return (f"the tokenizer gave id {token.id:,} for {piece} but the table has only {vocab_size:,} rows "
                f"({rows}): the tokenizer does not match this table, and a lookup would fail")
    return f"{piece} is not in this table's vocabulary, so it has no row"


def group_problems(tokens: Iterable, examples: int = 3) -> tuple[ProblemGroup, ...]:
    """The text's bad tokens grouped by problem, in order of first appearance.

    A pasted book on a table of ids has thousands of words that are not ids:
    they become one group with a count and a few examples, not thousands of
    messages.
    """
    counts: dict[TokenProblem, int] = {}
    seen: dict[TokenProblem, dict[str, None]] = {}
    more: set[TokenProblem] = set()
    for t in tokens:
        p = t.problem
        if p is None:
            continue
        counts[p] = counts.get(p, 0) + 1
        ex = seen.setdefault(p, {})
        if t.piece not in ex:
            if len(ex) < examples:
                ex[t.piece] = None
            else:
                more.add(p)
    return tuple(ProblemGroup(p, n, tuple(seen[p]), p in more) for p, n in counts.items())
