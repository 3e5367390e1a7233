"""Similarity, neighbours, analogies, mean pooling, PCA and random-vector facts.

Functions take plain float32 arrays, or an EmbeddingTable where they must
stream over a vocabulary too large to hold. No Qt here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.jobs import run_to_end, scaled

__all__ = [
    "cosine",
    "vector_norm",
    "row_products",
    "normalize_rows",
    "similarity_matrix",
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
    "iter_random_cosines",
    "iter_cosines_real",
    "cosine_normal_pdf",
    "CosineCheck",
    "random_vector_check",
    "random_vector_check_job",
]

_EPS = 1e-12
#: values drawn or read at a time by the random-vector check (a step between two chances to stop)
BATCH_VALUES = 4_000_000


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """cos(a, b) = a·b / (‖a‖‖b‖) in float64; NaN for a zero or non-finite vector. Sums of
    products, not BLAS, like :func:`vector_norm`: the window's thread calls it (the Cost tab)."""
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    na, nb = vector_norm(a), vector_norm(b)
    if not (np.isfinite(na) and np.isfinite(nb)) or na == 0 or nb == 0:
        return float("nan")
    return float(np.add.reduce(a * b) / (na * nb))


def vector_norm(x: np.ndarray) -> float:
    """The L2 norm of one vector, summed in float64 (huge finite values do not overflow), as a sum of
    squares rather than BLAS's dot (``np.dot``, ``np.linalg.norm``): the window's thread calls this, and
    twice a walk's click stood still 642 and 823 ms inside ``np.dot`` of one row while a job ran."""
    x = np.asarray(x, dtype=np.float64)
    return float(np.sqrt(np.add.reduce(x * x, axis=None)))


#: multiply-adds up to which :func:`row_products` uses numpy's own loops (a few milliseconds); a bigger
#: product is a worker's, and goes to BLAS
OWN_LOOPS_MACS = 64_000_000


def row_products(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """``a @ b.T`` (``a @ a.T`` without ``b``) for rows ``a`` (m, d) and ``b`` (n, d), or ``a @ b`` (m,) for one
    vector ``b`` (d,), in the dtype numpy gives them, by numpy's own sum-of-products loops (``np.einsum``
    unoptimised never calls BLAS) up to :data:`OWN_LOOPS_MACS` multiply-adds, by BLAS above.

    The window's thread multiplies through here. numpy's BLAS (OpenBLAS) shares one pool of threads
    between all callers: a product of 4 x 576 by 576 x 3,032 took 0.5 ms alone, and a median 90 ms (up to
    2 s) while a worker's BLAS product ran; numpy's own loops took 1.0-1.2 ms either way. Only a worker
    asks for a product big enough to go to BLAS."""
    b = a if b is None else b
    if b.ndim == 1:  # scores of the rows against one vector
        return a @ b if a.shape[0] * a.shape[-1] > OWN_LOOPS_MACS else np.einsum("md,d->m", a, b)
    if a.shape[0] * b.shape[0] * a.shape[-1] > OWN_LOOPS_MACS:
        return a @ b.T
    return np.einsum("md,nd->mn", a, b)


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
        return row_products(x)
    if metric == "cosine":
        n = np.linalg.norm(x, axis=1)
        s = row_products(x) / np.maximum(np.outer(n, n), _EPS)
        return np.clip(s, -1.0, 1.0)
    if metric == "euclidean":
        sq = (x * x).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * row_products(x), 0.0)
        np.fill_diagonal(d2, 0.0)
        return np.sqrt(d2)
    raise ValueError(f"unknown metric {metric!r}; use cosine, dot or euclidean")


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
    scikit-learn's ``covariance_eigh`` does, in numpy); a randomised SVD with
    a fixed seed above (:func:`_pca_randomized`). Non-finite values count as 0.
    Component signs are made deterministic: the largest absolute loading of
    each component is positive.
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
        coords, comps, explained, mean = _pca_randomized(rows, k, seed)
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


