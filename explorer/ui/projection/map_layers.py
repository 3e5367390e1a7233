"""Wiring of the projection's map layers (density map, cluster labels) to the
state's computations and to their toggles in the side panel."""

from __future__ import annotations

__all__ = ["bind_map_layers"]


def bind_map_layers(plot, side, state) -> None:
    """The plot's ``density`` and ``clusters`` compute through ``state``; their toggles go in ``side``."""
    plot.density.attach(state.jobs.layout_density, state.request_layout_density, state.forget_layout_density)
    plot.clusters.attach(state.jobs.layout_clusters, state.request_layout_clusters, state.forget_layout_clusters,
                         lambda i: state.table.shown_piece(i).short() if state.table is not None else "")
    side.add_map_options(plot.density.toggle, plot.clusters.toggle)
