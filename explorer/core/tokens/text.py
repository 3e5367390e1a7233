"""A text and its tokens for one table: what the token strip, the inspector
and every view read, computed once (in a worker for long texts). No Qt here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from explorer.core.tokens.pieces import DisplayPiece, PieceFamily, display_piece
from explorer.core.tokens.problems import ProblemGroup, group_problems, problem_label, problem_message
from explorer.core.tokens.tokenize import MAX_TEXT_CHARS, Token, TokenizeError, Tokenizer, mark_rows

__all__ = ["TokenizedText", "TokenRuns", "token_runs", "tokenize_text", "tokenizer_family", "INLINE_CHARS"]

#: texts up to this many characters are tokenized on the spot (well under a
#: millisecond); longer ones in a worker, so a pasted book never blocks
INLINE_CHARS = 2_000


@dataclass(frozen=True, eq=False)  # an array among the fields: compared by identity
class TokenRuns:
    """What showing the tokens one by one needs beyond the tokens, made once with them (in the
    worker for a long text): a book's 13,000 tokens looked at one at a time on the window's thread
    were 30 ms of the pass that showed them.

    Attributes
    ----------
    kinds : tuple of int
        The index (in the tokens) of the first token of each kind: the same id and piece (and, for a token that
        names no row, the same problem), in order of first appearance.
    kind_of : tuple of int
        Each token's kind (an index into ``kinds``).
    word_starts, word_ends : tuple of bool
        Whether each token starts (ends) a word: the first (last) piece of one, or a token of no word.
    rows : numpy.ndarray
        Each token's row (int64), -1 for a token that names none.
    """

    kinds: tuple[int, ...] = ()
    kind_of: tuple[int, ...] = ()
    word_starts: tuple[bool, ...] = ()
    word_ends: tuple[bool, ...] = ()
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def token_runs(tokens: tuple[Token, ...]) -> TokenRuns:
    """The :class:`TokenRuns` of ``tokens``."""
    first_of: dict[tuple, int] = {}
    kinds, kind_of = [], []
    for i, t in enumerate(tokens):
        key = (t.id, t.piece) if t.problem is None else (t.id, t.piece, t.problem)
        k = first_of.get(key)
        if k is None:
            k = first_of[key] = len(kinds)
            kinds.append(i)
        kind_of.append(k)
    words = [t.word for t in tokens]
    edge = object()  # before the first token and after the last: a word starts and ends there
    starts = tuple(w is None or w != before for w, before in zip(words, [edge, *words[:-1]]))
    ends = tuple(w is None or w != after for w, after in zip(words, [*words[1:], edge]))
    rows = np.fromiter((t.id if t.problem is None else -1 for t in tokens), np.int64, len(tokens))
    return TokenRuns(tuple(kinds), tuple(kind_of), starts, ends, rows)


@dataclass(frozen=True)
class TokenizedText:
    """The tokens of a text for a table of ``vocab_size`` rows.

    Attributes
    ----------
    text : str
        The whole text as the user gave it.
    tokens : tuple of Token
        Tokens of ``text[:limit]`` in order (empty when ``error`` is set).
        Tokens that name no row stay, with their ``problem`` set.
    vocab_size : int
        Rows of the table the ids refer to (V).
    limit : int
        Characters tokenized at most; the rest of a longer text is not.
    error : TokenizeError or None
        Why the tokenizer failed on the text as a whole (a broken tokenizer).
    counts : mapping int -> int
        How often each row is read (tokens with a problem are not counted).
    n_words : int
        Words of the tokenized text as a reader counts them: runs of
        characters between white space. Not the tokenizer's own word ids,
        which miss a word it maps to an unknown token (a table without
        "café" has no word there) and split what it sees as several (BERT
        makes a word of each CJK character).
    rows_read : int
        Distinct ids that are rows of the table (0 <= id < V): the rows a
        lookup of this text reads.
    problems : tuple of ProblemGroup
        The tokens that name no row, grouped by reason (a count and a few
        examples each), in order of first appearance.
    family : PieceFamily
        The notation of the tokenizer's pieces (for :meth:`shown_piece`).
    special_ids : frozenset of int
        Ids of the special tokens among the rows read.
    runs : TokenRuns or None
        Made with the tokens by :func:`tokenize_text`; None where a text was made without them
        (:attr:`token_runs` makes them then).
    """

    text: str
    tokens: tuple[Token, ...]
    vocab_size: int
    limit: int = MAX_TEXT_CHARS
    error: TokenizeError | None = None
    counts: Mapping[int, int] = field(default_factory=dict)
    n_words: int = 0
    rows_read: int = 0
    problems: tuple[ProblemGroup, ...] = ()
    family: PieceFamily = PieceFamily.PLAIN
    special_ids: frozenset[int] = frozenset()
    runs: TokenRuns | None = field(default=None, compare=False)  # follows from the tokens

    @property
    def token_runs(self) -> TokenRuns:
        """:attr:`runs`, made now if the text was made without them."""
        return self.runs if self.runs is not None else token_runs(self.tokens)

    @property
    def truncated(self) -> bool:
        """The text is longer than :attr:`limit`: only its start was tokenized."""
        return len(self.text) > self.limit

    @property
    def tokenized_chars(self) -> int:
        return min(len(self.text), self.limit)

    def in_range(self, token_id: int) -> bool:
        """Whether ``token_id`` names a row of the table."""
        return 0 <= int(token_id) < self.vocab_size

    @property
    def n_bad(self) -> int:
        """Tokens that name no row of the table."""
        return sum(g.count for g in self.problems)

    @property
    def readable(self) -> bool:
        """The table can read this text: no tokenizer failure, and some token
        names a row (or there are no tokens). English typed on a table of ids
        is not readable; "5 abc" is, with one bad token."""
        return self.error is None and (not self.tokens or self.rows_read > 0)

    def shown_piece(self, token: Token) -> DisplayPiece:
        """What ``token``'s piece stands for (see :func:`pieces.display_piece`)."""
        return display_piece(token.piece, self.family)

    def problem_label(self, token: Token) -> str:
        """A few words on why ``token`` names no row ("" when it does)."""
        return problem_label(token, self.vocab_size)

    def problem_message(self, token: Token) -> str:
        """A sentence on why ``token`` names no row ("" when it does)."""
        return problem_message(token, self.vocab_size)

    def problem_lines(self) -> list[str]:
        """One line per kind of bad token, for the summary under the chips."""
        return [g.sentence(self.vocab_size) for g in self.problems]

    def ids(self) -> np.ndarray:
        """The ids in text order, int64 of shape (n,); a token with a problem
        has -1 or an id past the table there: check :attr:`Token.ok`."""
        return np.fromiter((t.id for t in self.tokens), dtype=np.int64, count=len(self.tokens))

    def distinct_ids(self, include_special: bool = False) -> list[int]:
        """Ids that are rows of the table, once each, in order of first appearance.

        From :attr:`counts` (made with the tokens, in the worker): a click on a
        13,000-token text must not walk every token again."""
        if include_special:
            return list(self.counts)
        return [i for i in self.counts if i not in self.special_ids]

    def position_of(self, token_id: int) -> int:
        """Position of the first token with ``token_id``, or -1."""
        return next((t.position for t in self.tokens if t.id == token_id and t.ok), -1)

    def word_pieces(self, position: int) -> tuple[Token, ...]:
        """All pieces of the word the token at ``position`` belongs to, in
        order (just that token for special tokens; () for a bad position)."""
        tokens = self.tokens
        if not 0 <= position < len(tokens):
            return ()
        word = tokens[position].word
        if word is None:
            return (tokens[position],)
        lo = hi = position
        while lo > 0 and tokens[lo - 1].word == word:
            lo -= 1
        while hi + 1 < len(tokens) and tokens[hi + 1].word == word:
            hi += 1
        return tokens[lo : hi + 1]

    def first_selectable(self) -> int:
        """The first typed (not special) token that names a row, else 0 (-1 if no tokens)."""
        if not self.tokens:
            return -1
        for t in self.tokens:
            if not t.special and t.ok and self.in_range(t.id):
                return t.position
        return 0


