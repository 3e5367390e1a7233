"""The readout of the point under the pointer: its piece, id, class, kind,
health category (or that the health check has not run) and coordinates."""

from __future__ import annotations

import html

from ...core.health.report import CATEGORIES, CATEGORY_LABELS
from ...core.projection import ProjectionResult
from ...core.token_meta import KINDS

__all__ = ["hover_text"]


def hover_text(table, res, token_id: int, xy, axes: tuple[int, int], state) -> str:
    """HTML for ``token_id`` drawn at ``xy`` in the projection ``res`` (the state gives its metadata)."""
    px, py = xy
    text = f"<b>{html.escape(table.shown_piece(token_id).text)}</b>  id {token_id:,}"
    name = state.classes.name_of(token_id) if state.classes is not None else None
    if name:
        text += f"  · {html.escape(name)}"
    meta, health = state.token_meta.value, state.health.value
    if meta is not None and token_id < len(meta.kind):
        text += f"  · {KINDS[int(meta.kind[token_id])]}"
    if health is not None and token_id < len(health.categories):
        text += f"  · health: {CATEGORY_LABELS[CATEGORIES[int(health.categories[token_id])]]}"
    if isinstance(res, ProjectionResult):
        x, y = axes
        text += f"<br>{html.escape(res.axis_name(x))} = {px:+.3f}, {html.escape(res.axis_name(y))} = {py:+.3f}"
    else:
        where = "" if res.index_of(token_id) >= 0 else " (placed among its nearest rows)"
        text += f"<br>{res.name} ({px:+.2f}, {py:+.2f}){where}"
    return text
