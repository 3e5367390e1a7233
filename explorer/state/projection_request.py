"""What the projection was asked for, and the job that computes it: the
part of :class:`~explorer.state.app_state.AppState` behind ``request_projection``.

The parameters are the fit set (mode, sample size), the method (``pca``,
``tsne``, ``umap`` or custom ``axes`` with their texts) and, taken from the
state when the request is made, the tokens of interest. The key of the
:class:`~explorer.workers.Computation` holds all of them, so a new method,
fit set or model cancels the older run and none of its results land.
"""

from __future__ import annotations

from explorer.core.projection.custom_axes import named_axes_job
from explorer.core.projection.job import projection_job
from explorer.core.projection.manifold import manifold_job
from explorer.workers import Computation

__all__ = ["ProjectionRequest"]


class ProjectionRequest:
    """The parameters of the projection asked for, turned into a request of ``comp``."""

    def __init__(self, comp: Computation):
        self._comp = comp
        self.params: tuple[str, int] | None = None  # (mode, sample size)
        self.method = "pca"
        self.axes: tuple[str, ...] = ()
        self.dims = 2  # of a t-SNE/UMAP layout (a PCA always has its ten components)

    def set(self, mode: str, sample_size: int, method: str = "pca", axes=(), dims: int = 2) -> None:
        self.params = (mode, int(sample_size))
        self.method = method
        self.axes = tuple(axes)
        self.dims = int(dims)

    def forget(self) -> None:
        """A new model: nothing was asked of it yet (the method stays the user's)."""
        self.params = None

    def waits_for_interest(self) -> bool:
        """The tokens of interest just arrived: ``chosen`` fits on them, and a
        t-SNE/UMAP sample asked for before they were known should lay them out."""
        key = self._comp.key  # (table, method, mode, sample, ids of interest, axes, dims)
        if self.params is not None and self.params[0] == "chosen":
            return True
        return key is not None and key[1] in ("tsne", "umap") and key[2] == "sample" and not key[4]

    def update(self, table, interest) -> None:
        """Request the projection of ``table`` with the tokens of ``interest`` (a
        TokensOfInterest, or None while they are being found)."""
        comp, params = self._comp, self.params
        if table is None or params is None:
            comp.clear()
            return
        mode, sample = params
        if mode == "chosen" and interest is None:  # on its way; the state comes back here
            comp.clear()
            return
        ids = tuple(interest.all_ids()) if interest is not None and mode in ("chosen", "sample") else ()
        dims = self.dims if self.method in ("tsne", "umap") else 2  # a PCA has PC3 anyway: no refit
        key = (id(table), self.method, mode, sample, ids, self.axes, dims)
        if self.method == "pca":
            comp.request(projection_job, table, mode, sample, ids, key=key)
        elif self.method == "axes":
            comp.request(named_axes_job, table, self.axes, mode, sample, ids, key=key)
        else:
            comp.request(manifold_job, table, self.method, mode, sample, ids, dims, key=key)
