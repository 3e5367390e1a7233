"""Every row's nearest neighbours chosen from bfloat16 products (numba).

The neighbour graph multiplies a block of rows by all rows in bfloat16 and
must then find, in every row of the products, the ``k`` largest of some
30,000 values, and their exact float32 cosines. ``torch.topk`` and a sort
cost 1.5 s on MiniLM; this does both in 0.8 s, and better:

1. The row is cut into chunks of :data:`CHUNK` values, and each chunk's
   largest value is taken (a vectorised pass). The ``k``-th largest of those
   maxima is a floor: at least ``k`` values reach it, so the ``k`` largest
   are all among the values at or above it.
2. Of the few hundred values that reach it, the ``k``-th largest is the
   bfloat16 threshold; every value within ``margin`` steps of bfloat16
   below it is kept (a product rounded to 8 bits of mantissa can land a
   step or two from its float32 value), collected again from lower down
   in the rare row where the margin reaches below the floor.
3. Those candidates (about 120 a row on MiniLM) get their float32 dot
   products, and the ``k`` largest of those are the neighbours, in order.

Products are read as the int16 bit patterns of their bfloat16 values: for
values of the same sign, the patterns order as the values do. Where the
threshold is not positive (a row with fewer than ``k`` positive products),
every column is a candidate and the float32 products decide.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["CHUNK", "MARGIN", "choose_neighbours"]

#: values per chunk whose largest value is taken in the first pass
CHUNK = 64
#: bfloat16 steps below the k-th largest product still given their float32 product
MARGIN = 2
#: the bit pattern of -0.0 as int16: below every pattern
_ALL = -32768


@numba.njit(fastmath=True, cache=True, nogil=True)
def _floor(p, k):
    """A threshold reached by at least ``k`` values of ``p``: the k-th largest chunk maximum."""
    n = p.shape[0]
    chunks = (n + CHUNK - 1) // CHUNK
    if chunks <= k:
        return np.int64(_ALL), np.empty(0, np.int16)
    tops = np.empty(chunks, np.int16)
    for ch in range(chunks):
        tops[ch] = p[ch * CHUNK:min(n, (ch + 1) * CHUNK)].max()
    return np.int64(np.partition(tops, chunks - k)[chunks - k]), tops


@numba.njit(fastmath=True, cache=True, nogil=True)
def _collect(p, tops, floor):
    """The columns of ``p`` at or above ``floor`` (every column for :data:`_ALL`), and their patterns."""
    n = p.shape[0]
    every = floor == _ALL
    cand = np.empty(n if every else CHUNK * int((tops >= floor).sum()), np.int64)
    pattern = np.empty(cand.shape[0], np.int16)
    count = 0
    for ch in range((n + CHUNK - 1) // CHUNK):
        if every or tops[ch] >= floor:
            for c in range(ch * CHUNK, min(n, (ch + 1) * CHUNK)):
                if p[c] >= floor:
                    cand[count] = c
                    pattern[count] = p[c]
                    count += 1
    return cand[:count], pattern[:count]


@numba.njit(fastmath=True, cache=True, nogil=True)
def _row(p, rows, me, k, margin, out_i, out_s):
    floor, tops = _floor(p, k)
    while True:
        if floor < 0:
            floor = _ALL
        cand, pattern = _collect(p, tops, floor)
        # within `margin` bfloat16 steps of the k-th largest value
        threshold = np.int64(np.partition(pattern, len(pattern) - k)[len(pattern) - k]) - margin
        if threshold < 0:
            threshold = _ALL
        if threshold >= floor:
            break
        floor = threshold  # the margin reaches below the floor (rare): collect again from there
    kept = 0
    for j in range(len(cand)):
        if pattern[j] >= threshold:
            cand[kept] = cand[j]
            kept += 1
    sims = np.empty(kept, np.float32)
    a = rows[me]
    for j in range(kept):
        b = rows[cand[j]]
        acc = np.float32(0.0)
        for d in range(rows.shape[1]):
            acc += a[d] * b[d]
        sims[j] = np.float32(3.0) if cand[j] == me else acc  # the row itself first
    order = np.argsort(-sims, kind="mergesort")
    for c in range(k):
        out_i[c] = cand[order[c]]
        out_s[c] = sims[order[c]]


@numba.njit(parallel=True, cache=True, nogil=True)
def _choose(patterns, rows, first, k, margin, out_i, out_s):
    for r in numba.prange(patterns.shape[0]):
        _row(patterns[r], rows, first + r, k, margin, out_i[r], out_s[r])


def choose_neighbours(patterns: np.ndarray, rows: np.ndarray, first: int, k: int,
                      margin: int = MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest neighbours of rows ``first … first + m − 1``.

    ``patterns`` (m, n) int16: the bit patterns of the bfloat16 products of those
    rows with all ``n`` rows (``k ≤ n``); ``rows`` (n, d) float32, the unit rows.
    Returns (indices (m, k) int64, similarities (m, k) float32), by float32
    similarity, largest first, with the row itself first (similarity 3.0).
    """
    m = patterns.shape[0]
    indices = np.empty((m, k), np.int64)
    sims = np.empty((m, k), np.float32)
    _choose(np.ascontiguousarray(patterns, dtype=np.int16), np.ascontiguousarray(rows, dtype=np.float32),
            int(first), int(k), int(margin), indices, sims)
    return indices, sims
