"""Unique values without numpy's hash table, and groups of equal rows. No Qt here.

Since numpy 2.3, a plain ``np.unique(a)`` builds a hash set of the values.
That holds the GIL all along, and is slow on many distinct values: 4.8 s
for 4 M int64 on this project's machine, against 0.06 s for a sort, with
gaps of seconds in every other thread (the window's among them, while a
job runs). The sort numpy falls back on when indices are asked for, and
``np.lexsort``, let the GIL go. :func:`unique_sorted` gives numpy's result
that way; the project calls it instead of ``np.unique``
(tests/test_architecture.py), and groups equal rows with
:func:`iter_row_groups`, a job that hashes them.

And a vocabulary's worth of Python strings kept where the garbage collector
does not walk them (:func:`object_array`), joined a slice at a time
(:func:`join_pieces`) and freed a slice at a time (:func:`release_objects`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from explorer.core.jobs import run_to_end

__all__ = ["unique_sorted", "RowGroups", "iter_row_groups", "row_groups", "finite_bounds", "column_bounds",
           "object_array", "join_pieces", "piece_offsets", "release_objects", "SCATTER_ROWS", "JOIN_SLICE",
           "RELEASE_ROWS", "GROUP_ROWS"]

#: rows :func:`iter_row_groups` hashes or compares in one step of its job (16 columns: about 0.3 s)
GROUP_ROWS = 1 << 20
#: values a scatter (``a[index] = values``, which holds the GIL) writes at a time: about 10 ms
SCATTER_ROWS = 1 << 19
#: strings :func:`join_pieces` joins at a time (a join holds the GIL throughout): about 8 ms
JOIN_SLICE = 1 << 18
#: objects :func:`release_objects` frees at a time (freeing them holds the GIL): about 1 ms
RELEASE_ROWS = 1 << 16


def unique_sorted(values) -> np.ndarray:
    """``np.unique(values)``: the sorted distinct values, flattened; NaNs
    count as one value (numpy's ``equal_nan``)."""
    s = np.sort(np.asarray(values).reshape(-1), kind="stable")
    if len(s) == 0:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    if s.dtype.kind in "fc" and np.isnan(s[-1]):  # NaNs sort last: keep the first only
        nans = np.isnan(s)
        keep &= ~nans
        keep[int(np.argmax(nans))] = True
    return s[keep]


@dataclass(frozen=True, eq=False)
class RowGroups:
    """Rows grouped by equality (:func:`iter_row_groups`).

    Attributes
    ----------
    order : ndarray (n,) intp
        Row indices, group after group, ascending within each group.
    starts : ndarray (g + 1,) intp
        Group k is ``order[starts[k]:starts[k + 1]]``.
    """

    order: np.ndarray
    starts: np.ndarray

    @cached_property
    def inverse(self) -> np.ndarray:
        """(n,) intp each row's group, made when first asked for (the duplicate search never asks)."""
        place = np.repeat(np.arange(len(self.starts) - 1, dtype=np.intp), self.sizes)
        inverse = np.empty(len(self.order), dtype=np.intp)
        for at in range(0, len(self.order), SCATTER_ROWS):  # a scatter holds the GIL: a slice at a time
            inverse[self.order[at : at + SCATTER_ROWS]] = place[at : at + SCATTER_ROWS]
        return inverse

    @property
    def first(self) -> np.ndarray:
        """(g,) each group's lowest row index."""
        return self.order[self.starts[:-1]]

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)


