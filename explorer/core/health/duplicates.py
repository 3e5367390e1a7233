"""Rows that equal another row, exactly or nearly. No Qt here.

Comparing every pair of 128,256 rows would take hours, so each row is first
reduced to a sketch: its products with :data:`SKETCH_DIM` random
directions, divided by its norm (computed in the table pass). Rows that are
near each other have near sketches. Sketches are dropped into the cells of
a grid (:data:`_TABLES` grids, each shifted at random, so a near pair split
by a cell wall in one grid meets in another); rows sharing a cell whose
sketches are close are checked on the rows themselves. Rows with identical
sketches are grouped first and checked against their group's first row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.arrays import unique_rows, unique_sorted

__all__ = ["SKETCH_DIM", "NEAR_RELATIVE", "sketch_directions", "Duplicates", "find_duplicates"]

#: random directions per sketch
SKETCH_DIM = 16
#: rows a and b are near duplicates when |a - b| <= NEAR_RELATIVE * max(|a|, |b|)
NEAR_RELATIVE = 0.01
#: a near pair's sketches are at most about 2 * NEAR_RELATIVE apart; the
#: radius leaves room for the sketch's own error (a factor 3 is exceeded
#: with odds far below one in a million for 16 directions)
_RADIUS = 3 * 2 * NEAR_RELATIVE
#: grid cells are this wide (a unit row's sketch coordinates spread about
#: 0.25): a near pair straddles a wall of one grid with odds about 0.3, of
#: all _TABLES grids about 0.3 ** 8 = 6e-5; two random rows share a cell
#: with odds about 1e-9
_CELL = 0.2
_TABLES = 8
#: rows compared with each other within one cell at most (in sketch order)
_REACH = 32
#: candidate pairs checked at most (a table of thousands of equal rows
#: would otherwise make millions)
MAX_PAIRS = 200_000
_CHECK_BATCH = 1024
#: candidate pairs whose sketches are measured at a time
_MEASURE_BATCH = 1 << 16


def sketch_directions(dim: int, seed: int = 0) -> np.ndarray:
    """(SKETCH_DIM, d) float32 Gaussian directions scaled so that a unit
    row's sketch has unit expected length."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((SKETCH_DIM, dim)) / np.sqrt(SKETCH_DIM)).astype(np.float32)


@dataclass(frozen=True, eq=False)
class Duplicates:
    """Attributes
    ----------
    duplicate_of : ndarray (V,) int64
        The lowest other row equal or near to this one; -1 for none.
    exact : ndarray (V,) bool
        The row has an exact copy elsewhere.
    near : ndarray (V,) bool
        The row has a near copy elsewhere (and no exact one).
    truncated : bool
        More candidate pairs than :data:`MAX_PAIRS`: some were not checked.
    """

    duplicate_of: np.ndarray
    exact: np.ndarray
    near: np.ndarray
    truncated: bool


def find_duplicates(table, sketch: np.ndarray, norms: np.ndarray, valid: np.ndarray) -> Duplicates:
    """Exact and near duplicate rows among the ``valid`` ones.

    Parameters
    ----------
    table : EmbeddingTable
        Candidate pairs are checked on its rows.
    sketch : ndarray (V, SKETCH_DIM) float32
        Rows times :func:`sketch_directions` (any precision: pairs are checked).
    norms : ndarray (V,) float64
    valid : ndarray (V,) bool
        Finite rows with a non-zero norm (zero rows are reported apart).
    """
    v = len(norms)
    found = _Found(v)
    ids = np.nonzero(valid)[0]
    unit = sketch[ids].astype(np.float64) / norms[ids, None]
    ok = np.isfinite(unit).all(axis=1)
    ids, unit = ids[ok], unit[ok]
    if len(ids) < 2:
        return found.result(False)
    # equal rows give equal sketches: one point per group, members checked against its first
    points, first, inverse = unique_rows(unit)
    groups: dict[int, np.ndarray] = {}
    if len(points) < len(ids):
        # members of each group in id order (ids ascend, the sort is stable)
        by_group = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[by_group], np.arange(len(points) + 1))
        for g in np.nonzero(np.diff(starts) > 1)[0]:
            members = ids[by_group[starts[g] : starts[g + 1]]]
            groups[int(g)] = members
            found.check(table, np.full(len(members) - 1, members[0]), members[1:], norms)
    pairs, truncated = _close_pairs(points)
    if len(pairs):
        reps = ids[first]
        close = found.check(table, reps[pairs[:, 0]], reps[pairs[:, 1]], norms)
        for ga, gb in pairs[close]:
            # every member of one group is as close to the other group as its first row
            a_members = groups.get(int(ga), reps[ga : ga + 1])
            b_members = groups.get(int(gb), reps[gb : gb + 1])
            for x in a_members[1:]:
                found.mark(int(x), int(b_members[0]), exact=False)
            for y in b_members[1:]:
                found.mark(int(y), int(a_members[0]), exact=False)
    return found.result(truncated)


