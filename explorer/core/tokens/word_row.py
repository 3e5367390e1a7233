"""The one row a typed word names, or why it names none. No Qt here.

A word names a row when the vocabulary holds it as one token (the piece
itself, or the single piece its tokenizer makes of it). An unknown word
(the tokenizer's <unk>) or a word split into several pieces has no row of
its own: FACTS.md, "a word split into several subword pieces has no single
row".
"""

from __future__ import annotations

from explorer.core.errors import ExplorerError
from explorer.core.tokens.words import resolve_word

__all__ = ["NotOneRow", "word_row"]


class NotOneRow(ExplorerError, ValueError):
    """A word is not one row of the table; the message names the word and says why."""


def word_row(table, word: str) -> int:
    """The id of the row ``word`` names in ``table``.

    Parameters
    ----------
    table : EmbeddingTable
    word : str
        A word, a piece as the vocabulary spells it or as the app shows it
        ("king", "Ġking", "␣king", "##ness"), or ``#id``: read by
        :func:`~explorer.core.tokens.words.resolve_word`, as everywhere.

    Returns
    -------
    int
        A row id, 0 <= id < table.vocab_size.

    Raises
    ------
    NotOneRow
        The word is empty, unknown to the tokenizer, split into several
        pieces, or its id lies past the table's rows.
    """
    tokenizer = table.tokenizer
    if not word.strip():
        raise NotOneRow(f"{word!r} is empty: give a word of the vocabulary")
    tid = resolve_word(tokenizer, word, rows=table.vocab_size)
    if tid is None:
        past = resolve_word(tokenizer, word)
        if past is not None:
            raise NotOneRow(f"{word!r} is token {past:,}, past the table's {table.vocab_size:,} rows")
        typed = [t for t in tokenizer.encode(word) if not (t.special and t.start == t.end)]
        if len(typed) > 1:
            pieces = " + ".join(t.piece for t in typed)
            raise NotOneRow(f"{word!r} is split into {len(typed)} pieces ({pieces}): it has no single row; "
                            f"give a word the vocabulary holds whole")
        if len(typed) == 1 and typed[0].problem is not None:
            raise NotOneRow(f"{word!r} names no row of this table ({typed[0].problem.value})")
        raise NotOneRow(f"{word!r} is not in the vocabulary of this table (its tokenizer reads it as unknown)")
    return tid
