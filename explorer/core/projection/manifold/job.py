"""The layout job: choose the rows (the tokens of interest plus a seeded
sample), read them, lay them out by t-SNE or UMAP and score the layout;
a generator for a worker, stoppable at every yield.

It yields ``(fraction, message)`` for progress and a
:class:`ManifoldResult` with ``done=False`` after every chunk of iterations
(the points move while the optimisation converges); it returns the final
:class:`ManifoldResult` with its trustworthiness.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.jobs import run_to_end, scaled
from explorer.core.projection.job import choose_fit_set, read_fit_rows
from explorer.core.projection.manifold.knn import knn_graph_job, rows_digest
from explorer.core.projection.manifold.layout_cache import CachedLayout, LayoutCache, layout_key
from explorer.core.projection.manifold.quality import layout_trustworthiness
from explorer.core.projection.manifold.result import METHOD_NAMES, ManifoldResult
from explorer.core.projection.manifold.tsne import EARLY_ITER, tsne_start, tsne_steps
from explorer.core.projection.manifold.umap_layout import umap_steps, warm_up_umap

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
                 every: int = FRAME_EVERY, n_jobs: int | None = None, cache: LayoutCache | None = None,
                 recompute: bool = False) -> Iterator:
    """Lay out a fit set of ``table``'s rows by ``method`` (``tsne`` or ``umap``).

    Parameters
    ----------
    table : EmbeddingTable
    method : ``tsne`` or ``umap``
    mode, sample_size, interest, seed : the fit set (see
        :func:`explorer.core.projection.job.choose_fit_set`); ``auto`` means a sample.
    n_components : 2 or 3
    every : t-SNE iterations between intermediate frames.
    cache : where finished layouts are kept (None: nowhere). A layout of the same
        rows (by value), ids, method and settings found there is returned at once.
    recompute : compute even when the cache holds the layout (and store the new one).

    Yields ``(fraction, message)`` and intermediate
    :class:`ManifoldResult` frames; returns the final one. The rows' nearest
    neighbours are found once per session (:mod:`~explorer.core.projection.manifold.knn`).
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
    digest = rows_digest(unit)
    key = layout_key(digest, fit.ids, method, {"dims": n_components, "seed": int(seed)})

    nearest = {}  # shared by the frames: where the tokens outside the layout are placed from

    def frame(coords, iteration, n_iter, done=False, trust=None, trust_rows=0, cached=False, note=""):
        return ManifoldResult(spec=getattr(table, "spec", ""), method=method, mode=fit.mode, ids=fit.ids,
                              coords=coords, unit_rows=unit, description=fit.description, seed=int(seed),
                              iteration=iteration, n_iter=n_iter, done=done, trustworthiness=trust,
                              trust_rows=trust_rows, seconds=time.perf_counter() - t0, cached=cached,
                              cache_note=note, nearest=nearest)

    stored = cache.get(key, n, n_components) if cache is not None and not recompute else None
    if stored is not None:
        yield 1.0, f"{name} of these {n:,} rows, as computed before"
        return frame(stored.coords, stored.iteration, stored.n_iter, done=True, trust=stored.trustworthiness,
                     trust_rows=stored.trust_rows, cached=True)
    if method == "tsne":
        start = tsne_start(unit, n_components, seed)
        yield frame(start.astype(np.float32), 0, 0)
    graph = yield from scaled(knn_graph_job(unit, digest=digest), 0.05, 0.3 if method == "tsne" else 0.15)
    if method == "tsne":
        coords, it, total = None, 0, 0
        for it, total, coords in tsne_steps(unit, start, seed, every, n_jobs, graph=graph):
            yield frame(coords, it, total)
            phase = " · early exaggeration: neighbours gather first" if it <= EARLY_ITER else ""
            yield 0.3 + 0.6 * it / total, f"t-SNE iteration {it:,} of {total:,}{phase}"
    else:
        yield 0.15, "Preparing UMAP (compiled on first use)…"
        warm_up_umap()
        yield 0.2, f"UMAP of {n:,} rows (cosine)…"
        coords, it, total = None, 0, 0
        for it, total, coords in umap_steps(unit, n_components, seed, graph=graph):
            yield frame(coords, it, total)
            yield 0.2 + 0.7 * it / total, f"UMAP epoch {it:,} of {total:,}"
    yield 0.92, "Measuring the layout's trustworthiness…"
    trust, trust_rows = layout_trustworthiness(unit, coords, seed)
    yield 1.0, "Done"
    seconds = time.perf_counter() - t0
    note = "" if cache is None else cache.put(key, CachedLayout(coords, trust, trust_rows, it, total, seconds))
    return frame(coords, it, total, done=True, trust=trust, trust_rows=trust_rows, note=note)


def run_manifold(table, method: str, **kwargs) -> ManifoldResult:
    """:func:`manifold_job` run to its end on this thread (command line, bench, tests)."""
    return run_to_end(manifold_job(table, method, **kwargs))
