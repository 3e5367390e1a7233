"""UMAP: our fuzzy graph, umap-learn's spectral start, then our own epochs.

The layout is UMAP's (McInnes, Healy & Melville 2018) step for step: every
row's nearest neighbours become a fuzzy graph
(:mod:`~explorer.core.projection.manifold.fuzzy_graph`, the same graph as
umap-learn's ``fuzzy_simplicial_set``, whose code is compiled again in
every session), umap-learn lays the graph out spectrally for a start; then
the points are moved for umap-learn's default number of epochs. Those
epochs are :mod:`~explorer.core.projection.manifold.umap_epochs`' and not
umap-learn's: given a seed, umap-learn runs them on one core, and they were
most of its time (about 10 of 15 s on MiniLM's 30,522 rows). Ours run on
every core and give the same layout on any number of them; they hand a frame
to the window every few epochs, so the points move while UMAP converges,
and a worker can stop between two frames.

Every piece of our own is compiled by numba once and kept in its on-disk
cache; the first UMAP of a session still imports umap-learn and loads that
code: 2.4–2.7 s here (8–9 s while umap-learn's fuzzy graph was used, compiled
anew in every session). :func:`warm_up_umap` pays that on a tiny table,
inside a worker's job, never on the GUI thread.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator

import numpy as np

from explorer.core.projection.manifold.fuzzy_graph import fuzzy_graph
from explorer.core.projection.manifold.umap_epochs import FRAME_EVERY, epochs_for, optimize_layout, sampled_edges

__all__ = ["N_NEIGHBORS", "MIN_DIST", "umap_steps", "umap_layout", "warm_up_umap", "umap_warm_job"]

N_NEIGHBORS = 15
MIN_DIST = 0.1
#: umap-learn's largest start coordinate (its ``noisy_scale_coords``)
_START_SCALE = 10.0
_warm = False


def warm_up_umap() -> float:
    """Import umap-learn and compile the code of a layout (the fuzzy graph and
    the epochs) on a tiny table, once per process. Returns the seconds it took
    (0 when already warm)."""
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


def _umap():
    with warnings.catch_warnings():  # "Tensorflow not installed; ParametricUMAP will be unavailable"
        warnings.simplefilter("ignore", ImportWarning)
        import umap.spectral
        import umap.umap_
    return umap


def umap_steps(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0, n_epochs: int | None = None,
               graph=None, every: int = FRAME_EVERY) -> Iterator[tuple[int, int, np.ndarray]]:
    """UMAP of ``unit_rows`` (n, d) with cosine distance.

    Yields ``(epoch, total, coords)`` with coords (n, k) float32 (a copy) every
    ``every`` epochs and at the end. ``n_neighbors`` is 15 (fewer for tiny
    sets); the spectral start and the optimisation are seeded. ``graph`` (a
    :class:`~explorer.core.projection.manifold.knn.NeighbourGraph` of these rows
    with at least 16 columns) gives the neighbours; without it they are
    searched exactly here. ``n_epochs`` None: umap-learn's default (500 up to
    10,000 rows, 200 above).
    """
    from explorer.core.jobs import run_to_end
    from explorer.core.projection.manifold.knn import knn_graph_job

    umap = _umap()
    unit_rows = np.ascontiguousarray(unit_rows, dtype=np.float32)
    n = len(unit_rows)
    n_neighbors = max(2, min(N_NEIGHBORS, n - 1))
    if graph is None or len(graph) != n or graph.k < n_neighbors:
        graph = run_to_end(knn_graph_job(unit_rows, k=n_neighbors))
    indices, distances = graph.for_umap(n_neighbors)
    random_state = np.random.RandomState(seed)
    fuzzy = fuzzy_graph(indices, distances)
    total = int(n_epochs) if n_epochs else epochs_for(n)
    fuzzy = sampled_edges(fuzzy, total)
    if n > n_components + 1:
        with warnings.catch_warnings():  # a graph of several pieces: umap-learn says so, and lays them out apart
            warnings.simplefilter("ignore", UserWarning)
            start = umap.spectral.spectral_layout(unit_rows, fuzzy, n_components, random_state, metric="cosine")
        start = umap.umap_.noisy_scale_coords(start, random_state, max_coord=_START_SCALE, noise=0.0001)
    else:
        start = random_state.uniform(-_START_SCALE, _START_SCALE, (n, n_components))
    span = np.maximum(start.max(0) - start.min(0), 1e-12)
    start = (_START_SCALE * (start - start.min(0)) / span).astype(np.float32)
    a, b = umap.umap_.find_ab_params(1.0, MIN_DIST)
    for done, coords in optimize_layout(start, fuzzy, total, a, b, seed, every=every):
        yield done, total, coords


def umap_layout(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0,
                n_epochs: int | None = None, graph=None) -> np.ndarray:
    """The final layout of :func:`umap_steps`, (n, k) float32."""
    *_, (_, _, coords) = umap_steps(unit_rows, n_components, seed, n_epochs, graph, every=10 ** 9)
    return coords
