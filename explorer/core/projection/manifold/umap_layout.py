"""UMAP with umap-learn, and the warm-up of its compiled code.

umap-learn compiles its numba functions on first use: several seconds the
first time in a process (less once numba's on-disk cache holds them).
:func:`warm_up_umap` pays that on a tiny table, inside a worker's job,
never on the GUI thread. With a seed umap-learn runs single-threaded and
gives the same layout every time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

__all__ = ["N_NEIGHBORS", "MIN_DIST", "umap_layout", "warm_up_umap", "umap_warm_job"]

N_NEIGHBORS = 15
MIN_DIST = 0.1
_warm = False


def warm_up_umap() -> float:
    """Import umap-learn and compile its code on a tiny layout (once per
    process). Returns the seconds it took (0 when already warm)."""
    global _warm
    if _warm:
        return 0.0
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    umap_layout(rng.standard_normal((64, 8)).astype(np.float32), 2, seed=0, n_epochs=10)
    _warm = True
    return time.perf_counter() - t0


def umap_warm_job() -> Iterator[tuple[float, str]]:
    """:func:`warm_up_umap` for a worker; returns the seconds."""
    yield 0.0, "Preparing UMAP (compiled on first use)…"
    return warm_up_umap()


def umap_layout(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0,
                n_epochs: int | None = None, graph=None) -> np.ndarray:
    """UMAP of ``unit_rows`` (n, d) with cosine distance -> (n, k) float32.

    ``n_neighbors`` is 15 (fewer for tiny sets); the spectral start and the
    optimisation are seeded. ``graph`` (a
    :class:`~explorer.core.projection.manifold.knn.NeighbourGraph` of these rows)
    spares umap-learn its own neighbour search.
    """
    import warnings

    with warnings.catch_warnings():  # "Tensorflow not installed; ParametricUMAP will be unavailable"
        warnings.simplefilter("ignore", ImportWarning)
        import umap

    n = len(unit_rows)
    n_neighbors = max(2, min(N_NEIGHBORS, n - 1))
    knn = (None, None, None)
    if graph is not None and len(graph) == n and graph.k >= n_neighbors:
        knn = (*graph.for_umap(n_neighbors), None)
    reducer = umap.UMAP(n_components=n_components, n_neighbors=n_neighbors, min_dist=MIN_DIST,
                        metric="cosine", random_state=seed, n_jobs=1, n_epochs=n_epochs,
                        init="spectral" if n > n_components + 1 else "random", verbose=False, precomputed_knn=knn)
    with warnings.catch_warnings():  # given neighbours leave no search index: the app never calls transform
        warnings.filterwarnings("ignore", message=r"precomputed_knn\[2\]", category=UserWarning)
        return np.asarray(reducer.fit_transform(np.asarray(unit_rows, np.float32)), np.float32)
