"""What the training charts show of the table itself, computed in the worker
with each snapshot: the rows on a 2-D PCA basis whose signs stay aligned
from one frame to the next, the class silhouette, and each row's distance
from its start. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.geometry.vectors import pca_project

__all__ = ["TableFrame", "FrameMaker", "AlignedPCA", "class_silhouette", "PCA_EVERY"]

#: refit the PCA basis every this many steps (in between, frames project on the last basis)
PCA_EVERY = 200


@dataclass(frozen=True)
class TableFrame:
    """The table at one step, as the PCA, drift and silhouette charts show it.

    Attributes
    ----------
    step : int
        The step after which the table was read (0: before training).
    coords : ndarray (V, 2) float32
        Each row on PC 1 and PC 2 of the basis fitted at ``basis_step``;
        signs aligned with the previous basis, so the picture does not flip.
    centres : ndarray (K, 2) float32
        Mean of ``coords`` over the rows of each class (NaN for a class
        without rows); K = 0 without classes.
    drift : ndarray (V,) float64
        ‖E_step[i] − E_0[i]‖; inf where a row is no longer finite.
    explained : tuple of float
        Share of the variance on PC 1 and PC 2 at ``basis_step``.
    basis_step : int
        The step at which the basis was last fitted (== step: refitted now).
    silhouette : float or None
        Mean cosine silhouette of the rows by class at ``basis_step``;
        None without classes (or when undefined).
    """

    step: int
    coords: np.ndarray
    centres: np.ndarray
    drift: np.ndarray
    explained: tuple[float, ...]
    basis_step: int
    silhouette: float | None

    @property
    def refitted(self) -> bool:
        return self.basis_step == self.step


class FrameMaker:
    """Turns snapshots of a run's table into :class:`TableFrame` objects (in the worker).

    Parameters
    ----------
    init_table : ndarray (V, d)
        The table before the first step (drift is measured from it).
    labels : ndarray (V,) int, optional
        Class number of each row, -1 for none.
    refit_every : int
        Refit the PCA basis when the basis is this many steps old.
    n_classes : int, optional
        K, the number of classes (default: the largest label + 1).
    """

    def __init__(self, init_table: np.ndarray, labels: np.ndarray | None = None, refit_every: int = PCA_EVERY,
                 n_classes: int | None = None):
        self._init = np.array(init_table, dtype=np.float64, copy=True)
        v = self._init.shape[0]
        self._labels = (np.full(v, -1, np.int64) if labels is None else np.asarray(labels, np.int64).reshape(-1))
        if self._labels.shape[0] != v:
            raise ValueError(f"one label per row: {self._labels.shape[0]} labels for {v} rows")
        labelled = self._labels[self._labels >= 0]
        self._k = int(n_classes if n_classes is not None else (labelled.max() + 1 if labelled.size else 0))
        self._refit_every = max(1, int(refit_every))
        self._pca = AlignedPCA()
        self._silhouette: float | None = None

    def frame(self, table: np.ndarray, step: int) -> TableFrame:
        """The frame of ``table`` (V, d) after ``step`` (refits the basis when due)."""
        table = np.asarray(table, np.float32)
        if self._pca.components is None or step - self._pca.fitted_step >= self._refit_every:
            self._pca.fit(table, step)
            self._silhouette = class_silhouette(table, self._labels) if self._k else None
        coords = self._pca.transform(table)
        diff = table.astype(np.float64) - self._init
        drift = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        drift[~np.isfinite(drift)] = np.inf
        return TableFrame(step=int(step), coords=coords, centres=self._centres(coords), drift=drift,
                          explained=tuple(float(e) for e in self._pca.explained[:2]),
                          basis_step=self._pca.fitted_step, silhouette=self._silhouette)

    def _centres(self, coords: np.ndarray) -> np.ndarray:
        out = np.full((self._k, coords.shape[1]), np.nan, np.float32)
        mask = (self._labels >= 0) & (self._labels < self._k) & np.isfinite(coords).all(axis=1)
        if self._k and mask.any():
            lab = self._labels[mask]
            n = np.bincount(lab, minlength=self._k)
            for j in range(coords.shape[1]):
                s = np.bincount(lab, weights=coords[mask, j], minlength=self._k)
                with np.errstate(invalid="ignore", divide="ignore"):
                    out[:, j] = np.where(n > 0, s / np.maximum(n, 1), np.nan)
        return out


class AlignedPCA:
    """A 2-D PCA basis refitted now and then, its signs aligned between fits.

    A component's sign is arbitrary; refitting a slowly changing table can
    flip it and mirror the whole picture. After each fit, a component whose
    dot product with the previous fit's is negative is negated.
    """

    def __init__(self, n_components: int = 2):
        self.n_components = n_components
        self.components: np.ndarray | None = None  # (k, d) float32
        self.mean: np.ndarray | None = None  # (d,) float32
        self.explained: np.ndarray | None = None
        self.fitted_step = -1

    def fit(self, table: np.ndarray, step: int = 0) -> AlignedPCA:
        """Fit the basis on ``table`` (V, d); non-finite values count as 0."""
        proj = pca_project(table, n_components=self.n_components)
        comps = proj.components.astype(np.float32)
        if self.components is not None and self.components.shape == comps.shape:
            signs = np.sign(np.einsum("kd,kd->k", comps, self.components))
            signs[signs == 0] = 1
            comps *= signs[:, None]
        self.components, self.mean, self.explained = comps, proj.mean, proj.explained
        self.fitted_step = step
        return self

    def transform(self, table: np.ndarray) -> np.ndarray:
        """Coordinates of the rows of ``table`` (V, d) on the basis, (V, k) float32."""
        if self.components is None:
            raise ValueError("fit the basis first")
        x = np.asarray(table, np.float32)
        x = np.where(np.isfinite(x), x, 0.0)
        return ((x - self.mean) @ self.components.T).astype(np.float32)


def class_silhouette(table: np.ndarray, labels: np.ndarray, max_rows: int = 2000, seed: int = 0) -> float | None:
    """Mean silhouette (cosine distance) of the rows with a class (label >= 0).

    The same number as ``sklearn.metrics.silhouette_score(x, y, metric="cosine")``,
    in numpy (sklearn's import alone would cost a running job a second). Above ``max_rows``
    labelled rows a seeded sample is used. None when undefined (fewer than
    two classes, a class-less table, zero or non-finite rows).
    """
    labels = np.asarray(labels).reshape(-1)
    keep = np.nonzero(labels >= 0)[0]
    if keep.size > max_rows:
        keep = np.sort(np.random.default_rng(seed).choice(keep, max_rows, replace=False))
    x = np.asarray(table, np.float64)[keep]
    y = labels[keep]
    classes, y = np.unique(y, return_inverse=True)
    if len(classes) < 2 or len(y) <= len(classes) or not np.isfinite(x).all():
        return None
    norms = np.linalg.norm(x, axis=1)
    if (norms == 0).any():
        return None
    u = x / norms[:, None]
    dist = np.clip(1.0 - u @ u.T, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    onehot = np.zeros((len(y), len(classes)))
    onehot[np.arange(len(y)), y] = 1.0
    sums = dist @ onehot  # (n, k): summed distance to each class
    sizes = onehot.sum(axis=0)
    own = sizes[y] - 1
    a = np.where(own > 0, sums[np.arange(len(y)), y] / np.maximum(own, 1), 0.0)
    mean_other = sums / sizes[None, :]
    mean_other[np.arange(len(y)), y] = np.inf
    b = mean_other.min(axis=1)
    s = np.where(own > 0, (b - a) / np.maximum(np.maximum(a, b), 1e-300), 0.0)
    return float(s.mean())
