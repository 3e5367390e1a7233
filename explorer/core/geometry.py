"""Similarity, neighbours, analogies, mean pooling, PCA and random-vector facts.

Functions take plain float32 arrays, or an EmbeddingTable where they must
stream over a vocabulary too large to hold. No Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

__all__ = [
    "normalize_rows",
    "similarity_matrix",
    "Neighbor",
    "nearest_neighbors",
    "analogy",
    "mean_pool",
    "Projection",
    "pca_project",
    "random_cosine_std",
    "random_cosine_bound",
    "shell_volume_fraction",
]

_EPS = 1e-12


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero). Shape kept, float32."""
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(n, _EPS)


def similarity_matrix(x: np.ndarray, metric: str = "cosine") -> np.ndarray:
    """Pairwise similarity of the rows of ``x`` (n, d) -> (n, n) float64.

    metric: ``cosine``, ``dot`` or ``euclidean`` (a distance).
    """
    x = np.asarray(x, dtype=np.float64)
    if metric == "dot":
        return x @ x.T
    if metric == "cosine":
        n = np.linalg.norm(x, axis=1)
        s = (x @ x.T) / np.maximum(np.outer(n, n), _EPS)
        return np.clip(s, -1.0, 1.0)
    if metric == "euclidean":
        sq = (x * x).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0)
        np.fill_diagonal(d2, 0.0)
        return np.sqrt(d2)
    raise ValueError(f"unknown metric {metric!r}; use cosine, dot or euclidean")


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
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    qn = float(np.linalg.norm(q))
    if not np.isfinite(qn) or qn == 0.0:
        return []
    q = q / qn
    excl = set(int(i) for i in exclude)
    unit = table.unit_matrix() if hasattr(table, "unit_matrix") else None
    if unit is not None:
        # a cached unit-norm table: one mat-vec, no norms recomputed per query
        with np.errstate(invalid="ignore"):
            scores = unit @ q
        scores[~np.isfinite(scores)] = -np.inf
        for i in excl:
            if 0 <= i < scores.size:
                scores[i] = -np.inf
        top = _topk(scores, k)
        return [Neighbor(int(i), float(scores[i])) for i in top if np.isfinite(scores[i])]
    best_ids: list[np.ndarray] = []
    best_scores: list[np.ndarray] = []
    for start, blk in _blocks(table, block_rows):
        norms = np.linalg.norm(blk, axis=1)
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


def mean_pool(rows: np.ndarray) -> np.ndarray:
    """One vector for a word split into pieces: the mean of its pieces' rows.

    rows: (n_pieces, d) -> (d,)
    """
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError("mean pooling needs at least one row")
    return rows.mean(axis=0)


@dataclass
class Projection:
    """PCA of a set of rows.

    Attributes
    ----------
    ids : ndarray (n,) int64
        The rows that were fitted and projected.
    coords : ndarray (n, k) float32
        Their coordinates on the first k principal components.
    explained : ndarray (k,) float64
        Explained variance ratio of each component.
    components : ndarray (k, d) float32
    mean : ndarray (d,) float32
    """

    ids: np.ndarray
    coords: np.ndarray
    explained: np.ndarray
    components: np.ndarray
    mean: np.ndarray

    def transform(self, rows: np.ndarray) -> np.ndarray:
        return (np.asarray(rows, np.float32) - self.mean) @ self.components.T


def pca_project(
    rows: np.ndarray,
    ids: np.ndarray | None = None,
    n_components: int = 10,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Projection:
    """PCA of ``rows`` (n, d) with scikit-learn.

    ``covariance_eigh`` for d up to ~1000 (fast and exact); randomised SVD with
    a fixed seed above. Component signs are made deterministic: the largest
    absolute loading of each component is positive.
    """
    from sklearn.decomposition import PCA

    rows = np.asarray(rows, dtype=np.float32)
    n, d = rows.shape
    finite = np.isfinite(rows).all(axis=1)
    if not finite.all():
        rows = np.where(np.isfinite(rows), rows, 0.0).astype(np.float32)
    k = max(1, min(n_components, n, d))
    if progress:
        progress(0.1)
    solver = "covariance_eigh" if d <= 1024 else "randomized"
    pca = PCA(n_components=k, svd_solver=solver, random_state=seed)
    coords = pca.fit_transform(rows).astype(np.float32)
    comps = pca.components_.astype(np.float32)
    flip = np.sign(comps[np.arange(k), np.argmax(np.abs(comps), axis=1)])
    flip[flip == 0] = 1
    comps *= flip[:, None]
    coords *= flip[None, :]
    if progress:
        progress(1.0)
    return Projection(
        ids=np.arange(n) if ids is None else np.asarray(ids, np.int64),
        coords=coords,
        explained=np.asarray(pca.explained_variance_ratio_, np.float64),
        components=comps,
        mean=pca.mean_.astype(np.float32),
    )


def random_cosine_std(dim: int) -> float:
    """Std of the cosine of two independent Gaussian vectors in d dims: 1/sqrt(d)."""
    return 1.0 / math.sqrt(dim)


def random_cosine_bound(dim: int, sigmas: float = 3.0) -> float:
    """|cos| below which ~99.7 % of random pairs fall (3 / sqrt(d))."""
    return sigmas / math.sqrt(dim)


def shell_volume_fraction(dim: int, eps: float = 0.01) -> float:
    """Share of a unit d-ball's volume inside radius 1 - eps: (1 - eps)^d."""
    return (1.0 - eps) ** dim


def cosine_histogram_real(table, n_pairs: int = 20000, seed: int = 0) -> np.ndarray:
    """Cosines of ``n_pairs`` random pairs of distinct trained rows."""
    rng = np.random.default_rng(seed)
    v = table.trained_rows if not isinstance(table, np.ndarray) else table.shape[0]
    a = rng.integers(0, v, n_pairs)
    b = rng.integers(0, v, n_pairs)
    keep = a != b
    a, b = a[keep], b[keep]
    get = (lambda ids: table[ids]) if isinstance(table, np.ndarray) else table.rows
    ra, rb = normalize_rows(get(a)), normalize_rows(get(b))
    return (ra * rb).sum(1)
