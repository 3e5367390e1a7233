"""What the Positions view draws for a model: its position table, their
cosines, the PCA path through positions 0, 1, 2, ..., the sinusoidal table
of its own d and, for rotary models, the angles. No Qt here."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.input_layer.cache import input_layer_of
from explorer.core.input_layer.layer import InputLayer
from explorer.core.input_layer.rotary import rotation_angles
from explorer.core.input_layer.sinusoidal import sinusoidal_table

__all__ = ["PositionsReport", "positions_report", "positions_job", "MAX_SHOWN_POSITIONS", "SINUSOIDAL_POSITIONS",
           "ROTARY_POSITIONS", "rotary_pairs_shown", "one_blas_thread"]

#: positions drawn at most (GPT-2 has 1,024; a 4,096-row table is cut)
MAX_SHOWN_POSITIONS = 1024
#: positions of the sinusoidal table shown beside a model without a table of its own
SINUSOIDAL_POSITIONS = 128
#: positions over which rotary angles are drawn
ROTARY_POSITIONS = 64
#: token rows sampled for their mean norm
TOKEN_SAMPLE = 2000


@dataclass(frozen=True)
class PathPCA:
    """Rows projected on their first two principal components.

    Attributes
    ----------
    points : numpy.ndarray
        float32 (n, 2), one point per position, in order.
    explained : tuple of float
        Fraction of the variance of the rows along each component.
    """

    points: np.ndarray
    explained: tuple[float, float]


@dataclass(frozen=True)
class PositionsReport:
    """Everything the Positions view shows about one model.

    Attributes
    ----------
    layer : InputLayer
    learned : numpy.ndarray or None
        float32 (n, d): the first n rows of the position table (n <= MAX_SHOWN_POSITIONS).
    learned_cosine : numpy.ndarray or None
        float32 (n, n): cosine of every pair of those rows.
    learned_path : PathPCA or None
    learned_norms : numpy.ndarray or None
        float64 (n,): norm of each position row.
    sinusoidal : numpy.ndarray
        float32 (m, d): the sinusoidal table of the model's own d.
    sinusoidal_cosine : numpy.ndarray
        float32 (m, m)
    sinusoidal_path : PathPCA
    token_norm : float
        Mean norm of a sample of the table's token rows (before any scale).
    rotary_positions : numpy.ndarray or None
        float64 (k,): positions 0 .. ROTARY_POSITIONS - 1 on a fine grid
        (the turn is drawn as a curve; tokens sit at the whole numbers).
    rotary_pairs : tuple of int
        The dimension pairs drawn (fastest first).
    rotary_angles : numpy.ndarray or None
        float64 (k, len(rotary_pairs)): radians turned at each position.
    total_positions : int
        Rows of the model's position table (0 without one).
    learned_levels, sinusoidal_levels : tuple of float
        The colour range of each table's heatmap (:func:`symmetric_levels`), worked out
        here in the job: a percentile of 1,024 x 4,096 values is tens of ms.
    learned_image, learned_cosine_image : numpy.ndarray or None
        ``learned`` and ``learned_cosine`` as the heatmaps draw them (:func:`finite_image`),
        made here in the job: on the window's thread, 45 ms for 128 x 65,536 values.
    """

    layer: InputLayer
    learned: np.ndarray | None
    learned_cosine: np.ndarray | None
    learned_path: PathPCA | None
    learned_norms: np.ndarray | None
    sinusoidal: np.ndarray
    sinusoidal_cosine: np.ndarray
    sinusoidal_path: PathPCA
    token_norm: float
    rotary_positions: np.ndarray | None
    rotary_pairs: tuple[int, ...]
    rotary_angles: np.ndarray | None
    total_positions: int
    learned_levels: tuple[float, float] | None = None
    sinusoidal_levels: tuple[float, float] = (-1.0, 1.0)
    learned_image: np.ndarray | None = None
    learned_cosine_image: np.ndarray | None = None

    @property
    def sinusoidal_norm(self) -> float:
        """Mean norm of the sinusoidal rows shown (about sqrt(d / 2))."""
        return float(np.sqrt(np.einsum("ij,ij->i", self.sinusoidal, self.sinusoidal, dtype=np.float64)).mean())

    @property
    def scaled_token_norm(self) -> float:
        """The mean token norm times sqrt(d): the original Transformer's scale."""
        return self.token_norm * math.sqrt(self.layer.dim)


def finite_image(values: np.ndarray) -> np.ndarray:
    """``values`` as a heatmap draws them: float32, NaN as 0 and infinities as the largest
    finite values (numpy's ``nan_to_num``); the same array when it is that already."""
    v = np.asarray(values, np.float32)
    return v if np.isfinite(v).all() else np.nan_to_num(v)


def cosine_matrix(rows: np.ndarray) -> np.ndarray:
    """Cosine of every pair of rows, float32 (n, n); a zero row gives 0."""
    r = np.asarray(rows, dtype=np.float64)
    n = np.linalg.norm(r, axis=1)
    unit = r / np.where(n > 0, n, 1.0)[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0).astype(np.float32)


_BLAS = None  # the ThreadpoolController of one_blas_thread, made at its first use


