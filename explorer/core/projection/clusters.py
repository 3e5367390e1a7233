"""Automatic cluster labels for a 2D layout: k-means on the points as drawn,
each cluster named by its most central points (the tokens nearest its centre).

Pure numpy: :func:`kmeans` is scikit-learn's ``KMeans`` (greedy k-means++,
Lloyd's iterations, its tolerance, the best of ``n_init`` runs), which the tests
compare it with. scikit-learn itself is not imported: its import (and SciPy's,
which it brings) is 0.7-1.0 s of module code in the worker that first clusters
a layout, sharing the GIL with the window while the user goes on clicking; in
a process whose older objects are not parked from the collector (the app parks
them once warm), full collections inside it kept the GIL for 72-87 ms at once.
:func:`clusters_job` is the generator a worker runs when the layout changes
(not when the view moves: the clusters belong to the layout).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["LayoutClusters", "cluster_layout", "clusters_job", "kmeans", "n_clusters_for"]

#: clusters of a big layout; small ones get fewer (about one per MIN_MEMBERS points)
MAX_CLUSTERS, MIN_MEMBERS = 12, 25
#: a layout with more points is clustered on a seeded sample of this many, then every point is
#: given its nearest centre and the centres are the means of their points (as MiniBatchKMeans was)
FIT_SAMPLE = 20_000


@dataclass(frozen=True, eq=False)
class LayoutClusters:
    """k clusters of a layout.

    Attributes
    ----------
    centres : np.ndarray
        (k, 2) the clusters' centres, biggest cluster first.
    sizes : np.ndarray
        (k,) points in each.
    central : tuple[np.ndarray, ...]
        For each cluster, indices (into the points given) of its members nearest its centre, nearest first.
    key : object
        Whatever the caller passed to say what the clusters are for.
    """

    centres: np.ndarray
    sizes: np.ndarray
    central: tuple[np.ndarray, ...]
    key: object = None


def n_clusters_for(n: int) -> int:
    """How many clusters a layout of ``n`` points is labelled with (0: too few to bother)."""
    return int(min(MAX_CLUSTERS, n // MIN_MEMBERS))


def _sq_distances(pts: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """(n, k) squared euclidean distances, never below 0."""
    d = (pts * pts).sum(axis=1)[:, None] - 2.0 * pts @ centres.T + (centres * centres).sum(axis=1)[None, :]
    return np.maximum(d, 0.0, out=d)


def _sums_and_counts(pts: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(k, d) the sum of each cluster's points, (k,) how many it has."""
    sums = np.stack([np.bincount(labels, weights=pts[:, j], minlength=k) for j in range(pts.shape[1])], axis=1)
    return sums, np.bincount(labels, minlength=k)


