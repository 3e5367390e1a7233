"""From the table pass to per-row indicators: scores, z-scores, thresholds,
the ranking. No Qt here.

A row is flagged when its norm is far below the typical one, or its score
far above, by a *robust* z-score (distance from the median in units of
1.4826 x the median absolute deviation, which equals the standard deviation
for normal data and is not dragged by the outliers themselves). The bar is
set so that a table of random rows passes it :data:`CHANCE` times on
average, whatever its size: a random table flags nothing beyond chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["CHANCE", "MIN_ROWS", "MIN_DIMS", "Thresholds", "z_threshold", "magikarp_scores", "reference_scores",
           "plain_z", "robust_center_spread", "thresholds", "ranking"]

#: rows a random table flags on average (two indicators, one tail each)
CHANCE = 0.05
#: fewer rows than this tell nothing about what is typical: no indicator flags
MIN_ROWS = 16
#: the score is a cosine in the d - 1 directions left once the first principal component is
#: removed: with one direction left every row's is +1 or -1, and the score tells no rows apart
MIN_DIMS = 3
_MAD_TO_SD = 1.4826


def z_threshold(rows: int, chance: float = CHANCE) -> float:
    """The z beyond which one of two one-sided indicators flags a row, so that
    ``rows`` normal rows are flagged ``chance`` times on average."""
    return float(NormalDist().inv_cdf(1.0 - chance / (2.0 * max(1, rows))))


def magikarp_scores(norms: np.ndarray, along_pc1: np.ndarray, along_mean: np.ndarray,
                    mean_norm: float) -> np.ndarray:
    """cos(x - (x.p) p, m) for every row, from the pass's products.

    Parameters
    ----------
    norms : ndarray (V,)
        |x|.
    along_pc1 : ndarray (V,)
        x . p with p the unit first principal component.
    along_mean : ndarray (V,)
        x . m with m the reference mean, already without its p part (so
        (x - (x.p) p) . m = x . m).
    mean_norm : float
        |m|.

    Returns
    -------
    ndarray (V,) float64
        NaN where a row has no part left outside p, or m is zero.
    """
    n = np.asarray(norms, np.float64)
    p = np.asarray(along_pc1, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = np.sqrt(np.maximum(n * n - p * p, 0.0))
        out = np.asarray(along_mean, np.float64) / (rest * mean_norm)
    out[~np.isfinite(out)] = np.nan
    return out


def reference_scores(rows: np.ndarray, pc1: np.ndarray) -> np.ndarray:
    """Each reference row's score against the mean of the *other* reference
    rows (leave one out), in float64 from the rows themselves: a row must not
    count towards the mean it is compared with, or the rows of lowest norm
    would flag themselves.

    Parameters
    ----------
    rows : ndarray (k, d)
    pc1 : ndarray (d,)

    Returns
    -------
    ndarray (k,) float64 (NaN for k < 2 or rows with non-finite values)
    """
    x = np.asarray(rows, np.float64)
    k = len(x)
    out = np.full(k, np.nan)
    finite = np.isfinite(x).all(axis=1)
    if finite.sum() < 2:
        return out
    xr = x[finite] - np.outer(x[finite] @ pc1, pc1)
    total = xr.sum(axis=0)
    others = (total[None, :] - xr) / (len(xr) - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("ij,ij->i", xr, others) / (np.linalg.norm(xr, axis=1) * np.linalg.norm(others, axis=1))
    cos[~np.isfinite(cos)] = np.nan
    out[finite] = cos
    return out


def plain_z(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(x - mean) / std over the ``valid`` entries; NaN elsewhere (and
    everywhere when they do not vary)."""
    out = np.full(len(values), np.nan)
    v = values[valid]
    if len(v) >= 2:
        sd = float(v.std())
        if sd > 0:
            out[valid] = (v - float(v.mean())) / sd
    return out


def robust_center_spread(values: np.ndarray) -> tuple[float, float]:
    """Median and 1.4826 x MAD (the standard deviation when the MAD is 0)."""
    v = values[np.isfinite(values)]
    if len(v) == 0:
        return float("nan"), float("nan")
    center = float(np.median(v))
    spread = _MAD_TO_SD * float(np.median(np.abs(v - center)))
    if spread == 0:
        spread = float(v.std())
    return center, spread


@dataclass(frozen=True)
class Thresholds:
    """Attributes
    ----------
    z : float
    norm_below, score_above : float
        NaN when too few rows (or no spread) to tell.
    norm_z, score_z : ndarray (V,) float64
        Robust z-scores (NaN for rows that are not valid).
    """

    z: float
    norm_below: float
    score_above: float
    norm_z: np.ndarray
    score_z: np.ndarray


def thresholds(norms: np.ndarray, scores: np.ndarray, valid: np.ndarray, dim: int = MIN_DIMS) -> Thresholds:
    """Robust z-scores of norm and score and the chance-level bar; no score bar
    for rows of fewer than :data:`MIN_DIMS` values."""
    rows = int(valid.sum())
    z = z_threshold(rows)
    norm_z = np.full(len(norms), np.nan)
    score_z = np.full(len(norms), np.nan)
    norm_below = score_above = float("nan")
    if rows >= MIN_ROWS:
        c, s = robust_center_spread(norms[valid])
        if s > 0:
            norm_z[valid] = (norms[valid] - c) / s
            norm_below = c - z * s
        sc = np.where(valid, scores, np.nan)
        c, s = robust_center_spread(sc)
        if s > 0 and dim >= MIN_DIMS:
            score_z = (sc - c) / s
            score_above = c + z * s
    return Thresholds(z, norm_below, score_above, norm_z, score_z)


def ranking(norm_z: np.ndarray, score_z: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Row ids, most under-trained first.

    ``first`` rows (all zero, non-finite) lead; then the larger of the two
    robust z-scores that point to under-training (-norm z, score z) decides;
    rows with neither come last, in id order.
    """
    with np.errstate(invalid="ignore"):
        evidence = np.fmax(-norm_z, score_z)
    evidence = np.where(np.isnan(evidence), -np.inf, evidence)
    evidence = np.where(first, np.inf, evidence)
    return np.argsort(-evidence, kind="stable").astype(np.int64)
