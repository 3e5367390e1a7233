"""UMAP: our fuzzy graph, a PCA start, then our own epochs.

The layout is UMAP's (McInnes, Healy & Melville 2018) with umap-learn's
defaults (15 neighbours, cosine, min_dist 0.1, its number of epochs), from
the shared neighbour graph:

- the fuzzy graph is :mod:`~explorer.core.projection.manifold.fuzzy_graph`'s,
  the same as umap-learn's ``fuzzy_simplicial_set`` (the tests compare
  them), whose code umap-learn compiles again in every session;
- the points start from the rows' PCA, where umap-learn starts from a
  spectral layout of the graph. Kobak & Linderman (2021) found the two
  starts keep the global layout equally well; on MiniLM's 30,522 rows the
  PCA takes 0.03 s against 0.75 s, at a trustworthiness of .843–.849 with 5
  neighbours and .813–.819 with 15, against .844–.846 and .816–.818 from
  the spectral start (three seeds each; umap-learn .822 and .809);
- the epochs are :mod:`~explorer.core.projection.manifold.umap_epochs`'.
  Given a seed, umap-learn runs its epochs on one core, and they were most
  of its time (about 10 of 15 s on MiniLM). Ours run on every core and give
  the same layout on any number of them; they hand a frame to the window
  every few epochs, so the points move while UMAP converges, and a worker
  can stop between two frames.

umap-learn itself is not imported (its import takes 2 s). Our compiled
code is kept in numba's on-disk cache; :func:`warm_up_umap` loads it on a
tiny table, inside a worker's job, never on the GUI thread (1.7 s in a
new process, most of it importing torch, which the window has already).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from explorer.core.geometry.vectors import pca_project

__all__ = ["N_NEIGHBORS", "MIN_DIST", "umap_steps", "umap_layout", "warm_up_umap", "umap_warm_job", "curve_parameters",
           "pca_start"]

N_NEIGHBORS = 15
MIN_DIST = 0.1
#: the start's extent along every axis (umap-learn's)
_START_SCALE = 10.0
_warm = False


def warm_up_umap() -> float:
    """Load (or, the first time on a machine, compile) the code of a layout (the
    fuzzy graph, the epochs, the bfloat16 neighbour choice) on a tiny table,
    once per process. Returns the seconds it took (0 when already warm)."""
    global _warm
    if _warm:
        return 0.0
    from explorer.core.projection.manifold.neighbour_choice import choose_neighbours

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((64, 8)).astype(np.float32)
    umap_layout(rows, 2, seed=0, n_epochs=10)
    choose_neighbours(np.zeros((2, 64), np.int16), rows, 0, 3)  # the big tables' neighbour search
    _warm = True
    return time.perf_counter() - t0


def umap_warm_job() -> Iterator[tuple[float, str]]:
    """:func:`warm_up_umap` for a worker; returns the seconds."""
    yield 0.0, "Preparing UMAP (compiled on first use)…"
    return warm_up_umap()


def curve_parameters(spread: float = 1.0, min_dist: float = MIN_DIST) -> tuple[float, float]:
    """UMAP's ``a`` and ``b``: the curve 1 / (1 + a d^2b) fitted by least squares to
    1 up to ``min_dist`` and exp(−(d − min_dist) / spread) beyond, on 300 points
    from 0 to 3 × spread (the paper's appendix; umap-learn's ``find_ab_params``)."""
    from scipy.optimize import curve_fit

    d = np.linspace(0.0, 3.0 * spread, 300)
    target = np.where(d < min_dist, 1.0, np.exp(-(d - min_dist) / spread))
    (a, b), _ = curve_fit(lambda x, a, b: 1.0 / (1.0 + a * x ** (2 * b)), d, target)
    return float(a), float(b)


def pca_start(unit_rows: np.ndarray, n_components: int, seed: int) -> np.ndarray:
    """Where the points start, (n, k) float32: the rows' PCA, stretched to
    [0, 10] along every axis, with a seeded jitter of 1e-4 so that no two
    points start on the same spot."""
    start = pca_project(unit_rows, n_components=n_components, seed=seed).coords.astype(np.float64)
    span = np.maximum(start.max(0) - start.min(0), 1e-12)
    start = _START_SCALE * (start - start.min(0)) / span
    start += np.random.RandomState(seed).normal(scale=1e-4, size=start.shape)
    return start.astype(np.float32)


def umap_steps(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0, n_epochs: int | None = None,
               graph=None, every: int | None = None) -> Iterator[tuple[int, int, np.ndarray]]:
    """UMAP of ``unit_rows`` (n, d) with cosine distance.

    Yields ``(epoch, total, coords)`` with coords (n, k) float32 (a copy) every
    ``every`` epochs and at the end. ``n_neighbors`` is 15 (fewer for tiny
    sets); the PCA start's jitter and the optimisation are seeded. ``graph`` (a
    :class:`~explorer.core.projection.manifold.knn.NeighbourGraph` of these rows
    with at least 16 columns) gives the neighbours; without it they are
    searched exactly here. ``n_epochs`` None: umap-learn's default (500 up to
    10,000 rows, 200 above). ``every`` None: the epochs' own (``FRAME_EVERY``).
    """
    # numba's code, imported here: importing numba takes 0.27 s, and the state imports
    # this module before the window first shows
    from explorer.core.jobs import run_to_end
    from explorer.core.projection.manifold.fuzzy_graph import fuzzy_graph
    from explorer.core.projection.manifold.knn import knn_graph_job
    from explorer.core.projection.manifold.umap_epochs import FRAME_EVERY, epochs_for, optimize_layout, sampled_edges

    every = FRAME_EVERY if every is None else every

    unit_rows = np.ascontiguousarray(unit_rows, dtype=np.float32)
    n = len(unit_rows)
    n_neighbors = max(2, min(N_NEIGHBORS, n - 1))
    if graph is None or len(graph) != n or graph.k < n_neighbors:
        graph = run_to_end(knn_graph_job(unit_rows, k=n_neighbors))
    fuzzy = fuzzy_graph(*graph.for_umap(n_neighbors))
    total = int(n_epochs) if n_epochs else epochs_for(n)
    fuzzy = sampled_edges(fuzzy, total)
    if n > n_components:
        start = pca_start(unit_rows, n_components, seed)
    else:
        start = np.random.RandomState(seed).uniform(0.0, _START_SCALE, (n, n_components)).astype(np.float32)
    a, b = curve_parameters(1.0, MIN_DIST)
    for done, coords in optimize_layout(start, fuzzy, total, a, b, seed, every=every):
        yield done, total, coords


def umap_layout(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0,
                n_epochs: int | None = None, graph=None) -> np.ndarray:
    """The final layout of :func:`umap_steps`, (n, k) float32."""
    *_, (_, _, coords) = umap_steps(unit_rows, n_components, seed, n_epochs, graph, every=10 ** 9)
    return coords
