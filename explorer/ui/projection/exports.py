"""The projection's exports, mixed into the view: the plot as PNG or SVG with
its legend drawn in, the layout's coordinates with the tokens' metadata as
CSV, the neighbour lists already computed as CSV, and the layout on the axes
shown (x, y; z in 3D) for TensorBoard's Embedding Projector (a folder) and for
Embedding Atlas (parquet)."""

from __future__ import annotations

from explorer.core.errors import user_message
from explorer.core.interop.atlas import atlas_command, write_atlas
from explorer.core.interop.projector import write_projector
from explorer.core.interop.rows import LayoutRows, layout_rows
from explorer.core.projection.csv_export import write_coordinates_csv, write_neighbors_csv
from explorer.core.projection.manifold import METHOD_NAMES
from explorer.ui.projection.legend_export import export_with_legend, legend_lines

__all__ = ["ProjectionExports"]


class ProjectionExports:
    """Needs the view's ``_state``, ``_result``, ``_line_ids``, ``_legend``, ``plot``, ``plot_pages``,
    ``points``, ``info`` and ``axes()``."""

    #: the projector folder carries the rows' vectors up to this many values (larger: the layout only)
    MAX_PROJECTOR_VALUES = 8_000_000

    def _on_export_chosen(self, kind: str, path: str) -> None:
        try:
            {"png": self.export_plot, "svg": self.export_plot, "coords": self.export_coordinates_csv,
             "neighbors": self.export_neighbors_csv, "projector": self.export_projector,
             "atlas": self.export_atlas}[kind](path)
        except (OSError, ValueError) as exc:
            self.info.show_hover(f"Could not export to {path}: {user_message(exc)}")

    def legend_lines(self) -> list[tuple[str | None, str]]:
        """The legend drawn into exported images: (colour or None for a heading, text)."""
        hits = self.points.hits.count if self.points.hits is not None else None
        return legend_lines(*self._legend, hits)

    def export_plot(self, path: str) -> None:
        """Save the scatter as PNG or SVG (by the file's extension), its legend drawn in."""
        export_with_legend(self.plot.plot_item, path, self.legend_lines())

    def _extra_ids(self) -> list[int]:
        """The highlighted tokens: the text's, their neighbours, the selection and its neighbours."""
        state = self._state
        interest = state.jobs.interest.value
        extra = (interest.all_ids() if interest is not None else []) + self._line_ids
        return extra + ([state.selected_id] if state.selected_id >= 0 else [])

    def export_coordinates_csv(self, path: str) -> int:
        """The fitted tokens' coordinates and metadata, then the highlighted tokens not fitted. Returns rows."""
        res, state = self._result, self._state
        if res is None or state.table is None:
            return 0
        return write_coordinates_csv(path, res, state.table, self._extra_ids(), state.classes,
                                     state.jobs.token_meta.value, state.jobs.health.value, self.points.shown_ids,
                                     self.points.chosen_ids)

    def layout_rows(self) -> LayoutRows | None:
        """The rows the layout exports carry (as the CSV's), or None before a layout."""
        res, state = self._result, self._state
        if res is None or state.table is None:
            return None
        return layout_rows(res, state.table, self._extra_ids(), state.classes, state.jobs.token_meta.value,
                           state.jobs.health.value, self.points.shown_ids, self.points.chosen_ids)

    def shown_axes(self) -> tuple[int, ...]:
        """The coordinate columns on screen: x, y (the chosen components of a PCA), and z in 3D."""
        res = self._result
        if self.plot_pages.showing_3d and res.n_components >= 3:
            return (0, 1, 2)
        return tuple(self.axes()) if res.linear else (0, 1)

    def export_projector(self, folder: str) -> int:
        """The layout shown, its tokens' metadata (and their vectors, when not too many) for
        ``tensorboard --logdir folder``. Returns rows."""
        rows = self.layout_rows()
        if rows is None:
            return 0
        table = self._state.table
        vectors = table.rows(rows.ids) if len(rows) * table.dim <= self.MAX_PROJECTOR_VALUES else None
        title = f"{METHOD_NAMES.get(self._result.method, 'PCA')} of {table.spec}"
        write_projector(folder, rows, self.shown_axes(), vectors, title)
        self.info.show_hover(f"Wrote {len(rows):,} tokens to {folder}; open it with: tensorboard --logdir {folder}")
        return len(rows)

    def export_atlas(self, path: str) -> int:
        """The layout shown and its tokens' metadata as parquet for Embedding Atlas. Returns rows."""
        rows = self.layout_rows()
        if rows is None:
            return 0
        write_atlas(path, rows, self.shown_axes())
        self.info.show_hover(f"Wrote {len(rows):,} tokens; open them with: {atlas_command(path)}")
        return len(rows)

    def export_neighbors_csv(self, path: str) -> int:
        """The neighbour lists already computed: the text's tokens' and the selection's. Returns rows."""
        table = self._state.table
        if table is None:
            return 0
        return write_neighbors_csv(path, table, self._state.jobs.interest.value, self._state.jobs.neighbors.value)
