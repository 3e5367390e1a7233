"""What the projection was asked for, and the job that computes it: the
part of :class:`~explorer.state.app_state.AppState` behind ``request_projection``.

The settings (:class:`~explorer.core.projection.settings.ProjectionSettings`:
the fit set, the sample size, the method, custom axes' texts, the layout's
dimensions) and, taken from the state when the request is made, the tokens
of interest make the :class:`~explorer.core.projection.settings.ProjectionKey`
of the :class:`~explorer.workers.Computation`, so a new method, fit set or
model cancels the older run and none of its results land.
"""

from __future__ import annotations

from explorer.core.projection.custom_axes import named_axes_job
from explorer.core.projection.job import projection_job
from explorer.core.projection.manifold import LayoutCache, manifold_job
from explorer.core.projection.settings import FitSet, Method, ProjectionKey, ProjectionSettings
from explorer.workers import Computation

__all__ = ["ProjectionRequest"]


class ProjectionRequest:
    """The settings of the projection asked for, turned into a request of ``comp``."""

    def __init__(self, comp: Computation):
        self._comp = comp
        self.settings: ProjectionSettings | None = None
        self._method = Method.PCA  # kept across models: the user's choice
        self._axes: tuple[str, ...] = ()
        self._dims = 2
        self._cache = LayoutCache.default()
        self._run = 0  # bumped by recompute(): a new key, so the same settings run again
        self._recompute = False

    @property
    def method(self) -> Method:
        return self.settings.method if self.settings is not None else self._method

    @property
    def axes(self) -> tuple[str, ...]:
        return self.settings.axes if self.settings is not None else self._axes

    @property
    def dims(self) -> int:
        return self.settings.dims if self.settings is not None else self._dims

    def set(self, mode: str, sample_size: int, method: str = "pca", axes=(), dims: int = 2) -> None:
        self.settings = ProjectionSettings(FitSet(mode), sample_size, Method(method), tuple(axes), dims)
        self._method, self._axes, self._dims = self.settings.method, self.settings.axes, int(dims)

    def recompute(self) -> None:
        """The next :meth:`update` computes the t-SNE/UMAP layout again instead of
        reading it from the layout cache."""
        self._run += 1
        self._recompute = True

    def forget(self) -> None:
        """A new model: nothing was asked of it yet (the method stays the user's)."""
        self.settings = None

    def waits_for_interest(self) -> bool:
        """The tokens of interest just arrived: ``chosen`` fits on them, and a
        t-SNE/UMAP sample asked for before they were known should lay them out."""
        if self.settings is not None and self.settings.fit is FitSet.CHOSEN:
            return True
        key = self._comp.key
        return (isinstance(key, ProjectionKey) and key.settings.method.is_layout
                and key.settings.fit is FitSet.SAMPLE and not key.interest)

    def update(self, table, interest) -> None:
        """Request the projection of ``table`` with the tokens of ``interest`` (a
        TokensOfInterest, or None while they are being found)."""
        comp, settings = self._comp, self.settings
        if table is None or settings is None:
            comp.clear()
            return
        if settings.fit is FitSet.CHOSEN and interest is None:  # on its way; the state comes back here
            comp.clear()
            return
        ids = tuple(interest.all_ids()) if interest is not None and settings.fit is not FitSet.ALL else ()
        key = ProjectionKey(id(table), settings, ids, self._run)
        mode, sample = settings.fit.value, settings.sample_size
        if settings.method is Method.PCA:
            comp.request(projection_job, table, mode, sample, ids, key=key)
        elif settings.method is Method.AXES:
            comp.request(named_axes_job, table, settings.axes, mode, sample, ids, key=key)
        else:
            comp.request(manifold_job, table, settings.method.value, mode, sample, ids, settings.dims, key=key,
                         cache=self._cache, recompute=self._recompute)
            self._recompute = False
