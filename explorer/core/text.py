"""A text and its tokens for one table: what the token strip, the inspector
and every view read, computed once (in a worker for long texts). No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .tokens import MAX_TEXT_CHARS, Token, TokenizeError, Tokenizer

__all__ = ["TokenizedText", "tokenize_text", "tokenizer_family", "INLINE_CHARS"]

#: texts up to this many characters are tokenized on the spot (well under a
#: millisecond); longer ones in a worker, so a pasted book never blocks
INLINE_CHARS = 2_000


@dataclass(frozen=True)
class TokenizedText:
    """The tokens of a text for a table of ``vocab_size`` rows.

    Attributes
    ----------
    text : str
        The whole text as the user gave it.
    tokens : tuple of Token
        Tokens of ``text[:limit]`` in order (empty when ``error`` is set).
    vocab_size : int
        Rows of the table the ids refer to (V).
    limit : int
        Characters tokenized at most; the rest of a longer text is not.
    error : TokenizeError or None
        Why the text could not be tokenized for this table.
    counts : mapping int -> int
        How often each id occurs.
    n_words : int
        Words of the text (pieces of one word count once; special tokens none).
    rows_read : int
        Distinct ids that are rows of the table (0 <= id < V): the rows a
        lookup of this text reads.
    """

    text: str
    tokens: tuple[Token, ...]
    vocab_size: int
    limit: int = MAX_TEXT_CHARS
    error: TokenizeError | None = None
    counts: Mapping[int, int] = field(default_factory=dict)
    n_words: int = 0
    rows_read: int = 0

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

    def ids(self) -> np.ndarray:
        """The ids in text order, int64 of shape (n,)."""
        return np.fromiter((t.id for t in self.tokens), dtype=np.int64, count=len(self.tokens))

    def distinct_ids(self, include_special: bool = False) -> list[int]:
        """Ids that are rows of the table, once each, in order of first appearance."""
        seen = dict.fromkeys(
            t.id for t in self.tokens if (include_special or not t.special) and self.in_range(t.id)
        )
        return list(seen)

    def position_of(self, token_id: int) -> int:
        """Position of the first token with ``token_id``, or -1."""
        return next((t.position for t in self.tokens if t.id == token_id), -1)

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
            if not t.special and self.in_range(t.id):
                return t.position
        return 0


def tokenize_text(tokenizer: Tokenizer, text: str, vocab_size: int, limit: int = MAX_TEXT_CHARS) -> TokenizedText:
    """Tokenize the first ``limit`` characters of ``text``; never raises for a bad text.

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
        With ``error`` set (and no tokens) when the tokenizer refuses the text
        or fails on it; a failure of the tokenizer library (even a Rust panic,
        which is a BaseException) becomes a TokenizeError.
    """
    text = text or ""
    tokens: tuple[Token, ...] = ()
    error: TokenizeError | None = None
    if text:
        try:
            tokens = tuple(tokenizer.encode(text[:limit]))
        except TokenizeError as exc:
            error = exc
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken tokenizer must not take the app down
            detail = " ".join(str(exc).split()) or type(exc).__name__
            error = TokenizeError(f"the tokenizer failed on this text ({detail}); try a shorter or plainer text")
    counts: dict[int, int] = {}
    for t in tokens:
        counts[t.id] = counts.get(t.id, 0) + 1
    n_words = len({t.word for t in tokens if t.word is not None})
    rows_read = sum(1 for i in counts if 0 <= i < vocab_size)
    return TokenizedText(text, tokens, int(vocab_size), int(limit), error, counts, n_words, rows_read)


def tokenizer_family(tokenizer: Tokenizer, spec: str = "") -> str:
    """Which texts a tokenizer reads: ``ids`` (tables without a tokenizer),
    ``names:SPEC`` (a toy table's own words) or ``text`` (any real tokenizer).

    A text typed for one family means nothing to another, so the window
    remembers one text per family.
    """
    from .tokens import IdTokenizer, NameTokenizer

    if isinstance(tokenizer, IdTokenizer):
        return "ids"
    if isinstance(tokenizer, NameTokenizer):
        return f"names:{spec}"
    return "text"
