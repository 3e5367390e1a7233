"""The layout job: choose the rows (the tokens of interest plus a seeded
sample), read them, lay them out by t-SNE or UMAP and score the layout;
a generator for a worker, stoppable at every yield.

It yields ``(fraction, message)`` for progress and, for t-SNE, a
:class:`ManifoldResult` with ``done=False`` after every chunk of iterations
(the points move while the optimisation converges); it returns the final
:class:`ManifoldResult` with its trustworthiness.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.jobs import run_to_end
from explorer.core.projection.job import choose_fit_set, read_fit_rows
from explorer.core.projection.manifold.quality import layout_trustworthiness
from explorer.core.projection.manifold.result import METHOD_NAMES, ManifoldResult
from explorer.core.projection.manifold.tsne import EARLY_ITER, tsne_steps
from explorer.core.projection.manifold.umap_layout import umap_layout, warm_up_umap

__all__ = ["MANIFOLD_METHODS", "DEFAULT_LAYOUT_SAMPLE", "MIN_LAYOUT_ROWS", "MAX_LAYOUT_ROWS", "LayoutError",
           "manifold_job", "run_manifold"]

MANIFOLD_METHODS = ("tsne", "umap")
#: rows drawn at random (plus the tokens of interest) by default
DEFAULT_LAYOUT_SAMPLE = 3000
#: fewer rows than this make no neighbourhood to keep
MIN_LAYOUT_ROWS = 5
#: more rows than this take minutes on a small machine
MAX_LAYOUT_ROWS = 50_000
#: t-SNE iterations between two frames handed to the window
FRAME_EVERY = 25


class LayoutError(ExplorerError):
    """A t-SNE or UMAP layout cannot be made with these settings."""


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.where(np.isfinite(rows), rows, 0.0).astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def manifold_job(table, method: str, mode: str = "sample", sample_size: int = DEFAULT_LAYOUT_SAMPLE,
                 interest: Sequence[int] = (), n_components: int = 2, seed: int = 0,
                 every: int = FRAME_EVERY, n_jobs: int = 1) -> Iterator:
    """Lay out a fit set of ``table``'s rows by ``method`` (``tsne`` or ``umap``).

    Parameters
    ----------
    table : EmbeddingTable
    method : ``tsne`` or ``umap``
    mode, sample_size, interest, seed : the fit set (see
        :func:`explorer.core.projection.job.choose_fit_set`); ``auto`` means a sample.
    n_components : 2 or 3
    every : t-SNE iterations between intermediate frames.

    Yields ``(fraction, message)`` and, for t-SNE, intermediate
    :class:`ManifoldResult` frames; returns the final one.
    Raises :class:`LayoutError` for an unknown method, a bad number of
    components, or a fit set with fewer than 5 or more than 50,000 rows.
    """
    if method not in MANIFOLD_METHODS:
        raise LayoutError(f"unknown layout method {method!r}; use {' or '.join(MANIFOLD_METHODS)}")
    if n_components not in (2, 3):
        raise LayoutError("a layout has 2 or 3 dimensions")
    t0 = time.perf_counter()
    fit = choose_fit_set(table, "sample" if mode == "auto" else mode, sample_size, interest, seed)
    n = len(fit.ids)
    name = METHOD_NAMES[method]
    if n < MIN_LAYOUT_ROWS:
        raise LayoutError(f"{name} needs at least {MIN_LAYOUT_ROWS} tokens; this fit set has {n}")
    if n > MAX_LAYOUT_ROWS:
        raise LayoutError(f"{name} of {n:,} rows would take too long here; choose a sample of at most "
                          f"{MAX_LAYOUT_ROWS:,} rows")
    yield 0.01, f"Reading {n:,} rows…"
    rows = yield from read_fit_rows(table, fit, 0.01, 0.05)
    unit = _unit(rows)
    del rows

    def frame(coords, iteration, n_iter, done=False, trust=None, trust_rows=0):
        return ManifoldResult(spec=getattr(table, "spec", ""), method=method, mode=fit.mode, ids=fit.ids,
                              coords=coords, unit_rows=unit, description=fit.description, seed=int(seed),
                              iteration=iteration, n_iter=n_iter, done=done, trustworthiness=trust,
                              trust_rows=trust_rows, seconds=time.perf_counter() - t0)

    if method == "tsne":
        yield 0.05, f"Finding the {n:,} rows' nearest neighbours (cosine)…"
        coords, it, total = None, 0, 0
        for it, total, coords in tsne_steps(unit, n_components, seed, every, n_jobs):
            yield frame(coords, it, total)
            phase = " · early exaggeration: neighbours gather first" if it <= EARLY_ITER else ""
            yield 0.05 + 0.85 * it / total, f"t-SNE iteration {it:,} of {total:,}{phase}"
    else:
        yield 0.05, "Preparing UMAP (compiled on first use)…"
        warm_up_umap()
        yield 0.2, f"UMAP of {n:,} rows (cosine)…"
        coords = umap_layout(unit, n_components, seed)
        it = total = 0
    yield 0.92, "Measuring the layout's trustworthiness…"
    trust, trust_rows = layout_trustworthiness(unit, coords, seed)
    yield 1.0, "Done"
    return frame(coords, it, total, done=True, trust=trust, trust_rows=trust_rows)


def run_manifold(table, method: str, **kwargs) -> ManifoldResult:
    """:func:`manifold_job` run to its end on this thread (command line, bench, tests)."""
    return run_to_end(manifold_job(table, method, **kwargs))
