"""Search the shown pieces of a vocabulary by substring or regular
expression, all of them at once. No Qt here.

The pieces are joined once into one string, one piece a line, so a search
is a pass of ``re`` in C over :data:`SEARCH_SPAN` pieces at a time (each match
replaced by a mark, then the marks' lines found by numpy: 10-30 ms for
50,000 pieces) instead of a Python loop over the tokens. A pattern that
could see past the end of its line (lookarounds, ``\\A``/``\\Z``, a match
holding the line break) is checked piece by piece instead, so every
answer equals ``re.search(pattern, piece)`` on each piece.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from explorer.core.arrays import join_pieces, object_array, piece_offsets, unique_sorted
from explorer.core.errors import ExplorerError
from explorer.core.jobs import run_to_end

__all__ = ["PatternError", "PieceIndex", "SearchHits", "SEARCH_SPAN", "iter_search_pieces", "search_pieces"]

_SEP = "\n"
_MARK = "\x1f"
#: what lets a pattern see past its line: lookarounds, whole-string anchors, inline flags
_SEES_PAST_LINE = re.compile(r"\(\?[^:P]|\\[AZ]")
#: pieces searched in one pass of ``re``, which holds the GIL while it runs: one pass over the 10,000,000
#: pieces of a random table held it 114-572 ms (a window typing a query stood still that long)
SEARCH_SPAN = 262_144


class PatternError(ExplorerError):
    """A regular expression that does not compile; the message says where and why."""


@dataclass(frozen=True, eq=False)
class PieceIndex:
    """The pieces of ``n`` tokens joined for searching.

    Attributes
    ----------
    pieces : ndarray (n,) of str (dtype object)
        The shown piece of each token, by id (line breaks shown as ``↵``); an array, which
        the garbage collector does not walk (:func:`~explorer.core.arrays.object_array`).
    text : str
        The pieces joined, one a line.
    starts : ndarray (n,) int64
        Where each piece starts in ``text``.
    """

    pieces: np.ndarray
    text: str
    starts: np.ndarray

    @classmethod
    def of(cls, pieces: Iterable[str], n: int | None = None) -> PieceIndex:
        """The index of ``pieces`` (a sequence, or an iterable of ``n`` of them)."""
        n = len(pieces) if n is None else n
        clean = object_array((str(p).replace(_SEP, "↵").replace(_MARK, "␟") for p in pieces), n)
        return cls(clean, join_pieces(_SEP, clean), piece_offsets(clean)[:-1])

    def __len__(self) -> int:
        return len(self.pieces)


@dataclass(frozen=True)
class SearchHits:
    """The tokens whose piece matches a query.

    Attributes
    ----------
    query : str
    regex : bool
    ids : ndarray (h,) int64
        Matching ids, ascending.
    """

    query: str
    regex: bool
    ids: np.ndarray

    @property
    def count(self) -> int:
        return len(self.ids)

    def mask(self, n: int) -> np.ndarray:
        """(n,) bool over ids 0..n-1: True for a hit."""
        out = np.zeros(int(n), bool)
        out[self.ids[self.ids < n]] = True
        return out


def _compile(query: str, regex: bool, case: bool) -> re.Pattern:
    flags = 0 if case else re.IGNORECASE
    if not regex:
        return re.compile(re.escape(query), flags)
    try:
        return re.compile(query, flags)
    except re.error as exc:
        where = f" at character {exc.pos + 1}" if exc.pos is not None else ""
        raise PatternError(f"Not a valid regular expression{where}: {exc.msg}") from None
    except (RecursionError, OverflowError, ValueError) as exc:
        raise PatternError(f"Not a valid regular expression: {exc}") from None


def search_pieces(index: PieceIndex, query: str, regex: bool = False, case: bool = False) -> SearchHits:
    """The ids whose shown piece contains ``query`` (a substring, or a
    regular expression matched anywhere in the piece, as ``re.search``).

    Case is ignored unless ``case``. An empty query matches nothing.
    Raises :class:`PatternError` for a regular expression that does not compile.
    """
    return run_to_end(iter_search_pieces(index, query, regex, case))


def _piece_by_piece(index: PieceIndex, query: str, regex: bool, rx: re.Pattern) -> SearchHits:
    found = np.fromiter((rx.search(p) is not None for p in index.pieces), bool, len(index))
    return SearchHits(query, regex, np.flatnonzero(found).astype(np.int64))


def _marked_lines(rx: re.Pattern, text: str, lines: int) -> np.ndarray | None:
    """The lines of ``text`` (``lines`` of them) where ``rx`` matches, ascending; None when a match ran
    into the next line and took its line break. Every match becomes a mark, in C; then the marks' lines
    are found by numpy."""
    codes = np.frombuffer(rx.sub(_MARK, text).encode("utf-32-le"), np.uint32)
    breaks = np.flatnonzero(codes == ord(_SEP))
    if len(breaks) != lines - 1:
        return None
    return unique_sorted(np.searchsorted(breaks, np.flatnonzero(codes == ord(_MARK))))


def iter_search_pieces(index: PieceIndex, query: str, regex: bool = False, case: bool = False,
                       span: int = SEARCH_SPAN):
    """:func:`search_pieces` as a job for a worker: ``span`` pieces a pass of ``re``, yielding after each
    (returns the SearchHits)."""
    yield 0.0, "Searching the pieces…"
    if not query:
        return SearchHits(query, regex, np.zeros(0, np.int64))
    rx = _compile(query, regex, case)
    if regex and _SEES_PAST_LINE.search(query) or rx.search(""):
        return _piece_by_piece(index, query, regex, rx)  # may see the line breaks, or matches everything
    if regex:
        rx = re.compile(rx.pattern, rx.flags | re.MULTILINE)  # ^ and $ at each piece's ends
    n, span, found = len(index), max(1, int(span)), []
    for first in range(0, n, span):
        stop = min(n, first + span)
        end = int(index.starts[stop]) - 1 if stop < n else len(index.text)  # up to the line break before stop
        lines = _marked_lines(rx, index.text[int(index.starts[first]) : end], stop - first)
        if lines is None:
            return _piece_by_piece(index, query, regex, rx)
        found.append(lines + first)
        yield stop / n, f"Searching the pieces… {stop:,} of {n:,}"
    return SearchHits(query, regex, np.concatenate(found).astype(np.int64) if found else np.zeros(0, np.int64))
