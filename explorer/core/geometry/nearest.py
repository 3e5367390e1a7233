"""Nearest neighbours by cosine and analogies, in bounded memory. No Qt here.

Row arithmetic (unit rows) comes from :mod:`explorer.core.geometry.vectors`.
A table held in memory is searched with its cached unit rows; a table too
big to hold is streamed (:func:`iter_search`): the first search measures
every row's norm in an exact pass, later ones multiply the stored rows in
their own dtype (a bfloat16 file through its memory map, at memory speed)
and score their best candidates exactly. Many queries are answered in one
pass over the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.geometry.scan import cached_row_norms, iter_fast_products, iter_scan
from explorer.core.geometry.vectors import normalize_rows, row_products, vector_norm
from explorer.core.jobs import run_to_end

__all__ = ["Neighbor", "nearest_neighbors", "nearest_neighbors_many", "iter_neighbors_many", "iter_search", "analogy"]

_EPS = 1e-12
#: a streamed block of rows holds at most this many bytes of float32, and a
#: block of scores (rows x queries) at most this many values: searching a
#: 10,000,000 x 65,536 table must not ask for a block of several GB
_BLOCK_BYTES = 64 * 1024 * 1024
_SCORE_VALUES = 16 * 1024 * 1024
#: candidates per query kept from a rough (bfloat16) pass, then scored exactly:
#: far more than its rounding (a few 1e-5 in cosine) can reorder
_ROUGH_EXTRA = 64


@dataclass(frozen=True)
class Neighbor:
    id: int
    cosine: float


def _topk(scores: np.ndarray, k: int) -> np.ndarray:
    k = min(k, scores.size)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    idx = np.argpartition(-scores, k - 1)[:k]
    return idx[np.argsort(-scores[idx], kind="stable")]


def nearest_neighbors(
    table,
    query: np.ndarray,
    k: int = 5,
    exclude: Sequence[int] = (),
    block_rows: int = 32768,
) -> list[Neighbor]:
    """Top-k rows by cosine with ``query`` over the whole (trained) vocabulary.

    Parameters
    ----------
    table : EmbeddingTable or ndarray (V, d)
        Searched in blocks, so a table larger than memory works too.
    query : ndarray (d,)
    exclude : ids never returned (the query tokens themselves).

    Rows with zero norm or non-finite values are skipped.
    """
    q64 = np.asarray(query, dtype=np.float64).reshape(-1)
    block_rows = max(1, min(int(block_rows), _BLOCK_BYTES // (4 * max(1, q64.size))))
    with np.errstate(over="ignore", invalid="ignore"):
        qn = vector_norm(q64)  # float64: a float32 norm overflows for values above ~1.8e19
    if not np.isfinite(qn) or qn == 0.0:
        return []
    q = (q64 / qn).astype(np.float32)
    excl = set(int(i) for i in exclude)
    unit = table.unit_matrix() if hasattr(table, "unit_matrix") else None
    if unit is not None:
        return _search_unit(unit, q, excl, k)
    if not isinstance(table, np.ndarray):
        return run_to_end(iter_search(table, q[None, :], k, [sorted(excl)]))[0]
    best_ids: list[np.ndarray] = []
    best_scores: list[np.ndarray] = []
    for start, blk in _blocks(table, block_rows):
        with np.errstate(over="ignore", invalid="ignore"):
            # float64 sums of squares: a float32 norm overflows above ~1.8e19 per value
            norms = np.sqrt(np.einsum("ij,ij->i", blk, blk, dtype=np.float64))
            scores = (blk @ q) / np.maximum(norms, _EPS)
        scores[~np.isfinite(scores) | (norms == 0)] = -np.inf
        for i in excl:
            if start <= i < start + len(blk):
                scores[i - start] = -np.inf
        top = _topk(scores, k)
        best_ids.append(top + start)
        best_scores.append(scores[top])
    if not best_ids:
        return []
    ids = np.concatenate(best_ids)
    scores = np.concatenate(best_scores)
    order = _topk(scores, k)
    return [Neighbor(int(ids[i]), float(scores[i])) for i in order if np.isfinite(scores[i])]


def _search_unit(unit: np.ndarray, q: np.ndarray, excl: set[int], k: int) -> list[Neighbor]:
    """Top-k of a cached unit-norm table for a unit query: one product, no norms recomputed per query.
    The window's thread searches a small table itself (``neighbors.INLINE_VALUES``): the product goes
    through :func:`~explorer.core.geometry.vectors.row_products` (numpy's own loops; a worker's big
    table, BLAS). In BLAS it waited for a worker's product on numpy's shared pool of threads."""
    with np.errstate(invalid="ignore"):
        scores = row_products(unit, q)
    scores[~np.isfinite(scores)] = -np.inf
    for i in excl:
        if 0 <= i < scores.size:
            scores[i] = -np.inf
    top = _topk(scores, k)
    return [Neighbor(int(i), float(scores[i])) for i in top if np.isfinite(scores[i])]


def nearest_neighbors_many(
    table,
    queries: np.ndarray,
    k: int = 5,
    exclude: Sequence[Sequence[int]] = (),
) -> list[list[Neighbor]]:
    """:func:`nearest_neighbors` for many queries in one pass over the table (:func:`iter_neighbors_many`
    run to its end)."""
    return run_to_end(iter_neighbors_many(table, queries, k, exclude))


def iter_neighbors_many(
    table,
    queries: np.ndarray,
    k: int = 5,
    exclude: Sequence[Sequence[int]] = (),
) -> Iterator[tuple[float, str]]:
    """Generator for a worker: :func:`nearest_neighbors` for many queries in one pass over the table,
    yielding progress after each block of rows (a job stops there when cancelled: 64 queries of a
    10,000,000-row table take seconds).

    Each block of rows is read once for all queries and scored with one
    matrix product, so n queries cost one read of the table instead of n.
    Memory stays bounded: blocks of at most 64 MB of rows and 16 M scores.

    Parameters
    ----------
    table : EmbeddingTable or ndarray (V, d)
    queries : ndarray (n, d)
    k : int
    exclude : sequence of n sequences of ids
        Ids never returned for each query (its own token, typically).

    Yields
    ------
    (fraction, message)

    Returns
    -------
    list of n lists of Neighbor
        Best first; [] for a query with zero or non-finite norm.
    """
    q64 = np.asarray(queries, dtype=np.float64)
    n = q64.shape[0]
    if n == 0:
        return []
    d = q64.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(q64, axis=1)
        ok = np.isfinite(norms) & (norms > 0)
        q = (q64 / np.where(ok, norms, 1.0)[:, None]).astype(np.float32)
    excl = [set(int(i) for i in (exclude[j] if j < len(exclude) else ())) for j in range(n)]
    best_ids: list[list[np.ndarray]] = [[] for _ in range(n)]
    best_scores: list[list[np.ndarray]] = [[] for _ in range(n)]
    unit = table.unit_matrix() if hasattr(table, "unit_matrix") else None
    if unit is not None:
        blocks = ((s, unit[s : s + _SCORE_VALUES // max(1, n)], True)
                  for s in range(0, unit.shape[0], max(1, _SCORE_VALUES // max(1, n))))
    elif not isinstance(table, np.ndarray):
        return (yield from iter_search(table, queries, k, exclude))
    else:
        rows = max(1, min(_BLOCK_BYTES // (4 * max(1, d)), _SCORE_VALUES // max(1, n)))
        blocks = ((s, b, False) for s, b in _blocks(table, rows))
    live = np.nonzero(ok)[0]
    rows_in_all = max(1, (unit if unit is not None else table).shape[0])
    for start, blk, is_unit in blocks:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scores = q[live] @ blk.T  # (live queries, rows): each query's scores contiguous
            if not is_unit:
                bn = np.sqrt(np.einsum("ij,ij->i", blk, blk, dtype=np.float64))
                scores = scores / np.maximum(bn, _EPS)[None, :]
                scores[:, bn == 0] = -np.inf
        scores[~np.isfinite(scores)] = -np.inf
        stop = start + blk.shape[0]
        for col, j in enumerate(live):
            s_j = scores[col]
            for i in excl[j]:
                if start <= i < stop:
                    s_j[i - start] = -np.inf
            top = _topk(s_j, k)
            best_ids[j].append(top + start)
            best_scores[j].append(s_j[top])
        yield stop / rows_in_all, f"Searching neighbours… {stop:,} of {rows_in_all:,} rows"
    out: list[list[Neighbor]] = []
    for j in range(n):
        if not best_ids[j]:
            out.append([])
            continue
        ids = np.concatenate(best_ids[j])
        sc = np.concatenate(best_scores[j])
        order = _topk(sc, k)
        out.append([Neighbor(int(ids[i]), float(sc[i])) for i in order if np.isfinite(sc[i])])
    return out


def iter_search(
    table,
    queries: np.ndarray,
    k: int = 10,
    exclude: Sequence[Sequence[int]] = (),
) -> Iterator[tuple[float, str]]:
    """Generator for a worker: the ``k`` nearest trained rows of each query
    by cosine, in one pass over a table too big to hold.

    Without known row norms the pass is exact and measures them (kept for
    the next search, :func:`explorer.core.geometry.scan.cached_row_norms`); with them,
    rows are multiplied in their stored dtype (bfloat16 natively) and the
    best ``k + 64`` candidates of each query are scored again exactly.

    Parameters
    ----------
    table : EmbeddingTable
    queries : ndarray (n, d)
    k : int
    exclude : sequence of n sequences of ids

    Yields
    ------
    (fraction, message)

    Returns
    -------
    list of n lists of Neighbor
        Best first; [] for a query with zero or non-finite norm. Rows with
        zero norm or non-finite values never appear.
    """
    q64 = np.asarray(queries, dtype=np.float64).reshape(-1, table.dim)
    n, total = len(q64), table.trained_rows
    with np.errstate(over="ignore", invalid="ignore"):
        qn = np.linalg.norm(q64, axis=1)
    live = np.nonzero(np.isfinite(qn) & (qn > 0))[0]
    if n == 0 or len(live) == 0:
        return [[] for _ in range(n)]
    unit = (q64[live] / qn[live, None]).astype(np.float32)
    norms = cached_row_norms(table)
    want = min(total, k + _ROUGH_EXTRA) if norms is not None else min(total, k)
    best: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in live]
    if norms is not None:
        passes = ((start, prod, norms[start : start + len(prod)]) for start, prod in
                  iter_fast_products(table, unit, stop=total))
    else:
        passes = ((b.start, b.products, b.norms) for b in iter_scan(table, unit) if b.start < total)
    for start, prod, block_norms in passes:
        stop = min(start + len(prod), total)
        prod, block_norms = prod[: stop - start], block_norms[: stop - start]
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = prod / block_norms[:, None]
        scores[~np.isfinite(scores) | ~(block_norms > 0)[:, None]] = -np.inf
        odd = np.nonzero(~np.isfinite(block_norms))[0]
        if len(odd):  # squares past float32's range, or non-finite values: ask the rows themselves
            scores[odd] = np.stack([_exact_cosines(table, odd + start, u.astype(np.float64)) for u in unit], 1)
        for col, j in enumerate(live):
            s_j = scores[:, col]
            for i in (exclude[j] if j < len(exclude) else ()):
                if start <= int(i) < stop:
                    s_j[int(i) - start] = -np.inf
            top = _topk(s_j, want)
            best[col].append((top + start, s_j[top]))
        yield stop / total, f"Searching neighbours… {stop:,} of {total:,} rows"
    out: list[list[Neighbor]] = [[] for _ in range(n)]
    for col, j in enumerate(live):
        ids = np.concatenate([b[0] for b in best[col]])
        scores = np.concatenate([b[1] for b in best[col]])
        order = _topk(scores, want)
        ids, scores = ids[order], scores[order]
        ids = ids[np.isfinite(scores)]
        if norms is not None and len(ids):
            scores = _exact_cosines(table, ids, q64[j] / qn[j])
            keep = np.isfinite(scores)
            ids, scores = ids[keep], scores[keep]
            order = np.lexsort((ids, -scores))[:k]
            ids, scores = ids[order], scores[order]
        else:
            scores = scores[: len(ids)]
        out[j] = [Neighbor(int(i), float(c)) for i, c in zip(ids[:k], scores[:k])]
    return out


def _exact_cosines(table, ids: np.ndarray, unit_query: np.ndarray) -> np.ndarray:
    """Cosines of rows ``ids`` with a unit query, float64 from the rows themselves."""
    rows = table.rows(ids).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        norms = np.linalg.norm(rows, axis=1)
        out = (rows @ unit_query) / norms
    out[~np.isfinite(out) | (norms == 0)] = -np.inf
    return out


def _blocks(table, block_rows):
    if isinstance(table, np.ndarray):
        for s in range(0, table.shape[0], block_rows):
            yield s, np.asarray(table[s : s + block_rows], dtype=np.float32)
    else:
        yield from table.iter_blocks(block_rows, stop=table.trained_rows)


def analogy(table, a: int, b: int, c: int, k: int = 5) -> list[Neighbor]:
    """Top-k answers to a - b + c (e.g. king - man + woman) by cosine.

    The three inputs are excluded from the answers. Works on unit-normalised
    rows, as is usual for word analogies.
    """

    rows = table[[a, b, c]] if isinstance(table, np.ndarray) else table.rows([a, b, c])
    ra, rb, rc = normalize_rows(rows)
    return nearest_neighbors(table, ra - rb + rc, k=k, exclude=(a, b, c))
