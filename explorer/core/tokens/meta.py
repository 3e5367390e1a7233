"""What every token of a vocabulary is, from its tokenizer and its row: the
metadata the projection colours by. No Qt here.

* ``kind``: special (the tokenizer's own: [CLS], <|endoftext|>), byte (a
  piece holding part of a UTF-8 character, or SentencePiece's byte
  fallback), whitespace, number, punctuation (punctuation and symbols),
  continuation (a piece inside a word: WordPiece ``##ing``, a byte-level or
  SentencePiece piece without its word-start space) or word start;
* ``length``: characters of the text the piece stands for, without the
  word-start space or the ``##`` mark;
* ``norm``: the row's L2 norm (NaN for a row that is not finite).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.tokens.pieces import PieceFamily, display_piece, piece_bytes
from explorer.core.tokens.search import PieceIndex

__all__ = ["KINDS", "TokenMetadata", "piece_kind", "iter_token_metadata"]

#: kind code -> name, in the order a legend lists them
KINDS = ("word start", "continuation", "number", "punctuation", "whitespace", "special", "byte")
_CODE = {name: i for i, name in enumerate(KINDS)}
_BLOCK = 8192
#: pieces read between two yields: a block of 8,192 was 220 ms of Python (SmolLM2), and a turn of the
#: window that began inside it shared the GIL with it to the end of the block; a worker gives way to
#: the window only between blocks
_PIECES_BLOCK = 1024


@dataclass(frozen=True, eq=False)
class TokenMetadata:
    """Per-token metadata of one table.

    Attributes
    ----------
    spec : str
        The table's spec.
    kind : ndarray (V,) int8
        Index into :data:`KINDS`.
    length : ndarray (V,) int32
    norm : ndarray (V,) float32
    pieces : PieceIndex or None
        The shown pieces, joined for :func:`explorer.core.tokens.search.search_pieces`.
    """

    spec: str
    kind: np.ndarray
    length: np.ndarray
    norm: np.ndarray
    pieces: PieceIndex | None = None

    def counts(self) -> dict[str, int]:
        """Tokens of each kind, in :data:`KINDS` order."""
        n = np.bincount(self.kind.astype(np.int64), minlength=len(KINDS))
        return {name: int(n[i]) for i, name in enumerate(KINDS)}


def _text(raw: str, family: PieceFamily) -> tuple[str | None, bool]:
    """(the text the piece stands for, None for partial bytes; whether it continues a word)."""
    if family is PieceFamily.WORDPIECE:
        return (raw[2:], True) if raw.startswith("##") and len(raw) > 2 else (raw, False)
    data = piece_bytes(raw, family)
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None, False
    else:
        text = raw.replace("▁", " ") if family is PieceFamily.SENTENCEPIECE else raw
    if family in (PieceFamily.BYTE_LEVEL, PieceFamily.SENTENCEPIECE):
        return text, not text[:1].isspace()
    return text, False


def piece_kind(raw: str, family: PieceFamily, special: bool = False) -> tuple[int, int]:
    """(kind code into :data:`KINDS`, length in characters) of one stored piece."""
    if special:
        return _CODE["special"], len(raw)
    text, inside = _text(raw, family)
    if text is None:
        return _CODE["byte"], 0
    core = text.strip()
    if not core:
        return _CODE["whitespace"], len(text)
    if not core.isprintable():  # a control byte (byte fallback, or a byte-level piece)
        return _CODE["byte"], len(text)
    if core.isdigit():
        kind = "number"
    elif all(unicodedata.category(c)[0] in "PS" for c in core):
        kind = "punctuation"
    else:
        kind = "continuation" if inside else "word start"
    word = text[1:] if text[:1].isspace() and not inside else text
    return _CODE[kind], len(word)


def iter_token_metadata(table) -> Iterator[tuple[float, str]]:
    """Kind, length and norm of every row of ``table`` (a generator for a
    worker: yields progress, returns a :class:`TokenMetadata`)."""
    v = int(table.vocab_size)
    tok = table.tokenizer
    family = getattr(tok, "family", PieceFamily.PLAIN)
    special = getattr(tok, "special_ids", frozenset())
    kind = np.zeros(v, np.int8)
    length = np.zeros(v, np.int32)
    # a block's array at a time, not one of every row: np.empty(10,000,000, object) fills fresh memory with
    # None holding the GIL (up to 174 ms beside a thread ticking every millisecond); not a list of the strings
    # either (see explorer.core.arrays.object_array)
    shown: list[np.ndarray] = []
    yield 0.0, "Reading the pieces…"
    for start in range(0, v, _PIECES_BLOCK):
        part = np.empty(min(_PIECES_BLOCK, v - start), object)
        for i in range(start, start + len(part)):
            raw = table.piece(i)
            kind[i], length[i] = piece_kind(raw, family, i in special)
            part[i - start] = display_piece(raw, family).text
        shown.append(part)
        yield 0.5 * min(1.0, (start + _PIECES_BLOCK) / v), "Reading the pieces…"
    norm = np.empty(v, np.float32)
    for start, blk in table.iter_blocks(_BLOCK):
        with np.errstate(over="ignore", invalid="ignore"):
            norm[start : start + len(blk)] = np.linalg.norm(blk.astype(np.float32), axis=1)
        yield 0.5 + 0.5 * (start + len(blk)) / v, "Measuring the rows…"
    norm[~np.isfinite(norm)] = np.nan
    return TokenMetadata(getattr(table, "spec", ""), kind, length, norm,
                         PieceIndex.of((piece for part in shown for piece in part), v))
