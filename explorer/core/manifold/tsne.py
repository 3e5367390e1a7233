"""t-SNE with openTSNE, one chunk of iterations at a time, so that a worker
can hand each intermediate layout to the window (the points move while the
optimisation converges) and stop between chunks.

openTSNE's own ``TSNE.fit`` runs the standard schedule in one call; here
the same schedule is driven through its lower-level pieces (affinities, PCA
initialisation, :class:`openTSNE.TSNEEmbedding.optimize` in place, which
keeps the optimiser's gains between calls): :data:`EARLY_ITER` iterations
with early exaggeration 12 and momentum 0.5, then :data:`N_ITER` with
momentum 0.8.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["EARLY_ITER", "N_ITER", "PERPLEXITY", "tsne_steps"]

EARLY_ITER = 250
N_ITER = 500
PERPLEXITY = 30.0
EARLY_EXAGGERATION = 12.0
#: Barnes-Hut gradients for fewer points than this, FFT-interpolated ones from here on
BH_BELOW = 10_000


def tsne_steps(unit_rows: np.ndarray, n_components: int = 2, seed: int = 0, every: int = 25,
               n_jobs: int = 1) -> Iterator[tuple[int, int, np.ndarray]]:
    """Lay out ``unit_rows`` (n, d) float32 by t-SNE with cosine affinities.

    Yields ``(iteration, total, coords)`` with coords (n, k) float32: first
    the PCA start (iteration 0), then after every ``every`` iterations.
    The same seed gives the same layout (openTSNE's exact neighbours, its
    seeded PCA start and a fixed order of work).
    """
    from openTSNE import TSNEEmbedding, affinity, initialization

    rows = np.ascontiguousarray(unit_rows, dtype=np.float64)
    n = len(rows)
    perplexity = float(min(PERPLEXITY, max(1.0, (n - 1) / 3.0)))
    total = EARLY_ITER + N_ITER
    init = initialization.pca(rows, n_components=n_components, random_state=seed, verbose=False)
    yield 0, total, np.asarray(init, np.float32)
    aff = affinity.PerplexityBasedNN(rows, perplexity=perplexity, metric="cosine", method="exact" if n <= 10_000 else "annoy",
                                     n_jobs=n_jobs, random_state=seed, verbose=False)
    # openTSNE's own rule: Barnes-Hut below 10,000 points (and in 3-D), FFT above
    method = "fft" if n >= BH_BELOW and n_components <= 2 else "bh"
    emb = TSNEEmbedding(init, aff, negative_gradient_method=method,
                        n_jobs=n_jobs, random_state=seed, verbose=False)
    done = 0
    for n_iter, exaggeration, momentum in ((EARLY_ITER, EARLY_EXAGGERATION, 0.5), (N_ITER, None, 0.8)):
        left = n_iter
        while left > 0:
            step = min(every, left)
            emb.optimize(n_iter=step, exaggeration=exaggeration, momentum=momentum, inplace=True)
            left -= step
            done += step
            yield done, total, np.asarray(emb, np.float32).copy()
