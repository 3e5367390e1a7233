"""Unique values and rows without numpy's hash table. No Qt here.

Since numpy 2.3, a plain ``np.unique(a)`` builds a hash set of the values.
That holds the GIL all along, and is slow on many distinct values: 4.8 s
for 4 M int64 on this project's machine, against 0.06 s for a sort, with
gaps of seconds in every other thread (the window's among them, while a
job runs). The sort numpy falls back on when indices are asked for, and
``np.lexsort``, let the GIL go. These give numpy's results that way; the
project calls them instead of ``np.unique`` (tests/test_architecture.py).

And a vocabulary's worth of Python strings kept where the garbage collector
does not walk them (:func:`object_array`), joined a slice at a time
(:func:`join_pieces`) and freed a slice at a time (:func:`release_objects`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["unique_sorted", "unique_rows", "finite_bounds", "column_bounds", "object_array", "join_pieces",
           "piece_offsets", "release_objects", "SCATTER_ROWS", "JOIN_SLICE", "RELEASE_ROWS"]

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


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_index=True, return_inverse=True)`` for
    a 2-D numeric array with no NaN: the distinct rows in lexicographic order,
    the index of each one's first occurrence, and each row's place among them.
    Rows are compared as numbers (-0.0 equals 0.0), as numpy does."""
    rows = np.asarray(rows)
    n = len(rows)
    order = _lexicographic_order(rows)
    ordered = rows[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    starts = np.nonzero(new)[0]
    # a cumsum that casts (bool to int) and a scatter hold the GIL throughout: 203 and 214 ms for
    # 10,000,000 rows, where a walk's window stood still 383 ms. Cast first (a cumsum in one dtype lets
    # the GIL go), and scatter a slice at a time
    place = new.astype(np.intp)
    np.cumsum(place, out=place)
    place -= 1
    inverse = np.empty(n, dtype=np.intp)
    for at in range(0, n, SCATTER_ROWS):
        inverse[order[at : at + SCATTER_ROWS]] = place[at : at + SCATTER_ROWS]
    return ordered[starts], order[starts], inverse


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
