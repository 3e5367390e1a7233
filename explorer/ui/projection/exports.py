"""The projection's exports, mixed into the view: the plot as PNG or SVG with
its legend drawn in, the layout's coordinates with the tokens' metadata as
CSV, and the neighbour lists already computed as CSV."""

from __future__ import annotations

from explorer.core.projection.csv_export import write_coordinates_csv, write_neighbors_csv
from explorer.ui.projection.legend_export import export_with_legend, legend_lines

__all__ = ["ProjectionExports"]


class ProjectionExports:
    """Needs the view's ``_state``, ``_result``, ``_line_ids``, ``_legend``, ``plot`` and ``points``."""

    def _on_export_chosen(self, kind: str, path: str) -> None:
        {"png": self.export_plot, "svg": self.export_plot, "coords": self.export_coordinates_csv,
         "neighbors": self.export_neighbors_csv}[kind](path)

    def legend_lines(self) -> list[tuple[str | None, str]]:
        """The legend drawn into exported images: (colour or None for a heading, text)."""
        hits = self.points.hits.count if self.points.hits is not None else None
        return legend_lines(*self._legend, hits)

    def export_plot(self, path: str) -> None:
        """Save the scatter as PNG or SVG (by the file's extension), its legend drawn in."""
        export_with_legend(self.plot.plot_item, path, self.legend_lines())

    def export_coordinates_csv(self, path: str) -> int:
        """The fitted tokens' coordinates and metadata, then the highlighted tokens not fitted. Returns rows."""
        res, state = self._result, self._state
        if res is None or state.table is None:
            return 0
        interest = state.jobs.interest.value
        extra = (interest.all_ids() if interest is not None else []) + self._line_ids
        if state.selected_id >= 0:
            extra.append(state.selected_id)
        return write_coordinates_csv(path, res, state.table, extra, state.classes, state.jobs.token_meta.value,
                                     state.jobs.health.value, self.points.shown_ids)

    def export_neighbors_csv(self, path: str) -> int:
        """The neighbour lists already computed: the text's tokens' and the selection's. Returns rows."""
        table = self._state.table
        if table is None:
            return 0
        return write_neighbors_csv(path, table, self._state.jobs.interest.value, self._state.jobs.neighbors.value)
