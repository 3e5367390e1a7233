"""Rows that equal another row, exactly or nearly. No Qt here.

Comparing every pair of 128,256 rows would take hours, so each row is first
reduced to a sketch: its products with :data:`SKETCH_DIM` random
directions, divided by its norm (computed in the table pass). Rows that are
near each other have near sketches. Sketches are dropped into the cells of
a grid (:data:`_TABLES` grids, each shifted at random, so a near pair split
by a cell wall in one grid meets in another); rows sharing a cell whose
sketches are close are checked on the rows themselves. Rows with identical
sketches are grouped first and checked against their group's first row.

The search is a job (:func:`iter_duplicates`): it yields after each step,
and a step measures at most one candidate pair a row, so a cancel reaches
it even on a table whose sketches crowd a few cells (rows of two or three
values, whose directions lie on a circle or a sphere).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

import numpy as np

from explorer.core.arrays import GROUP_ROWS, iter_row_groups
from explorer.core.jobs import run_to_end, scaled

__all__ = ["SKETCH_DIM", "NEAR_RELATIVE", "sketch_directions", "Duplicates", "iter_duplicates", "find_duplicates"]

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
#: close pairs checked on the rows at most (a table of thousands of equal
#: rows would otherwise make millions)
MAX_PAIRS = 200_000
#: values of rows read at a time to check pairs on the rows
_CHECK_VALUES = 1 << 22


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


def iter_duplicates(table, sketch: np.ndarray, norms: np.ndarray, valid: np.ndarray
                    ) -> Generator[tuple[float, str], None, Duplicates]:
    """Exact and near duplicate rows among the ``valid`` ones: a generator
    for a job, yielding ``(fraction, message)`` between steps of bounded
    work (one grid's neighbours at one reach, one batch of checked pairs),
    so that a cancel is heard even on a crowded table; returns
    :class:`Duplicates`.

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
    ids, unit = yield from scaled(_iter_unit_sketches(sketch, norms, valid), 0.0, 0.1)
    if len(ids) < 2:
        return found.result(False)
    # equal rows give equal sketches: one point per group, members checked against its first
    groups = yield from scaled(iter_row_groups(unit), 0.1, 0.3)
    first = groups.first
    points = np.empty((len(first), unit.shape[1]), unit.dtype)
    for at in range(0, len(first), GROUP_ROWS):  # a gather of millions of rows in one step held the GIL
        points[at : at + GROUP_ROWS] = unit[first[at : at + GROUP_ROWS]]
        yield 0.3, "Looking for rows that equal another…"
    del unit
    members, starts = ids[groups.order], groups.starts  # group g's members, ascending, at starts[g]:starts[g + 1]
    reps = ids[first]  # each group's first (lowest) row
    grouped = groups.sizes > 1
    if grouped.any():
        others = np.ones(len(members), bool)
        others[starts[:-1]] = False
        firsts = np.repeat(reps, groups.sizes)
        yield from scaled(found.iter_check(table, firsts[others], members[others], norms), 0.3, 0.35)
    pairs, truncated = yield from scaled(_iter_close_pairs(points), 0.35, 0.7)
    if len(pairs):
        close = yield from scaled(found.iter_check(table, reps[pairs[:, 0]], reps[pairs[:, 1]], norms), 0.7, 0.95)
        # every member of one group is as close to the other group as its first row
        close = pairs[close]
        close = close[grouped[close[:, 0]] | grouped[close[:, 1]]]
        for k, (ga, gb) in enumerate(close):
            if k % 1024 == 0:
                yield 0.95 + 0.05 * k / len(close), "Marking groups of equal rows…"
            a_members, b_members = members[starts[ga] : starts[ga + 1]], members[starts[gb] : starts[gb + 1]]
            found.mark(a_members[1:], np.full(len(a_members) - 1, b_members[0]), exact=False)
            found.mark(b_members[1:], np.full(len(b_members) - 1, a_members[0]), exact=False)
    return found.result(truncated)


def _iter_unit_sketches(sketch: np.ndarray, norms: np.ndarray, valid: np.ndarray
                        ) -> Generator[tuple[float, str], None, tuple[np.ndarray, np.ndarray]]:
    """The valid rows' ids and their sketches divided by their norms (float64), those that are finite:
    :data:`GROUP_ROWS` rows a step (10,000,000 rows at once: 5.6 s in one step, and its gather of the
    sketches held the GIL 119 ms)."""
    ids = np.nonzero(valid)[0]
    unit = np.empty((len(ids), sketch.shape[1]), np.float64)
    ok = np.empty(len(ids), bool)
    for at in range(0, len(ids), GROUP_ROWS):
        part = ids[at : at + GROUP_ROWS]
        block = unit[at : at + len(part)]
        np.divide(sketch[part], norms[part, None], out=block)
        np.isfinite(block).all(axis=1, out=ok[at : at + len(part)])
        yield min(len(ids), at + GROUP_ROWS) / max(1, len(ids)), "Looking for rows that equal another…"
    if not ok.all():
        ids, unit = ids[ok], unit[ok]
    return ids, unit


def find_duplicates(table, sketch: np.ndarray, norms: np.ndarray, valid: np.ndarray) -> Duplicates:
    """:func:`iter_duplicates` run to the end."""
    return run_to_end(iter_duplicates(table, sketch, norms, valid))


def _close_pairs(points: np.ndarray, seed: int = 0) -> tuple[np.ndarray, bool]:
    """:func:`_iter_close_pairs` run to the end."""
    return run_to_end(_iter_close_pairs(points, seed))


def _iter_close_pairs(points: np.ndarray, seed: int = 0) -> Generator[tuple[float, str], None, tuple[np.ndarray, bool]]:
    """Pairs (i < j) of points closer than :data:`_RADIUS` that share a cell
    of at least one grid, in (i, j) order; and whether :data:`MAX_PAIRS` cut
    the list (a generator: it yields after each grid at each reach).

    Rows next to each other in a grid's cell order are met first: reach 1
    in every grid, then reach 2, and so on up to :data:`_REACH`. Each step
    measures at most one candidate a point, and the first MAX_PAIRS
    distinct close pairs in that order are kept. So a crowded table (a
    few cells holding most rows) costs at most the steps that find
    MAX_PAIRS, each as long as one pass over the points, and every row has
    its nearest candidates measured before anyone's farther ones."""
    n, m = points.shape
    rng = np.random.default_rng(seed)
    mix = rng.integers(1, 2**62, size=m, dtype=np.int64) | 1
    grids = []  # per grid: the points in cell order, and their cells' hashes in that order (None: done)
    kept = np.empty(0, np.int64)  # distinct close pairs so far, as i * n + j, sorted
    reach = min(_REACH, n - 1)
    for k in range(1, reach + 1):
        for g in range(_TABLES):
            yield (k - 1 + g / _TABLES) / reach, "Looking for rows that nearly equal another…"
            if k == 1:  # each grid is made in the first step that needs it
                shift = rng.uniform(0, _CELL, m)
                key = np.empty(n, np.int64)
                for at in range(0, n, GROUP_ROWS):
                    cells = np.floor((points[at : at + GROUP_ROWS] + shift) / _CELL).astype(np.int64)
                    key[at : at + GROUP_ROWS] = (cells * mix).sum(axis=1)  # wraps around: a hash of the cell
                    if n > GROUP_ROWS:
                        yield (k - 1 + g / _TABLES) / reach, "Looking for rows that nearly equal another…"
                # in a cell, by the first coordinate: neighbours in that order are near more often than
                # points in the order of their groups (a hash's: random:20000x2's capped search found 789
                # rows with a near copy instead of 3,511)
                order = np.lexsort((points[:, 0], key))
                grids.append((order, key[order]))
            order, key = grids[g]
            if key is None:
                continue
            same = np.nonzero(key[k:] == key[:-k])[0]
            if len(same) == 0:  # no cell holds more than k points: none at a longer reach either
                grids[g] = (order, None)
                continue
            for at in range(0, len(same), GROUP_ROWS):  # in cell order, a part at a time
                if at:
                    yield (k - 1 + g / _TABLES) / reach, "Looking for rows that nearly equal another…"
                part = same[at : at + GROUP_ROWS]
                a, b = order[part], order[part + k]
                gap = points[a] - points[b]
                near = np.einsum("ij,ij->i", gap, gap) <= _RADIUS * _RADIUS
                code = np.minimum(a[near], b[near]) * n + np.maximum(a[near], b[near])  # distinct in one step
                place = np.searchsorted(kept, code)
                new = code[(place >= len(kept)) | (kept[np.minimum(place, len(kept) - 1)] != code)] if len(kept) \
                    else code
                room = MAX_PAIRS - len(kept)
                kept = np.sort(np.concatenate([kept, new[:room]]))
                if len(new) > room:
                    return np.stack([kept // n, kept % n], axis=1), True
        if all(key is None for _, key in grids):
            break
    return np.stack([kept // n, kept % n], axis=1), False


class _Found:
    def __init__(self, v: int):
        self.dup = np.full(v, v, np.int64)  # v: none (above every id, so a minimum keeps the lowest)
        self.exact = np.zeros(v, bool)
        self.near = np.zeros(v, bool)

    def mark(self, x: np.ndarray, y: np.ndarray, exact) -> None:
        """Rows x[k] and y[k] are equal (``exact``, a bool or one per pair) or near."""
        exact = np.broadcast_to(np.asarray(exact, bool), np.shape(x))
        for i, j in ((x, y), (y, x)):
            np.minimum.at(self.dup, i, j)
            self.exact[i[exact]] = True
            self.near[i[~exact]] = True

    def iter_check(self, table, a: np.ndarray, b: np.ndarray, norms: np.ndarray
                   ) -> Generator[tuple[float, str], None, np.ndarray]:
        """Compare rows a[k] and b[k] and mark the close pairs, yielding
        between batches; return which were close."""
        close_all = np.zeros(len(a), bool)
        batch = max(64, min(1 << 14, _CHECK_VALUES // max(1, table.dim)))
        for k in range(0, len(a), batch):
            yield k / len(a), f"Checking rows that may be duplicates… {k:,} of {len(a):,} pairs"
            ia, ib = a[k : k + batch], b[k : k + batch]
            dist = np.linalg.norm(table.rows(ia).astype(np.float64) - table.rows(ib).astype(np.float64), axis=1)
            close = dist <= NEAR_RELATIVE * np.maximum(norms[ia], norms[ib])
            close_all[k : k + len(ia)] = close
            self.mark(ia[close], ib[close], dist[close] == 0)
        return close_all

    def result(self, truncated: bool) -> Duplicates:
        dup = np.where(self.dup == len(self.dup), -1, self.dup)
        return Duplicates(dup, self.exact, self.near & ~self.exact, truncated)