def iter_row_groups(rows: np.ndarray, seed: int = 0, mix: np.ndarray | None = None
                    ) -> Generator[tuple[float, str], None, RowGroups]:
    """Groups of equal rows of a 2-D numeric array with no NaN (-0.0 equals 0.0): a generator for a
    job, yielding ``(fraction, message)`` after every :data:`GROUP_ROWS` rows of work; returns
    :class:`RowGroups`, groups in no particular order (but the same each time).

    Each row is hashed to 64 bits, the hashes sorted, and each row compared with the one before it
    in that order: rows of one hash that differ (a collision, ``mix`` of a test's choosing) are put in
    lexicographic order among themselves. ``np.unique(axis=0)`` sorts the rows themselves: 16 sorts
    of every row that ties on the first column, 23 s in one step on 10,000,000 rows of a one-column
    table's sketches (all of one direction), against 7 s this way, none of its steps over 1.4 s."""
    rows = np.asarray(rows)
    n, m = rows.shape
    if mix is None:
        mix = np.random.default_rng(seed).integers(1, 2**63, m, dtype=np.uint64) | np.uint64(1)
    hashes = np.empty(n, np.uint64)
    for at in range(0, n, GROUP_ROWS):
        hashes[at : at + GROUP_ROWS] = _row_hash(rows[at : at + GROUP_ROWS], mix)
        yield 0.4 * min(n, at + GROUP_ROWS) / max(n, 1), "Grouping equal rows…"
    order = np.argsort(hashes, kind="stable")  # ascending row index within a hash
    yield 0.6, "Grouping equal rows…"
    new = np.ones(n, dtype=bool)
    collided = np.zeros(n, dtype=bool)
    for at in range(1, n, GROUP_ROWS):
        here = order[at : at + GROUP_ROWS]
        before = order[at - 1 : at - 1 + len(here)]
        same = hashes[here] == hashes[before]
        differ = np.any(rows[here] != rows[before], axis=1)
        new[at : at + len(here)] = ~same
        collided[at : at + len(here)] = same & differ
        yield 0.6 + 0.2 * min(n, at + GROUP_ROWS) / n, "Grouping equal rows…"
    if collided.any():
        _split_collisions(rows, order, new, collided)
    return RowGroups(order, np.append(np.nonzero(new)[0], n))


def row_groups(rows: np.ndarray, seed: int = 0) -> RowGroups:
    """:func:`iter_row_groups` run to the end."""
    return run_to_end(iter_row_groups(rows, seed))