def one_blas_thread():
    """A context in which the BLAS libraries use one thread.

    threadpoolctl's ``threadpool_limits`` looks at every library the process has loaded each time
    it is made: 3-14 ms in the window's process (Qt, torch), holding the GIL while the window
    waited, at every position report. The controller is made once; numpy's BLAS, the one the
    callers use, is loaded with numpy, before it."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


def symmetric_levels(values: np.ndarray, quantile: float = 99.5) -> tuple[float, float]:
    """(-m, m) with m the ``quantile`` of |values| (a few outliers must not wash out the rest)."""
    finite = np.abs(values[np.isfinite(values)])
    m = float(np.percentile(finite, quantile)) if finite.size else 1.0
    m = m if m > 0 else 1.0
    return -m, m


def pca_path(rows: np.ndarray) -> PathPCA:
    """The first two principal components of ``rows`` (n, d), by SVD of the centred rows."""
    r = np.asarray(rows, dtype=np.float64)
    centred = r - r.mean(axis=0, keepdims=True)
    if centred.shape[0] < 2 or not np.any(centred):
        return PathPCA(np.zeros((r.shape[0], 2), np.float32), (0.0, 0.0))
    # one BLAS thread: on a busy 2-core machine a threaded SVD of 512 x 384 took
    # 7 s against 0.1 s on one thread
    with one_blas_thread():
        if centred.shape[1] > centred.shape[0]:
            # wider than tall (128 positions of a table 65,536 wide): the eigenvectors of the n x n
            # Gram matrix are the SVD's left vectors, its eigenvalues the squared singular values
            # (1.95 s for that SVD)
            w, v = np.linalg.eigh(centred @ centred.T)
            order = np.argsort(w)[::-1]
            s, u = np.sqrt(np.clip(w[order], 0.0, None)), v[:, order]
        else:
            u, s, _ = np.linalg.svd(centred, full_matrices=False)
    k = min(2, len(s))
    pts = np.zeros((r.shape[0], 2))
    pts[:, :k] = u[:, :k] * s[:k]
    var = s ** 2
    frac = var[:k] / var.sum() if var.sum() > 0 else np.zeros(k)
    explained = tuple(float(x) for x in frac) + (0.0,) * (2 - k)
    # signs are arbitrary: make position 0 sit left (and below) of the mean
    for c in range(2):
        if pts[0, c] > 0:
            pts[:, c] = -pts[:, c]
    return PathPCA(pts.astype(np.float32), explained)


def rotary_pairs_shown(pairs: int) -> tuple[int, ...]:
    """A few pairs from fastest to slowest: 0, 1, a quarter, a half and the last."""
    picks = [0, 1, pairs // 4, pairs // 2, pairs - 1]
    return tuple(sorted({p for p in picks if 0 <= p < pairs}))


def _token_norm(table) -> float:
    ids = table.sample_ids(min(TOKEN_SAMPLE, table.trained_rows), seed=0)
    rows = table.rows(ids)
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))
    norms = norms[np.isfinite(norms)]
    return float(norms.mean()) if norms.size else 0.0


def positions_job(table) -> Iterator[tuple[float, str]]:
    """Generator job: yields progress, returns the :class:`PositionsReport` of ``table``."""
    yield 0.0, "Reading the input layer…"
    layer = input_layer_of(table)
    d = layer.dim
    learned = cos = path = norms = None
    total = 0
    if layer.positions is not None:
        total = layer.positions.rows
        yield 0.1, f"Reading the position table ({total:,} × {layer.positions.cols:,})…"
        learned = layer.positions.read(0, min(total, MAX_SHOWN_POSITIONS))
        yield 0.4, "Comparing positions…"
        cos = cosine_matrix(learned)
        path = pca_path(learned)
        norms = np.sqrt(np.einsum("ij,ij->i", learned, learned, dtype=np.float64))
    yield 0.6, "Computing the sinusoidal table…"
    m = min(MAX_SHOWN_POSITIONS, learned.shape[0]) if learned is not None else SINUSOIDAL_POSITIONS
    sin = sinusoidal_table(m, d)
    yield 0.65, "Comparing sinusoidal positions…"
    sin_cos = cosine_matrix(sin)
    yield 0.7, "Tracing the sinusoidal path…"
    sin_path = pca_path(sin)
    yield 0.8, "Measuring the token rows…"
    tnorm = _token_norm(table)
    rpos = angles = None
    pairs: tuple[int, ...] = ()
    if layer.rotary is not None:
        pairs = rotary_pairs_shown(layer.rotary.pairs)
        rpos = np.linspace(0.0, ROTARY_POSITIONS - 1, (ROTARY_POSITIONS - 1) * 10 + 1)
        angles = rotation_angles(layer.rotary, rpos, pairs)
    levels = symmetric_levels(learned) if learned is not None else None
    images = (finite_image(learned), finite_image(cos)) if learned is not None else (None, None)
    return PositionsReport(layer, learned, cos, path, norms, sin, sin_cos, sin_path, tnorm, rpos, pairs, angles,
                           total, levels, symmetric_levels(sin), *images)


def positions_report(table) -> PositionsReport:
    """:func:`positions_job` run to its end (tests, command line)."""
    from explorer.core.jobs import run_to_end

    return run_to_end(positions_job(table))