def _kmeans_plus_plus(pts: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ (scikit-learn's seeding): each new centre is the best of 2 + log k
    candidates drawn in proportion to the squared distance to the nearest centre so far."""
    n = len(pts)
    trials = 2 + int(np.log(k))
    centres = np.empty((k, pts.shape[1]))
    centres[0] = pts[rng.integers(n)]
    closest = _sq_distances(pts, centres[:1])[:, 0]
    for c in range(1, k):
        total = closest.sum()
        if total <= 0:  # every point sits on a centre already: any point will do
            centres[c] = pts[rng.integers(n)]
            continue
        picks = np.searchsorted(np.cumsum(closest), rng.random(trials) * total)
        picks = np.minimum(picks, n - 1)
        with_each = np.minimum(closest[:, None], _sq_distances(pts, pts[picks]))
        best = int(np.argmin(with_each.sum(axis=0)))
        centres[c], closest = pts[picks[best]], with_each[:, best]
    return centres


def _lloyd(pts: np.ndarray, centres: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Lloyd's iterations from ``centres``: (centres, labels, inertia). An empty cluster takes
    the point farthest from its centre."""
    k = len(centres)
    for _ in range(max_iter):
        d = _sq_distances(pts, centres)
        labels = d.argmin(axis=1)
        new, counts = _sums_and_counts(pts, labels, k)
        for c in np.flatnonzero(counts == 0):
            far = int(np.argmax(d[np.arange(len(pts)), labels]))
            new[c], counts[c] = pts[far], 1
            d[far, labels[far]] = 0.0
        new[counts > 0] /= counts[counts > 0, None]
        shift = float(((new - centres) ** 2).sum())
        centres = new
        if shift <= tol:
            break
    d = _sq_distances(pts, centres)
    labels = d.argmin(axis=1)
    return centres, labels, float(d[np.arange(len(pts)), labels].sum())


def kmeans(pts: np.ndarray, k: int, seed: int = 0, n_init: int = 3, max_iter: int = 300,
           tol: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """(centres (k, d), labels (n,)) of seeded k-means on ``pts`` (n, d): the run of lowest
    inertia among ``n_init``, each seeded by greedy k-means++ and iterated until the centres move
    less than ``tol`` times the points' mean variance (scikit-learn's ``KMeans`` rule). Above
    :data:`FIT_SAMPLE` points, as scikit-learn's ``MiniBatchKMeans`` does, the best of ``n_init``
    seedings (by inertia) of a seeded sample is iterated once, on the sample; every point then
    takes its nearest centre, and the centres become the means of their points."""
    pts = np.asarray(pts, np.float64)
    rng = np.random.default_rng(seed)
    big = len(pts) > FIT_SAMPLE
    fit = pts[np.sort(rng.choice(len(pts), FIT_SAMPLE, replace=False))] if big else pts
    scaled_tol = float(np.mean(np.var(fit, axis=0))) * tol
    if big:
        seeds = [_kmeans_plus_plus(fit, k, rng) for _ in range(max(1, n_init))]
        best_seed = min(seeds, key=lambda c: float(_sq_distances(fit, c).min(axis=1).sum()))
        centres = _lloyd(fit, best_seed, scaled_tol, max_iter)[0]
        labels = _sq_distances(pts, centres).argmin(axis=1)
        sums, counts = _sums_and_counts(pts, labels, k)
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
        return centres, labels
    best = None
    for _ in range(max(1, n_init)):
        run = _lloyd(fit, _kmeans_plus_plus(fit, k, rng), scaled_tol, max_iter)
        if best is None or run[2] < best[2]:
            best = run
    return best[0], best[1]


def cluster_layout(xy: np.ndarray, k: int, m: int = 2, seed: int = 0, key: object = None) -> LayoutClusters:
    """k-means (seeded) of the finite points of ``xy`` (n, 2); ``m`` central members per cluster."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    finite = np.flatnonzero(np.isfinite(xy).all(axis=1))
    k = int(min(k, len(finite)))
    if k < 1:
        return LayoutClusters(np.zeros((0, 2)), np.zeros(0, np.int64), (), key)
    pts = xy[finite]
    centres, labels = kmeans(pts, k, seed=seed, n_init=3)
    labels = labels.astype(np.int64)
    dist = ((pts - centres[labels]) ** 2).sum(axis=1)
    order = np.lexsort((dist, labels))  # by cluster, nearest the centre first
    starts = np.searchsorted(labels[order], np.arange(k + 1))
    sizes = np.diff(starts)
    central = [finite[order[starts[c]:starts[c] + min(m, sizes[c])]] for c in range(k)]
    by_size = np.argsort(-sizes, kind="stable")
    return LayoutClusters(centres[by_size], sizes[by_size], tuple(central[c] for c in by_size), key)


def clusters_job(xy: np.ndarray, k: int, m: int = 2, seed: int = 0, key: object = None
                 ) -> Iterator[tuple[float, str]]:
    """:func:`cluster_layout` as a generator for a worker."""
    yield 0.0, "Finding clusters in the layout…"
    return cluster_layout(xy, k, m, seed, key)
