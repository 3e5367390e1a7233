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
    "nearest_neighbors_many",
    "analogy",
    "mean_pool",
    "Projection",
    "pca_project",
    "random_cosine_std",
    "random_cosine_bound",
    "shell_volume_fraction",
    "cosine_histogram_real",
    "id_distance_matrix",
    "one_hot_distance_matrix",
    "random_cosines",
    "cosine_normal_pdf",
    "CosineCheck",
    "random_vector_check",
    "random_vector_check_job",
]

_EPS = 1e-12
#: a streamed block of rows holds at most this many bytes of float32, and a
#: block of scores (rows x queries) at most this many values: searching a
#: 10,000,000 x 65,536 table must not ask for a block of several GB
_BLOCK_BYTES = 64 * 1024 * 1024
_SCORE_VALUES = 16 * 1024 * 1024


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
    q64 = np.asarray(query, dtype=np.float64).reshape(-1)
    block_rows = max(1, min(int(block_rows), _BLOCK_BYTES // (4 * max(1, q64.size))))
    with np.errstate(over="ignore", invalid="ignore"):
        qn = float(np.linalg.norm(q64))  # float64: a float32 norm overflows for values above ~1.8e19
    if not np.isfinite(qn) or qn == 0.0:
        return []
    q = (q64 / qn).astype(np.float32)
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


def nearest_neighbors_many(
    table,
    queries: np.ndarray,
    k: int = 5,
    exclude: Sequence[Sequence[int]] = (),
) -> list[list[Neighbor]]:
    """:func:`nearest_neighbors` for many queries in one pass over the table.

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
    else:
        rows = max(1, min(_BLOCK_BYTES // (4 * max(1, d)), _SCORE_VALUES // max(1, n)))
        blocks = ((s, b, False) for s, b in _blocks(table, rows))
    live = np.nonzero(ok)[0]
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
    """PCA of ``rows`` (n, d).

    For d up to 1024 an exact eigendecomposition of the covariance (what
    scikit-learn's ``covariance_eigh`` does, in numpy); scikit-learn's
    randomised SVD with a fixed seed above. Non-finite values count as 0. Component signs are made deterministic: the largest
    absolute loading of each component is positive.
    """
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError("PCA needs a 2-D array of rows")
    n, d = rows.shape
    if n == 0 or d == 0:
        raise ValueError("PCA needs at least one row and one column")
    finite = np.isfinite(rows).all(axis=1)
    if not finite.all():
        rows = np.where(np.isfinite(rows), rows, 0.0).astype(np.float32)
    k = max(1, min(n_components, n, d))
    if progress:
        progress(0.1)
    if d <= 1024:
        coords, comps, explained, mean = _pca_covariance_eigh(rows, k)
    else:
        from sklearn.decomposition import PCA

        pca = PCA(n_components=k, svd_solver="randomized", random_state=seed)
        coords = pca.fit_transform(rows).astype(np.float32)
        comps = pca.components_.astype(np.float32)
        explained = np.asarray(pca.explained_variance_ratio_, np.float64)
        mean = pca.mean_.astype(np.float32)
    flip = np.sign(comps[np.arange(k), np.argmax(np.abs(comps), axis=1)])
    flip[flip == 0] = 1
    comps *= flip[:, None]
    coords *= flip[None, :]
    if progress:
        progress(1.0)
    return Projection(
        ids=np.arange(n) if ids is None else np.asarray(ids, np.int64),
        coords=coords,
        explained=explained,
        components=comps,
        mean=mean,
    )


def _pca_covariance_eigh(rows: np.ndarray, k: int):
    """PCA by an eigendecomposition of the (d, d) covariance, as scikit-learn's
    ``covariance_eigh`` solver does, without its extra copies (a 50,257 x 768
    table takes about half the time).

    Returns coords (n, k) float32, components (k, d) float32, explained
    variance ratio (k,) float64, mean (d,) float32.
    """
    n, d = rows.shape
    mean = rows.mean(axis=0, dtype=np.float64).astype(np.float32)
    centred = rows - mean
    cov = (centred.T @ centred).astype(np.float64)
    cov = (cov + cov.T) / 2
    w, v = np.linalg.eigh(cov)
    w = np.clip(w[::-1], 0.0, None)
    v = v[:, ::-1]
    total = float(w.sum())
    explained = w[:k] / total if total > 0 else np.zeros(k)
    comps = np.ascontiguousarray(v[:, :k].T).astype(np.float32)
    coords = (centred @ comps.T).astype(np.float32)
    return coords, comps, np.asarray(explained, np.float64), mean


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


def id_distance_matrix(ids: Sequence[int]) -> np.ndarray:
    """|i - j| for token ids used as scalars: (n,) -> (n, n) float64.

    The false metric of scalar ids: neighbours in the numbering look alike.
    """
    a = np.asarray(ids, dtype=np.float64).reshape(-1)
    return np.abs(a[:, None] - a[None, :])


def one_hot_distance_matrix(ids: Sequence[int]) -> np.ndarray:
    """||e_i - e_j|| for one-hot vectors: sqrt(2) for every pair of different
    ids, 0 for equal ones. (n,) -> (n, n) float64.

    Two one-hot vectors differ in exactly two places (a 1 and a -1), whatever
    V is, so this never builds a (n, V) array.
    """
    a = np.asarray(ids, dtype=np.int64).reshape(-1)
    return np.where(a[:, None] == a[None, :], 0.0, math.sqrt(2.0))


def random_cosines(dim: int, n_pairs: int = 5000, seed: int = 0) -> np.ndarray:
    """Cosines of ``n_pairs`` pairs of independent N(0, I_d) vectors, (n_pairs,) float64."""
    rng = np.random.default_rng(seed)
    out = np.empty(n_pairs, np.float64)
    step = max(1, 4_000_000 // max(1, dim))
    for s in range(0, n_pairs, step):
        m = min(step, n_pairs - s)
        a = rng.standard_normal((m, dim))
        b = rng.standard_normal((m, dim))
        out[s : s + m] = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), _EPS)
    return out


def cosine_normal_pdf(x: np.ndarray, dim: int) -> np.ndarray:
    """Density of N(0, 1/d) at ``x``: the large-d law of random cosines."""
    x = np.asarray(x, dtype=np.float64)
    var = 1.0 / dim
    return np.exp(-x * x / (2 * var)) / math.sqrt(2 * math.pi * var)


@dataclass
class CosineCheck:
    """Random Gaussian vectors against the table's own rows, at the table's d.

    Attributes
    ----------
    dim : int
    random_edges, real_edges : ndarray (bins + 1,) float64
        Bin edges of the two histograms (cosine).
    random_density, real_density : ndarray (bins,) float64
        Histograms normalised to unit area (density, 1 / unit cosine).
    curve_x, curve_y : ndarray (m,) float64
        The N(0, 1/d) density over the random histogram's range.
    random_std, real_std, real_mean : float
        Measured standard deviations and the real pairs' mean cosine.
    theory_std : float
        1 / sqrt(d).
    bound : float
        3 / sqrt(d): about 99.7 % of random pairs have |cos| below it.
    within_bound : float
        Measured share of random pairs inside the bound (0..1).
    shell_fraction : float
        (1 - 0.01)^d: share of a unit ball's volume inside radius 0.99.
    n_pairs, n_real : int
    """

    dim: int
    random_edges: np.ndarray
    random_density: np.ndarray
    real_edges: np.ndarray
    real_density: np.ndarray
    curve_x: np.ndarray
    curve_y: np.ndarray
    random_std: float
    real_std: float
    real_mean: float
    theory_std: float
    bound: float
    within_bound: float
    shell_fraction: float
    n_pairs: int
    n_real: int


def random_vector_check(table, n_pairs: int = 5000, bins: int = 60, seed: int = 0) -> CosineCheck:
    """Histograms of cosines: random Gaussian pairs at the table's d, and
    random pairs of the table's trained rows."""
    dim = int(table.shape[1] if isinstance(table, np.ndarray) else table.dim)
    rnd = random_cosines(dim, n_pairs, seed)
    real = cosine_histogram_real(table, n_pairs=n_pairs, seed=seed + 1) if _n_rows(table) > 1 else np.zeros(0)
    real = real[np.isfinite(real)]
    return _make_check(dim, rnd, real, bins)


def _n_rows(table) -> int:
    return int(table.shape[0] if isinstance(table, np.ndarray) else table.trained_rows)


def _make_check(dim: int, rnd: np.ndarray, real: np.ndarray, bins: int) -> CosineCheck:
    std = random_cosine_std(dim)
    half = min(1.0, 5 * std)
    r_edges = np.linspace(-half, half, bins + 1)
    r_dens, _ = np.histogram(np.clip(rnd, -half, half), bins=r_edges, density=True)
    if real.size:
        lo, hi = float(np.min(real)), float(np.max(real))
        pad = max(1e-3, 0.05 * (hi - lo))
        lo, hi = max(-1.0, lo - pad), min(1.0, hi + pad)
        real_edges = np.linspace(lo, hi, bins + 1)
        real_dens, _ = np.histogram(real, bins=real_edges, density=True)
        real_std, real_mean = float(np.std(real)), float(np.mean(real))
    else:
        real_edges, real_dens = np.linspace(-1, 1, bins + 1), np.zeros(bins)
        real_std = real_mean = float("nan")
    cx = np.linspace(-half, half, 241)
    bound = random_cosine_bound(dim)
    return CosineCheck(
        dim=dim,
        random_edges=r_edges,
        random_density=r_dens.astype(np.float64),
        real_edges=real_edges,
        real_density=real_dens.astype(np.float64),
        curve_x=cx,
        curve_y=cosine_normal_pdf(cx, dim),
        random_std=float(np.std(rnd)),
        real_std=real_std,
        real_mean=real_mean,
        theory_std=std,
        bound=bound,
        within_bound=float(np.mean(np.abs(rnd) <= bound)) if rnd.size else float("nan"),
        shell_fraction=shell_volume_fraction(dim),
        n_pairs=int(rnd.size),
        n_real=int(real.size),
    )


def random_vector_check_job(table, n_pairs: int = 5000, bins: int = 60, seed: int = 0):
    """:func:`random_vector_check` as a generator for a worker: yields
    ``(fraction, message)``, returns a :class:`CosineCheck`."""
    dim = int(table.shape[1] if isinstance(table, np.ndarray) else table.dim)
    yield 0.0, f"Drawing {n_pairs:,} pairs of random vectors in {dim:,} dimensions…"
    rnd = random_cosines(dim, n_pairs, seed)
    yield 0.5, "Reading random pairs of the table's rows…"
    real = cosine_histogram_real(table, n_pairs=n_pairs, seed=seed + 1) if _n_rows(table) > 1 else np.zeros(0)
    real = real[np.isfinite(real)]
    yield 0.95, "Counting…"
    return _make_check(dim, rnd, real, bins)
