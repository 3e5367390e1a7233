"""Automatic cluster labels for a 2D layout: k-means on the points as drawn,
each cluster named by its most central points (the tokens nearest its centre).

Pure numpy and scikit-learn; :func:`clusters_job` is the generator a worker
runs when the layout changes (not when the view moves: the clusters belong
to the layout).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["LayoutClusters", "cluster_layout", "clusters_job", "n_clusters_for"]

#: clusters of a big layout; small ones get fewer (about one per MIN_MEMBERS points)
MAX_CLUSTERS, MIN_MEMBERS = 12, 25


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


def cluster_layout(xy: np.ndarray, k: int, m: int = 2, seed: int = 0, key: object = None) -> LayoutClusters:
    """k-means (seeded) of the finite points of ``xy`` (n, 2); ``m`` central members per cluster."""
    from sklearn.cluster import KMeans, MiniBatchKMeans

    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    finite = np.flatnonzero(np.isfinite(xy).all(axis=1))
    k = int(min(k, len(finite)))
    if k < 1:
        return LayoutClusters(np.zeros((0, 2)), np.zeros(0, np.int64), (), key)
    pts = xy[finite]
    if len(pts) > 20_000:
        km = MiniBatchKMeans(n_clusters=k, random_state=seed, n_init=3, batch_size=8192).fit(pts)
    else:
        km = KMeans(n_clusters=k, random_state=seed, n_init=3).fit(pts)
    labels = km.labels_.astype(np.int64)
    centres = km.cluster_centers_
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