def _centre(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean (d,) float32, the rows minus it): the mean summed in float64."""
    mean = rows.mean(axis=0, dtype=np.float64).astype(np.float32)
    return mean, rows - mean


def _pca_covariance_eigh(rows: np.ndarray, k: int):
    """PCA by an eigendecomposition of the (d, d) covariance, as scikit-learn's
    ``covariance_eigh`` solver does, without its extra copies (a 50,257 x 768
    table takes about half the time).

    Returns coords (n, k) float32, components (k, d) float32, explained
    variance ratio (k,) float64, mean (d,) float32.
    """
    n, d = rows.shape
    mean, centred = _centre(rows)
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


#: extra directions of the randomised range finder (scikit-learn's default)
PCA_OVERSAMPLES = 10


def _pca_randomized(rows: np.ndarray, k: int, seed: int):
    """PCA by a randomised SVD (Halko, Martinsson and Tropp 2011), as scikit-learn's ``randomized``
    solver does, with its oversampling and number of power iterations, but each iteration's basis
    made by a QR decomposition (``torch.linalg.qr``, which lets go of the GIL). scikit-learn's
    LU (``scipy.linalg.lu``) holds it for its whole length: a thread beside a niced worker running
    scikit-learn's solver waited for the GIL in stretches of 50-106 ms, on a 20,000 x 4,096 sample
    as on the whole 128,256 x 4,096 table, and the window's thread waits the same way; beside this
    one (then with ``scipy.linalg.qr``), at most 13 and 33 ms, in about the same time (2.6-2.9 s
    on the sample for both; 9.4 s against 8.7-9.0 on the whole table). torch's QR of a
    128,256 x 20 block takes as long as SciPy's (21-25 ms) and a thread beside it never waited
    over 6 ms; and SciPy's import (0.1-0.16 s of module code in the projection's worker) is no
    longer needed. Same returns as :func:`_pca_covariance_eigh`."""
    import torch

    n, d = rows.shape
    mean, centred = _centre(rows)
    width = min(k + PCA_OVERSAMPLES, n, d)
    n_iter = 7 if k < 0.1 * min(n, d) else 4  # scikit-learn's rule

    def basis(a: np.ndarray) -> np.ndarray:
        return torch.linalg.qr(torch.from_numpy(a), mode="reduced")[0].numpy()

    q = np.random.default_rng(seed).standard_normal((d, width)).astype(np.float32)
    for _ in range(n_iter):
        q = basis(centred.T @ basis(centred @ q))
    q = basis(centred @ q)  # (n, width): an orthonormal basis of the rows' leading directions
    _, s, vt = np.linalg.svd(q.T @ centred, full_matrices=False)
    comps = np.ascontiguousarray(vt[:k]).astype(np.float32)
    step = max(1, BATCH_VALUES // d)  # the squares summed in float64, a block of rows at a time
    total = sum(float(np.square(centred[i : i + step], dtype=np.float64).sum()) for i in range(0, n, step))
    explained = (s[:k].astype(np.float64) ** 2) / total if total > 0 else np.zeros(k)
    coords = (centred @ comps.T).astype(np.float32)
    return coords, comps, explained, mean


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
    return run_to_end(iter_cosines_real(table, n_pairs, seed))


def iter_cosines_real(table, n_pairs: int = 20000, seed: int = 0) -> Generator[tuple[float, str], None, np.ndarray]:
    """:func:`cosine_histogram_real` as a generator, yielding between batches of
    :data:`BATCH_VALUES` values read: 5,000 pairs of a table 65,536 wide were
    2.6 GB of rows at once."""
    rng = np.random.default_rng(seed)
    v = _n_rows(table)
    a = rng.integers(0, v, n_pairs)
    b = rng.integers(0, v, n_pairs)
    keep = a != b
    a, b = a[keep], b[keep]
    get = (lambda ids: table[ids]) if isinstance(table, np.ndarray) else table.rows
    step = max(1, BATCH_VALUES // max(1, _dim(table)))
    parts = []
    for s in range(0, len(a), step):
        yield s / max(1, len(a)), "Reading random pairs of the table's rows…"
        ra, rb = normalize_rows(get(a[s : s + step])), normalize_rows(get(b[s : s + step]))
        parts.append((ra * rb).sum(1))
    return np.concatenate(parts) if parts else np.zeros(0)


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
    return run_to_end(iter_random_cosines(dim, n_pairs, seed))


def iter_random_cosines(dim: int, n_pairs: int = 5000, seed: int = 0) -> Generator[tuple[float, str], None, np.ndarray]:
    """:func:`random_cosines` as a generator, yielding between batches of about
    :data:`BATCH_VALUES` values a vector side (5,000 pairs in 65,536 dimensions
    took 15 s in one step, out of reach of a cancel)."""
    rng = np.random.default_rng(seed)
    out = np.empty(n_pairs, np.float64)
    step = max(1, BATCH_VALUES // max(1, dim))
    for s in range(0, n_pairs, step):
        yield s / n_pairs, f"Drawing {n_pairs:,} pairs of random vectors in {dim:,} dimensions…"
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
    random pairs of the table's trained rows (:func:`random_vector_check_job` run to the end)."""
    return run_to_end(random_vector_check_job(table, n_pairs, bins, seed))


def _n_rows(table) -> int:
    return int(table.shape[0] if isinstance(table, np.ndarray) else table.trained_rows)


def _dim(table) -> int:
    return int(table.shape[1] if isinstance(table, np.ndarray) else table.dim)


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
    dim = _dim(table)
    rnd = yield from scaled(iter_random_cosines(dim, n_pairs, seed), 0.0, 0.5)
    real = (yield from scaled(iter_cosines_real(table, n_pairs=n_pairs, seed=seed + 1), 0.5, 0.95)
            if _n_rows(table) > 1 else np.zeros(0))
    real = real[np.isfinite(real)]
    yield 0.95, "Counting…"
    return _make_check(dim, rnd, real, bins)
