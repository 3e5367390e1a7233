"""t-SNE with openTSNE, one chunk of iterations at a time, so that a worker
can hand each intermediate layout to the window (the points move while the
optimisation converges) and stop between chunks.

openTSNE's ``TSNE.fit`` runs its schedule in one call. Here the same
estimator prepares the embedding (cosine affinities, its default optimiser
settings) with ``prepare_initial`` from an exact PCA start, and its two phases run
through :meth:`openTSNE.TSNEEmbedding.optimize` in place, a chunk at a time
(the optimiser keeps its gains between calls): :data:`EARLY_ITER`
iterations of early exaggeration, then :data:`N_ITER` without (:data:`N_ITER_BIG`
from :data:`BIG_LAYOUT` rows: openTSNE's learning rate grows with the rows,
n / 12, and on MiniLM's 30,522 rows 250 iterations after the exaggeration
score as well as 500, trustworthiness 0.908 / 0.861 at 5 / 15 neighbours
against 0.907 / 0.860, in half the time; the last iterations of a spread
layout are the dearest, its FFT grid the largest).

During early exaggeration the attraction is multiplied by 12 and the points
first gather (often on a line), then spread once it ends; that is t-SNE's
own behaviour, and the window shows it as it happens.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from explorer.core.geometry.vectors import pca_project

__all__ = ["EARLY_ITER", "N_ITER", "N_ITER_BIG", "PERPLEXITY", "tsne_start", "tsne_steps"]

EARLY_ITER = 250
N_ITER = 500
N_ITER_BIG = 250
BIG_LAYOUT = 10_000
PERPLEXITY = 30.0
#: exact neighbours up to this many rows (seeded Annoy trees above)
EXACT_BELOW = 10_000


def tsne_start(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0) -> np.ndarray:
    """The layout t-SNE starts from, (n, k) float64: the exact PCA of the rows,
    scaled as openTSNE scales its own "pca" start (std 1e-4 along the first axis).
    Drawn at once, while the neighbours are found."""
    start = pca_project(unit_rows, n_components=n_components, seed=seed).coords.astype(np.float64)
    start /= max(float(np.std(start[:, 0])), 1e-12) * 10_000
    return start


def tsne_steps(unit_rows: np.ndarray, start: np.ndarray, seed: int = 0, every: int = 25,
               n_jobs: int | None = None, graph=None) -> Iterator[tuple[int, int, np.ndarray]]:
    """Lay out ``unit_rows`` (n, d) float32 by t-SNE with cosine affinities,
    from ``start`` (n, k) (see :func:`tsne_start`).

    Yields ``(iteration, total, coords)`` with coords (n, k) float32 after
    every ``every`` iterations. The same seed gives the same layout. ``graph`` (a
    :class:`~explorer.core.projection.manifold.knn.NeighbourGraph` of these rows
    with at least 3 × perplexity neighbours) spares openTSNE its own search.
    ``n_jobs`` None: as many threads as torch uses (all cores on the command
    line, all but one in the window's workers); the layout does not depend on it.
    """
    import torch
    from openTSNE import TSNE

    n = len(unit_rows)
    n_jobs = torch.get_num_threads() if n_jobs is None else int(n_jobs)
    late = N_ITER_BIG if n >= BIG_LAYOUT else N_ITER
    total = EARLY_ITER + late
    n_components = start.shape[1]
    perplexity = float(min(PERPLEXITY, max(1.0, (n - 1) / 3.0)))
    tsne = TSNE(n_components=n_components, perplexity=perplexity,
                early_exaggeration_iter=EARLY_ITER, n_iter=late, metric="cosine",
                neighbors="exact" if n < EXACT_BELOW else "annoy", negative_gradient_method="auto",
                n_jobs=n_jobs, random_state=seed, verbose=False)
    want = min(n - 1, int(3 * perplexity))
    if graph is not None and len(graph) == n and graph.k - 1 >= want:
        from openTSNE.affinity import PerplexityBasedNN
        from openTSNE.nearest_neighbors import PrecomputedNeighbors

        affinities = PerplexityBasedNN(knn_index=PrecomputedNeighbors(*graph.for_tsne(want)), perplexity=perplexity,
                                       n_jobs=n_jobs, random_state=seed)
        emb = tsne.prepare_initial(affinities=affinities, initialization=start)
    else:
        emb = tsne.prepare_initial(np.ascontiguousarray(unit_rows, dtype=np.float64), initialization=start)
    done = 0
    for n_iter, exaggeration, momentum in ((EARLY_ITER, tsne.early_exaggeration, tsne.initial_momentum),
                                           (late, tsne.exaggeration, tsne.final_momentum)):
        left = n_iter
        while left > 0:
            step = min(every, left)
            emb.optimize(n_iter=step, exaggeration=exaggeration, momentum=momentum, inplace=True,
                         propagate_exception=True)
            left -= step
            done += step
            yield done, total, np.asarray(emb, np.float32).copy()
