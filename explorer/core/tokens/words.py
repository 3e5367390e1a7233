"""What a typed word names: the one resolver of the ``analogy`` command, the
window's analogy panel, the token search boxes, custom projection axes, the
"why vectors" page and the tour, so that no two of them read a word
differently. :func:`~explorer.core.tokens.word_row.word_row` says why a
word names no row. No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator

from explorer.core.tokens.pieces import raw_piece_of

__all__ = ["clean_piece", "candidate_ids", "resolve_word", "find_token_ids", "selected_word", "position_of_word"]

#: marks a piece may carry before the word it spells: byte-level BPE's word start,
#: SentencePiece's word start, WordPiece's continuation, a plain leading space
_PIECE_PREFIXES = ("Ġ", "▁", "##", " ")
#: pieces scanned for ones that start with the typed text
_PREFIX_SCAN = 100_000


def clean_piece(piece: str) -> str:
    """A piece without its word-start or continuation mark, lower-cased: 'Ġbank' -> 'bank'."""
    for p in _PIECE_PREFIXES:
        if piece.startswith(p):
            piece = piece[len(p):]
    return piece.strip().lower()


def candidate_ids(tokenizer, word: str) -> Iterator[int]:
    """Every id ``word`` may name, best first (repeats possible; not checked
    against a table's rows: :func:`resolve_word` is).

    In order:

    1. ``#123``: the id 123;
    2. the piece whose shown form was typed (``␣bank`` or ``é`` picked from a
       completion list; see :func:`~explorer.core.tokens.pieces.raw_piece_of`):
       in a byte-level vocabulary the text "é" is the piece "Ã©", while the
       piece "é" is the lone byte E9;
    3. the piece as typed, then with a word-start mark (``Ġ`` byte-level BPE,
       ``▁`` SentencePiece), then the same lower-cased;
    4. the one non-special piece the tokenizer makes of the word, when that
       piece is the word (:func:`clean_piece`);
    5. a number: the id itself.
    """
    q = (word or "").strip()
    if not q:
        return
    if q.startswith("#") and q[1:].isdecimal():
        yield int(q[1:])
    raw = raw_piece_of(q, tokenizer.family)
    for cand in dict.fromkeys((raw, q, "Ġ" + q, "▁" + q, q.lower(), "Ġ" + q.lower(), "▁" + q.lower())):
        try:
            tid = tokenizer.id_of(cand)
        except Exception:  # a tokenizer that cannot look the string up knows no such piece
            tid = None
        if tid is not None:
            yield int(tid)
    try:
        toks = [t for t in tokenizer.encode(q) if not t.special]
    except Exception:
        toks = []
    if len(toks) == 1 and clean_piece(toks[0].piece) == q.lower():
        yield int(toks[0].id)
    if q.isdecimal():
        yield int(q)


def resolve_word(tokenizer, word: str, rows: int | None = None) -> int | None:
    """The id ``word`` names: the first of :func:`candidate_ids` that is an id
    (of a table of ``rows`` rows, when given), else None.

    Parameters
    ----------
    tokenizer : Tokenizer
    word : str
        A word, a piece as the vocabulary spells it or as the app shows it, or ``#id``.
    rows : int, optional
        The table's rows; candidates at or past them are passed over.
    """
    for tid in candidate_ids(tokenizer, word):
        if tid >= 0 and (rows is None or tid < rows):
            return tid
    return None


def find_token_ids(table, query: str, limit: int = 20, prefix: bool = True) -> list[int]:
    """Token ids matching what the user typed in a search box, best first.

    First every id :func:`candidate_ids` gives (so the first is
    :func:`resolve_word`'s whenever the query names a row), then (with
    ``prefix``) pieces that start with the query, a lazy scan of up to
    100,000 pieces.
    """
    q = (query or "").strip()
    if not q:
        return []
    out: list[int] = []

    def add(i: int) -> None:
        if 0 <= i < table.vocab_size and i not in out:
            out.append(i)

    for tid in candidate_ids(table.tokenizer, q):
        add(tid)
    if prefix and len(out) < limit:
        # a lazy scan: it stops as soon as enough pieces matched
        allp = (table.piece(i) for i in range(min(table.vocab_size, _PREFIX_SCAN)))
        raw = raw_piece_of(q, table.tokenizer.family)
        starts = tuple(dict.fromkeys((q.lower(), raw.lower().lstrip("ġ▁#"))))
        for i, p in enumerate(allp):
            if len(out) >= limit:
                break
            if p.lower().lstrip("ġ▁#").startswith(starts):
                add(i)
    return out[:limit]


def selected_word(tokens, text: str, position: int) -> tuple[str, int] | None:
    """The word the token at ``position`` of a text spells, and where it starts:
    what a selection carries to another model (None for no token or a special one).

    Parameters
    ----------
    tokens : sequence of Token
    text : str
        The text they were made from.
    position : int
    """
    if not 0 <= position < len(tokens) or tokens[position].special:
        return None
    tok = tokens[position]
    word = tok.text_in(text).strip() or clean_piece(tok.piece)
    return (word, tok.start) if word else None


def position_of_word(tokenizer, tokens, word: str, start: int = 0) -> int:
    """The position among ``tokens`` (another model's, same text) of the token
    :func:`candidate_ids` reads ``word`` as, nearest to character ``start``;
    the best candidate that occurs wins. -1 when the word names none of them
    (split into several pieces, or unknown to this vocabulary)."""
    for tid in dict.fromkeys(candidate_ids(tokenizer, word)):
        hits = [t for t in tokens if t.id == tid and t.ok and not t.special]
        if hits:
            return min(hits, key=lambda t: abs(t.start - start)).position
    return -1
