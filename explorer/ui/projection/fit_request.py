"""What the method and fit-set controls ask the state for.

The projection view's controls say *how* (PCA, t-SNE, UMAP) and *on which
rows* (the whole vocabulary, a seeded sample plus the tokens of interest,
or only those tokens); this object turns each change into one
``state.request_projection`` (which cancels the older run) and shows the
state's parameters back in the controls. A layout method starts from its
own defaults: a sample of :data:`DEFAULT_LAYOUT_SAMPLE` rows unless the
vocabulary is no bigger than that.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from explorer.core.projection.job import DEFAULT_SAMPLE
from explorer.core.projection.manifold import DEFAULT_LAYOUT_SAMPLE
from explorer.state.app_state import AppState
from explorer.ui.projection.axes_entry import AxesEntry
from explorer.ui.projection.controls import FitControls, MethodControls

__all__ = ["FitRequest"]


class FitRequest(QObject):
    """Binds a MethodControls, a FitControls and an AxesEntry to ``state.request_projection``."""

    def __init__(self, state: AppState, method: MethodControls, fit: FitControls, axes: AxesEntry,
                 parent: QObject | None = None):
        super().__init__(parent)
        self._state, self._method, self._fit, self._axes = state, method, fit, axes
        self._dims = 2  # the 3D toggle's: t-SNE and UMAP are laid out in as many dimensions
        method.method_changed.connect(self._on_method_changed)
        fit.fit_changed.connect(self.request)
        axes.axes_changed.connect(self.request)

    def request(self, mode: str | None = None, sample_size: int | None = None) -> None:
        """Ask for the projection the controls show (``mode`` None: the fit set
        on screen again, or the method's default for a new table)."""
        state = self._state
        if state.table is None:
            return
        if mode is None:
            params = state.projection_params
            mode = params[0] if params is not None else self.default_mode(self._method.method)
        sample_size = self._fit.sample_size if sample_size is None else sample_size
        self._fit.show_params(mode, sample_size)
        method = self._method.method
        self._axes.setVisible(method == "axes")
        state.request_projection(mode, sample_size, method, self._axes.texts() if method == "axes" else (), self._dims)

    def set_dims(self, dims: int) -> None:
        """The 3D toggle: a t-SNE/UMAP layout is made again in ``dims`` dimensions (a PCA has PC3 already)."""
        self._dims = int(dims)
        if self._method.method in ("tsne", "umap") and self._state.projection_params is not None:
            self.request()

    def default_mode(self, method: str) -> str:
        """PCA: the state's default; a layout: the whole vocabulary only when it is no bigger than a sample."""
        table = self._state.table
        if method in ("pca", "axes") or table is None:
            return self._state.default_projection_mode()
        return "all" if table.trained_rows <= DEFAULT_LAYOUT_SAMPLE else "sample"

    def show_state(self) -> None:
        """Show the state's parameters in the controls, without asking for anything."""
        if self._state.projection_params is not None:
            self._fit.show_params(*self._state.projection_params)
        self._method.show_method(self._state.projection_method)
        self._axes.setVisible(self._state.projection_method == "axes")

    def _on_method_changed(self, method: str) -> None:
        sample = DEFAULT_LAYOUT_SAMPLE if method in ("tsne", "umap") else DEFAULT_SAMPLE
        self._fit.show_params(self.default_mode(method), sample)
        self.request(self._fit.mode, self._fit.sample_size)
