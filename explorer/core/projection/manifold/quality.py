"""How faithful a layout is: trustworthiness (Venna & Kaski 2001).

Trustworthiness penalises points that are close in the layout but not among
each other's nearest rows in the table; 1 means every layout neighbour is a
true neighbour. It is measured with the table's own metric, cosine, and
:data:`TRUST_NEIGHBORS` neighbours, and gives scikit-learn's
``sklearn.manifold.trustworthiness`` (the tests compare the two). That
function sorts every row of an n × n distance matrix (2 s for 5,000 rows
here); this one counts, for each point's k layout neighbours only, the rows
nearer than them (0.3 s). Layouts above :data:`TRUST_MAX_ROWS` points are
scored on a seeded subsample of that size (and the report says so).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TRUST_NEIGHBORS", "TRUST_MAX_ROWS", "layout_trustworthiness"]

TRUST_NEIGHBORS = 5
TRUST_MAX_ROWS = 5000


def layout_trustworthiness(rows: np.ndarray, coords: np.ndarray, seed: int = 0,
                           max_rows: int = TRUST_MAX_ROWS, n_neighbors: int = TRUST_NEIGHBORS) -> tuple[float, int]:
    """Trustworthiness of ``coords`` (n, k) as a layout of ``rows`` (n, d),
    cosine distance, ``n_neighbors`` neighbours (5). Returns (score 0..1, rows scored)."""
    n = len(rows)
    k = min(n_neighbors, (n - 1) // 2)  # as scikit-learn: n_neighbors < n / 2
    if k < 1:
        return float("nan"), n
    if n > max_rows:
        pick = np.sort(np.random.default_rng(seed).choice(n, max_rows, replace=False))
        rows, coords, n = rows[pick], coords[pick], max_rows
    return _trustworthiness(np.asarray(rows, np.float64), np.asarray(coords, np.float64), k), n


def _trustworthiness(rows: np.ndarray, coords: np.ndarray, k: int, block: int = 256) -> float:
    """scikit-learn's trustworthiness (cosine in the table, Euclidean in the layout)."""
    from scipy.spatial import cKDTree

    n = len(rows)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms > 0, norms, 1.0)
    # each point's k nearest points in the layout, itself left out (the first of those at distance 0)
    near = cKDTree(coords).query(coords, k + 1)[1]
    own = near == np.arange(n)[:, None]  # moved last, keeping the others' order (no change without it)
    near = np.take_along_axis(near, np.argsort(own, axis=1, kind="stable"), axis=1)[:, :k]
    penalty = 0
    for start in range(0, n, block):
        stop = min(n, start + block)
        dist = np.clip(1.0 - unit[start:stop] @ unit.T, 0.0, 2.0)
        dist[np.arange(stop - start), np.arange(start, stop)] = 3.0  # farther than any row: never counted
        to_near = np.take_along_axis(dist, near[start:stop], axis=1)
        # rank of a layout neighbour among the point's rows by table distance, from 1: the rows nearer than
        # it, counted by one search in the sorted rows laid end to end (row r shifted by 4 r)
        shift = 4.0 * np.arange(stop - start)[:, None]
        flat = (np.sort(dist, axis=1) + shift).ravel()
        ranks = np.searchsorted(flat, to_near + shift, side="left") - n * np.arange(stop - start)[:, None] + 1
        penalty += int(np.maximum(ranks - k, 0).sum())
    return float(1.0 - penalty * (2.0 / (n * k * (2.0 * n - 3.0 * k - 1.0))))