def _close_pairs(points: np.ndarray, seed: int = 0) -> tuple[np.ndarray, bool]:
    """Pairs (i < j) of points closer than :data:`_RADIUS` that share a cell
    of at least one grid; and whether :data:`MAX_PAIRS` cut the list."""
    n, m = points.shape
    rng = np.random.default_rng(seed)
    mix = rng.integers(1, 2**62, size=m, dtype=np.int64) | 1
    found = []
    for _ in range(_TABLES):
        cells = np.floor((points + rng.uniform(0, _CELL, m)) / _CELL).astype(np.int64)
        key = (cells * mix).sum(axis=1)  # wraps around: a hash of the cell
        order = np.argsort(key, kind="stable")
        key = key[order]
        for k in range(1, min(_REACH, n - 1) + 1):
            same = np.nonzero(key[k:] == key[:-k])[0]
            if len(same) == 0:
                break
            a, b = order[same], order[same + k]
            found.append(np.minimum(a, b) * n + np.maximum(a, b))  # pair (i < j) as one number
    if not found:
        return np.empty((0, 2), np.int64), False
    # in order of (i, j): the first MAX_PAIRS close ones are kept, so a crowded
    # table (millions of candidates in a few cells) stops measuring once past them
    candidates = unique_sorted(np.concatenate(found))
    close, count = [], 0
    for start in range(0, len(candidates), _MEASURE_BATCH):
        part = candidates[start : start + _MEASURE_BATCH]
        i, j = part // n, part % n
        part = part[np.linalg.norm(points[i] - points[j], axis=1) <= _RADIUS]
        close.append(part)
        count += len(part)
        if count > MAX_PAIRS:
            break
    pairs = np.concatenate(close)[:MAX_PAIRS]
    return np.stack([pairs // n, pairs % n], axis=1), count > MAX_PAIRS


class _Found:
    def __init__(self, v: int):
        self.dup = np.full(v, -1, np.int64)
        self.exact = np.zeros(v, bool)
        self.near = np.zeros(v, bool)

    def mark(self, x: int, y: int, exact: bool) -> None:
        for i, j in ((x, y), (y, x)):
            if self.dup[i] < 0 or j < self.dup[i]:
                self.dup[i] = j
            if exact:
                self.exact[i] = True
            else:
                self.near[i] = True

    def check(self, table, a: np.ndarray, b: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """Compare rows a[k] and b[k]; mark the close pairs; return which were close."""
        close_all = np.zeros(len(a), bool)
        for k in range(0, len(a), _CHECK_BATCH):
            ia, ib = a[k : k + _CHECK_BATCH], b[k : k + _CHECK_BATCH]
            dist = np.linalg.norm(table.rows(ia).astype(np.float64) - table.rows(ib).astype(np.float64), axis=1)
            close = dist <= NEAR_RELATIVE * np.maximum(norms[ia], norms[ib])
            close_all[k : k + len(ia)] = close
            for i, j, c, same in zip(ia, ib, close, dist == 0):
                if c:
                    self.mark(int(i), int(j), exact=bool(same))
        return close_all

    def result(self, truncated: bool) -> Duplicates:
        return Duplicates(self.dup, self.exact, self.near & ~self.exact, truncated)
