"""What a t-SNE or UMAP layout hands to the view, the command line and the bench.

Unlike PCA these maps are not affine: a token outside the laid-out set has
no formula for its place. It is put where its nearest laid-out rows are
(the mean of the layout positions of its :data:`PLACE_NEIGHBORS` nearest
rows by cosine, weighted by similarity), which is how openTSNE starts a new
point before optimising it; the view says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.geometry.vectors import row_products
from explorer.core.projection.job import indices_in

__all__ = ["METHOD_NAMES", "PLACE_NEIGHBORS", "ManifoldResult"]

#: method key -> the name shown to the user
METHOD_NAMES = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
#: laid-out rows that place a token outside the layout
PLACE_NEIGHBORS = 5


@dataclass(frozen=True, eq=False)
class ManifoldResult:
    """A t-SNE or UMAP layout of a fit set (one frame of it while it converges).

    Attributes
    ----------
    spec : str
        The table's spec (a result for another table is stale).
    method : str
        ``tsne`` or ``umap``.
    mode : str
        The fit set's mode (``all``, ``sample``, ``chosen``).
    ids : ndarray (n,) int64, sorted
        The laid-out token ids.
    coords : ndarray (n, k) float32
        Their positions, k = 2 or 3.
    unit_rows : ndarray (n, d) float32
        Their rows scaled to unit length (to place other tokens by cosine).
    description : str
        The fit set in words.
    seed : int
    iteration, n_iter : int
        Optimisation steps done and planned (UMAP: epochs).
    done : bool
        False for an intermediate frame.
    trustworthiness : float or None
        sklearn's trustworthiness of the final layout (cosine, 5 neighbours), 0..1.
    trust_rows : int
        Rows the trustworthiness was measured on (a seeded subsample of big layouts).
    seconds : float
        Time from the start of the job to this frame.
    cached : bool
        True: the finished layout was read from the layout cache, not computed.
    cache_note : str
        Why a computed layout could not be cached ("" when it was, or no cache was asked).
    nearest : dict
        Token id -> (indices into :attr:`ids`, weights) of the laid-out rows that place a token
        outside the layout, kept as they are found. The frames of one run share it: their rows
        are the same and only the positions move, so a frame places the text's tokens by a
        weighted mean alone, not by a product with every laid-out row on the window's thread.
    """

    spec: str
    method: str
    mode: str
    ids: np.ndarray
    coords: np.ndarray
    unit_rows: np.ndarray
    description: str
    seed: int = 0
    iteration: int = 0
    n_iter: int = 0
    done: bool = True
    trustworthiness: float | None = None
    trust_rows: int = 0
    seconds: float = 0.0
    cached: bool = False
    cache_note: str = ""
    nearest: dict = field(default_factory=dict, repr=False)

    #: a layout, not a map of the rows: its axes have no names (see ProjectionResult.linear)
    linear = False
    custom_axes = False

    def as_json(self, dims: int) -> dict:
        """The layout for ``project --json``: ``ids``, ``coords`` (``dims`` columns), ``fit``
        and its ``trustworthiness`` (on ``trustworthiness_rows`` rows); ``cached`` (read from the
        layout cache) and, when it could not be cached, ``cache_note``."""
        return {"ids": [int(i) for i in self.ids], "coords": [[float(v) for v in row] for row in self.coords[:, :dims]],
                "fit": self.description, "trustworthiness": self.trustworthiness,
                "trustworthiness_rows": self.trust_rows, "cached": self.cached,
                **({"cache_note": self.cache_note} if self.cache_note else {})}

    @property
    def name(self) -> str:
        return METHOD_NAMES.get(self.method, self.method)

    @property
    def progress(self) -> str:
        """Where the optimisation is, in its own unit: "iteration 250 of 500" (t-SNE), "epoch 20 of 200" (UMAP)."""
        unit = "epoch" if self.method == "umap" else "iteration"
        return f"{unit} {self.iteration:,} of {self.n_iter:,}"

    @property
    def n_components(self) -> int:
        return int(self.coords.shape[1]) if self.coords.ndim == 2 else 0

    def index_of(self, token_id: int) -> int:
        """Position of ``token_id`` in :attr:`ids`, or -1 when it was not laid out."""
        return int(self.indices_of([token_id])[0])

    def indices_of(self, ids: Sequence[int]) -> np.ndarray:
        """Positions (m,) int64 of ``ids`` in :attr:`ids`, -1 where not laid out."""
        return indices_in(self.ids, ids)

    def place(self, rows: np.ndarray) -> np.ndarray:
        """Positions (m, k) float32 for rows (m, d) outside the layout: the
        similarity-weighted mean of the positions of their nearest laid-out rows."""
        return self._mean_position(*self._nearest_rows(rows))

    def _nearest_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For rows (m, d): the indices (m, k) of their :data:`PLACE_NEIGHBORS` nearest laid-out
        rows by cosine and the weights (m, k) (the cosines, at least 1e-6). The window's thread calls
        this: numpy's own loops (:func:`~explorer.core.geometry.vectors.row_products`)."""
        rows = np.asarray(rows, np.float32).reshape(-1, self.unit_rows.shape[1])
        rows = np.where(np.isfinite(rows), rows, 0.0)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit = rows / np.where(norms > 0, norms, 1.0)
        sims = row_products(unit, self.unit_rows)
        k = min(PLACE_NEIGHBORS, sims.shape[1])
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k else np.zeros((len(rows), 0), np.int64)
        return top, np.clip(np.take_along_axis(sims, top, 1), 1e-6, None)

    def _mean_position(self, top: np.ndarray, w: np.ndarray) -> np.ndarray:
        if top.shape[1] == 0:
            return np.zeros((len(top), self.n_components), np.float32)
        out = (self.coords[top] * w[:, :, None]).sum(1) / w.sum(1, keepdims=True)
        return out.astype(np.float32)

    def coords_of(self, table, ids: Sequence[int]) -> np.ndarray:
        """Positions (m, k) of any token ids: laid-out ones looked up, the others placed."""
        ids = np.asarray(ids, np.int64).reshape(-1)
        pos = self.indices_of(ids)
        out = np.zeros((len(ids), self.n_components), np.float32)
        inside = pos >= 0
        out[inside] = self.coords[pos[inside]]
        if not inside.all():
            outside = ids[~inside]
            new = unique_sorted(outside[[int(i) not in self.nearest for i in outside]])
            if len(new):
                top, w = self._nearest_rows(table.rows(new))
                self.nearest.update((int(i), (t, v)) for i, t, v in zip(new, top, w, strict=True))
            found = [self.nearest[int(i)] for i in outside]
            out[~inside] = self._mean_position(np.stack([t for t, _ in found]), np.stack([v for _, v in found]))
        return out
