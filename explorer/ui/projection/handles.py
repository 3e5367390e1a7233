"""The Projection view's handles for the app, the tour and the tests, mixed into the view: what is
drawn (the projection, where a token sits, the labels, the neighbour lines) and the choices a user
makes (fit set, method, axes), made as the user would make them."""

from __future__ import annotations

import numpy as np

from explorer.core.projection.job import ProjectionResult

__all__ = ["ProjectionHandles"]


class ProjectionHandles:
    """Needs the view's ``_state``, ``_result``, ``_line_ids``, ``fit``, ``method``, ``axes_controls``,
    ``plot`` and ``_xy()``."""

    @property
    def result(self) -> ProjectionResult | None:
        """The projection drawn (the state's, once it landed here)."""
        return self._result

    @property
    def fit_mode(self) -> str:
        return self.fit.mode

    def set_fit_mode(self, mode: str, sample_size: int | None = None) -> None:
        """As if the user chose a fit set."""
        self.fit.choose(mode, sample_size)

    def set_method(self, method: str) -> None:
        """As if the user chose ``pca``, ``tsne`` or ``umap``."""
        self.method.choose(method)

    def axes(self) -> tuple[int, int]:
        """The components on the (horizontal, vertical) axes, 0-based."""
        return self.axes_controls.axes()

    def set_axes(self, x: int, y: int) -> None:
        """Show components ``x`` and ``y`` (different; ValueError otherwise)."""
        self.axes_controls.set_axes(x, y)

    def point_xy(self, token_id: int) -> np.ndarray | None:
        """Where ``token_id`` is drawn (x, y), or None."""
        if self._result is None or self._state.table is None:
            return None
        return self._xy([token_id])[0]

    def labelled(self) -> list[tuple[int, str]]:
        """(token id, text) of the labels drawn."""
        return self.plot.labels.shown()

    def label_rects(self):
        """Scene rectangles of the labels drawn (they never overlap)."""
        return self.plot.labels.scene_rects()

    def neighbor_line_ids(self) -> list[int]:
        """The tokens joined to the selected one by lines (its nearest rows, from the state)."""
        return list(self._line_ids)
