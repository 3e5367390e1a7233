"""The tables a Magikarp report lists beside its ranking: single-byte tokens
(and the bytes valid UTF-8 never holds), special tokens, unreachable tokens
split by what their text encodes to, and for a candidate the longer tokens
that contain it. No Qt here.

A row that no text selects (unreachable, partial UTF-8) or that only the
tokenizer itself writes (special) is listed apart, never ranked among the
tokens a text can reach: a ranking should compare rows that training could
have reached in the same way.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.arrays import join_pieces, piece_offsets
from explorer.core.errors import is_rust_panic
from explorer.core.jobs import run_to_end
from explorer.core.tokens.pieces import PieceFamily, piece_bytes

__all__ = ["NEVER_IN_UTF8", "ByteToken", "UnreachableToken", "unreachable_tokens", "contained_in",
           "iter_contained_in", "iter_byte_tokens", "byte_kind", "STEP_PIECES"]

#: bytes that valid UTF-8 never holds: C0 and C1 (over-long two-byte forms)
#: and F5 to FF (past U+10FFFF); a token made of one of them never occurs in text
NEVER_IN_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])
#: pieces looked through between two chances to stop (the single-byte tokens here, the unused ones in
#: explorer.core.health.reference): about 0.25 s
STEP_PIECES = 1 << 20


def byte_kind(value: int) -> str:
    """"ascii", "never in UTF-8" or "UTF-8 part" for one byte."""
    if value < 0x80:
        return "ascii"
    return "never in UTF-8" if value in NEVER_IN_UTF8 else "UTF-8 part"


@dataclass(frozen=True)
class ByteToken:
    """A token that stands for exactly one byte.

    Attributes
    ----------
    id : int
    value : int
        The byte, 0..255.
    kind : str
        :func:`byte_kind` of it.
    """

    id: int
    value: int
    kind: str

    def as_json(self) -> dict:
        return {"id": self.id, "byte": f"0x{self.value:02X}", "kind": self.kind}


def iter_byte_tokens(pieces: Sequence[str], family: PieceFamily) -> Generator[tuple[float, str], None, list[ByteToken]]:
    """The single-byte tokens of a vocabulary, in id order: byte-level pieces
    of one byte (GPT-2's table of 256 characters) and byte-fallback pieces
    ``<0xNN>``. Word-list and WordPiece vocabularies have none. A generator
    for a job, yielding after every ``STEP_PIECES`` pieces (10,000,000: 1.6 s)."""
    out = []
    for at in range(0, len(pieces), STEP_PIECES):
        yield at / len(pieces), "Looking for the single-byte tokens…"
        for i in range(at, min(len(pieces), at + STEP_PIECES)):
            raw = pieces[i]
            if not raw or len(raw) > 6:
                continue
            data = piece_bytes(raw, family)
            if data is not None and len(data) == 1:
                out.append(ByteToken(i, data[0], byte_kind(data[0])))
    return out


@dataclass(frozen=True)
class UnreachableToken:
    """A token whose text encodes to other ids.

    Attributes
    ----------
    id : int
    encodes_to : tuple of int
        What its decoded text encodes to instead.
    """

    id: int
    encodes_to: tuple[int, ...]

    @property
    def single(self) -> bool:
        """Its text encodes to one other token (a duplicate entry), not several."""
        return len(self.encodes_to) == 1

    def as_json(self) -> dict:
        return {"id": self.id, "encodes_to": list(self.encodes_to),
                "kind": "single-token" if self.single else "multi-token"}


def unreachable_tokens(tokenizer, ids: Sequence[int]) -> list[UnreachableToken]:
    """What each unreachable id's text encodes to (one batch through the
    tokenizer; ids it cannot decode encode to nothing)."""
    ids = [int(i) for i in ids]
    if not ids:
        return []
    backend = getattr(tokenizer, "backend", None)
    if backend is not None:
        try:
            texts = backend.decode_batch([[i] for i in ids], skip_special_tokens=False)
            encs = backend.encode_batch(texts, add_special_tokens=False)
            return [UnreachableToken(i, tuple(int(x) for x in e.ids)) for i, e in zip(ids, encs)]
        except BaseException as exc:  # noqa: B036 - a Rust panic is a BaseException
            if not isinstance(exc, Exception) and not is_rust_panic(exc):
                raise
    out = []
    for i in ids:
        try:
            got = tuple(t.id for t in tokenizer.encode(tokenizer.piece(i)))
        except Exception:  # noqa: BLE001 - a piece the tokenizer refuses encodes to nothing
            got = ()
        out.append(UnreachableToken(i, got))
    return out


#: how much of the joined pieces one ``str.find`` searches (it holds the GIL while it searches)
FIND_SPAN = 1 << 20


def _find(joined: str, needle: str, start: int, span: int = FIND_SPAN) -> int:
    """``joined.find(needle, start)``, a span of ``joined`` at a time: one search of the 79 MB of a
    10,000,000-row table's pieces held the GIL for 100-130 ms, and a health check made hundreds (the
    window's thread waited through each); a span takes about a millisecond."""
    end = len(joined)
    while start < end:
        at = joined.find(needle, start, min(end, start + span + len(needle)))  # a match that begins in the span
        if at != -1:
            return at
        start += span
    return -1


def iter_contained_in(pieces: Sequence[str], ids: Sequence[int], limit: int = 5
                      ) -> Generator[tuple[float, str], None, dict[int, tuple[int, ...]]]:
    """For each id, up to ``limit`` tokens of higher id whose stored piece
    contains its piece (a longer token built on it by later merges): a
    generator for a job, yielding after each id; returns the dict.

    One joined string is searched with ``str.find`` (:func:`_find`), so a
    thousand candidates over a 128 K vocabulary take milliseconds, not a
    Python loop over every pair; on 10,000,000 pieces, 200 candidates took
    4 s, now a candidate a step.
    """
    sep = "\x00"
    yield 0.0, "Finding the longer tokens built on the candidates…"
    joined = join_pieces(sep, pieces, ends=True)
    starts = piece_offsets(pieces)  # where piece k starts in joined, minus 1 (joined begins with sep)
    out: dict[int, tuple[int, ...]] = {}
    for n, i in enumerate(ids):
        yield n / max(1, len(ids)), "Finding the longer tokens built on the candidates…"
        needle = pieces[int(i)] if 0 <= int(i) < len(pieces) else ""
        found: list[int] = []
        if needle and sep not in needle:
            at = _find(joined, needle, int(starts[int(i) + 1]) + 1)  # past piece i itself
            while at != -1 and len(found) < limit:
                k = int(np.searchsorted(starts, at, side="right")) - 1
                if k > int(i) and (not found or found[-1] != k) and len(pieces[k]) > len(needle):
                    found.append(k)
                at = _find(joined, needle, at + 1)
        out[int(i)] = tuple(found)
    return out


def contained_in(pieces: Sequence[str], ids: Sequence[int], limit: int = 5) -> dict[int, tuple[int, ...]]:
    """:func:`iter_contained_in` run to the end."""
    return run_to_end(iter_contained_in(pieces, ids, limit))
