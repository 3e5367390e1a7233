"""UMAP's fuzzy graph of the neighbour lists, compiled once and kept by numba.

UMAP (McInnes, Healy & Melville 2018, section 3.1 and algorithms 2–3) turns
every row's ``k`` nearest neighbours into weighted edges: ``rho`` is the
distance to the row's nearest neighbour at a positive distance (every row is
connected to at least one), ``sigma`` the scale at which the weights
``exp(−(d − rho) / sigma)`` of its ``k − 1`` neighbours sum to ``log2(k)``
(found by halving an interval); the row's edges and their reverse are then
joined as fuzzy sets, ``w + wᵀ − w ∘ wᵀ``.

umap-learn computes the same graph (``fuzzy_simplicial_set``, which the
tests compare this with), but its compiled code is not kept between
sessions: 4.5 s of compiling before the first UMAP of every session here,
against milliseconds for this module's cached code.

The layouts' compiled functions all release the GIL (``nogil``): they touch
no Python object, and holding it, these row scales alone kept the window's
thread waiting 55-86 ms on MiniLM-sized rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["fuzzy_graph", "row_scales"]

#: how close the weights' sum must come to log2(k) (umap-learn's tolerance)
_TOLERANCE = 1e-5
#: halvings of the interval at most
_STEPS = 64
#: a row's scale is at least this fraction of its mean distance (of all rows' mean, for a row at distance 0)
_MIN_SCALE = 1e-3


@numba.njit(cache=True, nogil=True)
def row_scales(distances: np.ndarray, n_neighbors: float) -> tuple[np.ndarray, np.ndarray]:
    """(sigma, rho) for every row of ``distances`` (n, k), the row itself in column 0."""
    n, k = distances.shape
    target = math.log2(n_neighbors)
    sigma = np.empty(n, np.float64)
    rho = np.zeros(n, np.float64)
    mean_all = distances.mean()
    for i in range(n):
        for j in range(k):
            if distances[i, j] > 0.0:
                rho[i] = distances[i, j]
                break
        lo, hi, mid = 0.0, np.inf, 1.0
        for _ in range(_STEPS):
            total = 0.0
            for j in range(1, k):
                d = distances[i, j] - rho[i]
                total += math.exp(-d / mid) if d > 0.0 else 1.0
            if abs(total - target) < _TOLERANCE:
                break
            if total > target:
                hi = mid
                mid = (lo + hi) / 2.0
            else:
                lo = mid
                mid = mid * 2.0 if hi == np.inf else (lo + hi) / 2.0
        floor = _MIN_SCALE * (distances[i].mean() if rho[i] > 0.0 else mean_all)
        sigma[i] = max(mid, floor)
    return sigma, rho


@numba.njit(cache=True, nogil=True)
def _weights(indices, distances, sigma, rho):
    n, k = indices.shape
    w = np.zeros((n, k), np.float32)
    for i in range(n):
        for j in range(k):
            if indices[i, j] < 0 or indices[i, j] == i:
                continue
            d = distances[i, j] - rho[i]
            w[i, j] = 1.0 if d <= 0.0 or sigma[i] == 0.0 else math.exp(-d / sigma[i])
    return w


def fuzzy_graph(indices: np.ndarray, distances: np.ndarray):
    """UMAP's symmetric fuzzy graph (n, n) of every row's ``k`` neighbours, a
    scipy CSR matrix: ``indices`` (n, k) with the row itself first (−1 for
    none), ``distances`` (n, k) to them."""
    import scipy.sparse  # here, not at the window's start-up (0.4 s)

    indices = np.ascontiguousarray(indices, dtype=np.int64)
    distances = np.ascontiguousarray(distances, dtype=np.float32)
    n, k = indices.shape
    sigma, rho = row_scales(distances, float(k))
    w = _weights(indices, distances, sigma, rho)
    keep = (indices >= 0) & (w > 0)
    heads = np.repeat(np.arange(n), k).reshape(n, k)
    graph = scipy.sparse.coo_matrix((w[keep], (heads[keep], indices[keep])), shape=(n, n)).tocsr()  # sums repeats
    reverse = graph.T.tocsr()
    joined = (graph + reverse - graph.multiply(reverse)).tocsr()
    joined.eliminate_zeros()
    return joined
