"""t-SNE with openTSNE, one chunk of iterations at a time, so that a worker
can hand each intermediate layout to the window (the points move while the
optimisation converges) and stop between chunks.

openTSNE's ``TSNE.fit`` runs its schedule in one call. Here the same
estimator prepares the embedding (cosine affinities, its default optimiser
settings) with ``prepare_initial`` from an exact PCA start, and its two phases run
through :meth:`openTSNE.TSNEEmbedding.optimize` in place, a chunk at a time
(the optimiser keeps its gains between calls): :data:`EARLY_ITER`
iterations of early exaggeration, then :data:`N_ITER` without.

During early exaggeration the attraction is multiplied by 12 and the points
first gather (often on a line), then spread once it ends; that is t-SNE's
own behaviour, and the window shows it as it happens.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from explorer.core.geometry.vectors import pca_project

__all__ = ["EARLY_ITER", "N_ITER", "PERPLEXITY", "tsne_steps"]

EARLY_ITER = 250
N_ITER = 500
PERPLEXITY = 30.0
#: exact neighbours up to this many rows (seeded Annoy trees above)
EXACT_BELOW = 10_000


def tsne_steps(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0, every: int = 25,
               n_jobs: int = 1) -> Iterator[tuple[int, int, np.ndarray]]:
    """Lay out ``unit_rows`` (n, d) float32 by t-SNE with cosine affinities.

    Yields ``(iteration, total, coords)`` with coords (n, k) float32: first
    the PCA start (iteration 0), then after every ``every`` iterations.
    The same seed gives the same layout.
    """
    # the start first, drawn while openTSNE is imported and the neighbours are found: the exact
    # PCA of the rows scaled as openTSNE scales its own "pca" start (std 1e-4 along the first axis)
    start = pca_project(unit_rows, n_components=n_components, seed=seed).coords.astype(np.float64)
    start /= max(float(np.std(start[:, 0])), 1e-12) * 10_000
    total = EARLY_ITER + N_ITER
    yield 0, total, start.astype(np.float32)

    from openTSNE import TSNE

    rows = np.ascontiguousarray(unit_rows, dtype=np.float64)
    n = len(rows)
    tsne = TSNE(n_components=n_components, perplexity=float(min(PERPLEXITY, max(1.0, (n - 1) / 3.0))),
                early_exaggeration_iter=EARLY_ITER, n_iter=N_ITER, metric="cosine",
                neighbors="exact" if n < EXACT_BELOW else "annoy", negative_gradient_method="auto",
                n_jobs=n_jobs, random_state=seed, verbose=False)
    emb = tsne.prepare_initial(rows, initialization=start)
    done = 0
    for n_iter, exaggeration, momentum in ((EARLY_ITER, tsne.early_exaggeration, tsne.initial_momentum),
                                           (N_ITER, tsne.exaggeration, tsne.final_momentum)):
        left = n_iter
        while left > 0:
            step = min(every, left)
            emb.optimize(n_iter=step, exaggeration=exaggeration, momentum=momentum, inplace=True,
                         propagate_exception=True)
            left -= step
            done += step
            yield done, total, np.asarray(emb, np.float32).copy()