def _row_hash(block: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """(k,) uint64 hash of each row of ``block`` (k, m) from its values' bits (-0.0 as 0.0)."""
    if block.dtype.kind == "f":
        block = block + block.dtype.type(0.0)  # -0.0 + 0.0 is 0.0: equal numbers, equal bits
    bits = np.ascontiguousarray(block).view(f"u{block.dtype.itemsize}") if block.dtype.kind in "fiu" \
        else block.astype(np.uint64)
    h = np.zeros(len(block), np.uint64)
    for j in range(block.shape[1]):
        h += bits[:, j].astype(np.uint64) * mix[j]  # wraps around
        h ^= h >> np.uint64(29)
    return h


def _split_collisions(rows: np.ndarray, order: np.ndarray, new: np.ndarray, collided: np.ndarray) -> None:
    """Within each run of one hash where rows differ, put the rows in lexicographic order (ascending
    row index among equal rows) and start a group at each change of row (in place)."""
    runs = np.append(np.nonzero(new)[0], len(order))
    for k in unique_sorted(np.searchsorted(runs, np.nonzero(collided)[0], side="right") - 1):
        lo, hi = int(runs[k]), int(runs[k + 1])
        run = order[lo:hi]
        order[lo:hi] = run = run[_lexicographic_order(rows[run])]
        new[lo + 1 : hi] = np.any(rows[run[1:]] != rows[run[:-1]], axis=1)


def _lexicographic_order(rows: np.ndarray) -> np.ndarray:
    """``np.lexsort(rows.T[::-1])``, stable (equal rows keep their order).

    By the first column, then by all columns only among the rows that tie
    on it: a lexsort of 16 columns costs 16 sorts, and rows of real numbers
    rarely tie (128,256 x 16: 214 ms for the lexsort, 15 ms this way)."""
    n, m = rows.shape
    if m == 0:
        return np.arange(n)
    order = np.argsort(rows[:, 0], kind="stable")
    if m == 1 or n < 2:
        return order
    first = rows[order, 0]
    tie = np.zeros(n, dtype=bool)
    np.equal(first[1:], first[:-1], out=tie[1:])
    tie[:-1] |= tie[1:]  # both ends of each equal pair
    if tie.any():
        # the tied rows keep their places as a set (they are runs of one first value): reorder them within
        at = np.nonzero(tie)[0]
        tied = order[at]
        order[at] = tied[np.lexsort(rows[tied].T[::-1])]
    return order


def finite_bounds(points) -> tuple[np.ndarray, np.ndarray] | None:
    """(lo, hi), each (k,): the least and greatest value of each column over the rows of ``points``
    (n, k) whose values are all finite; None when no row is.

    Column by column: numpy reduces down the first axis of an (n, 2) array an element at a time,
    8.5 ms for ``min(axis=0)`` over 256,000 points against 0.1 ms for a contiguous column.
    """
    points = np.asarray(points)
    if points.ndim != 2 or not len(points):
        return None
    return column_bounds([np.ascontiguousarray(points[:, j]) for j in range(points.shape[1])])


def column_bounds(columns) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`finite_bounds` of the rows made by ``columns`` (k arrays (n,), contiguous, as a
    caller that keeps its points by column has them)."""
    if not len(columns) or not len(columns[0]):
        return None
    finite = np.isfinite(columns[0])
    for col in columns[1:]:
        finite &= np.isfinite(col)
    if not finite.all():
        if not finite.any():
            return None
        columns = [col[finite] for col in columns]
    return np.array([col.min() for col in columns]), np.array([col.max() for col in columns])


def object_array(items: Iterable, n: int) -> np.ndarray:
    """The ``n`` objects of ``items`` (a vocabulary's pieces) in a numpy array of dtype object.

    A list or a tuple of them is a container the garbage collector walks, item by item, in each
    collection of its generation while it is young, holding the GIL in whichever thread collects:
    135 ms a collection for 10,000,000 pieces, in the window's thread as often as not (walks of a
    random 10,000,000 x 1 table stalled 150-300 ms so). The collector never walks a numpy array,
    and no list of them is made on the way."""
    return np.fromiter(items, dtype=object, count=n)


def join_pieces(sep: str, pieces, ends: bool = False) -> str:
    """``sep.join(pieces)`` (a sequence of str: a list, a tuple or an :func:`object_array`), with
    ``sep`` at both ends too when ``ends``, a slice at a time: one join of a vocabulary holds the
    GIL throughout (336 ms for 10,000,000 pieces), a slice's about 8 ms, and the join of the
    slices' strings 40 ms (adding the ends to the joined string would copy it twice more)."""
    parts = [sep.join(pieces[at : at + JOIN_SLICE]) for at in range(0, len(pieces), JOIN_SLICE)] or [""]
    if ends:
        parts = ["", *parts, ""]
    return parts[0] if len(parts) == 1 else sep.join(parts)


def piece_offsets(pieces) -> np.ndarray:
    """(n + 1,) int64: where each of ``pieces`` starts in them joined with a one-character separator
    (:func:`join_pieces`), and, last, the joined length plus one. No list of their lengths is made on
    the way (see :func:`object_array`)."""
    offsets = np.zeros(len(pieces) + 1, np.int64)
    np.cumsum(np.fromiter((len(p) + 1 for p in pieces), np.int64, len(pieces)), out=offsets[1:])
    return offsets


def release_objects(items: np.ndarray) -> None:
    """Free the objects of ``items`` (a 1-D :func:`object_array`) a slice at a time, each slot left None.

    An object array's own freeing drops all its objects in one loop that holds the GIL: for
    10,000,000 strings the other threads (the window's among them) waited 131 ms for it; freed in
    slices of ``RELEASE_ROWS``, at most 16 ms. For a job's own array, as it is cancelled: whoever
    else holds the array sees Nones."""
    if items.dtype != object:
        return
    for at in range(0, len(items), RELEASE_ROWS):
        items[at : at + RELEASE_ROWS] = None