def tokenize_text(tokenizer: Tokenizer, text: str, vocab_size: int, limit: int = MAX_TEXT_CHARS) -> TokenizedText:
    """Tokenize the first ``limit`` characters of ``text``; never raises for a bad text.

    Tokens that name no row of a ``vocab_size``-row table are kept and
    flagged (:func:`tokens.mark_rows`); they are counted apart.

    Parameters
    ----------
    tokenizer : Tokenizer
        The table's tokenizer.
    text : str
        Any text, however long, with any characters.
    vocab_size : int
        V, the table's rows (ids at or past it are flagged by the views).
    limit : int
        Characters tokenized at most.

    Returns
    -------
    TokenizedText
        With ``error`` set (and no tokens) when the tokenizer fails on the
        text; a failure of the tokenizer library (even a Rust panic, which is
        a BaseException) becomes a TokenizeError.
    """
    text = text or ""
    tokens: tuple[Token, ...] = ()
    error: TokenizeError | None = None
    if text:
        try:
            tokens = mark_rows(tokenizer.encode(text[:limit]), vocab_size)
        except TokenizeError as exc:
            error = exc
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken tokenizer must not take the app down
            detail = " ".join(str(exc).split()) or type(exc).__name__
            error = TokenizeError(f"the tokenizer failed on this text ({detail}); try a shorter or plainer text")
    counts: dict[int, int] = {}
    for t in tokens:
        if t.problem is None:
            counts[t.id] = counts.get(t.id, 0) + 1
    n_words = len(text[:limit].split()) if error is None else 0
    family = getattr(tokenizer, "family", PieceFamily.PLAIN)
    special = frozenset(t.id for t in tokens if t.special and t.problem is None)
    return TokenizedText(text, tokens, int(vocab_size), int(limit), error, counts, n_words, len(counts),
                         group_problems(tokens), family, special, token_runs(tokens))


def tokenizer_family(tokenizer: Tokenizer, spec: str = "") -> str:
    """Which texts a tokenizer reads: ``ids`` (tables without a tokenizer),
    ``names:SPEC`` (a toy table's own words) or ``text`` (any real tokenizer).

    A text typed for one family means nothing to another, so the window
    remembers one text per family.
    """
    from explorer.core.tokens.tokenize import IdTokenizer, NameTokenizer

    if isinstance(tokenizer, IdTokenizer):
        return "ids"
    if isinstance(tokenizer, NameTokenizer):
        return f"names:{spec}"
    return "text"
