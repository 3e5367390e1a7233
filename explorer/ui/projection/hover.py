"""The readout under the pointer, the same in 2D and 3D: the token, its id
and class, and where it is drawn on each axis shown."""

from __future__ import annotations

import html
from typing import Sequence

from ...core.projection import ProjectionResult

__all__ = ["hover_text"]


def hover_text(table, classes, result, token_id: int, axes: Sequence[int], where: Sequence[float]) -> str:
    """Rich text for ``token_id`` drawn at ``where`` (one value per axis in ``axes``, 0-based)."""
    text = f"<b>{html.escape(table.shown_piece(token_id).text)}</b>  id {token_id:,}"
    name = classes.name_of(token_id) if classes is not None else None
    if name:
        text += f"  · {html.escape(name)}"
    if isinstance(result, ProjectionResult):
        text += "<br>" + ", ".join(f"{html.escape(result.axis_name(k))} = {v:+.3f}" for k, v in zip(axes, where))
    else:
        placed = "" if result.index_of(token_id) >= 0 else " (placed among its nearest rows)"
        text += f"<br>{result.name} ({', '.join(f'{v:+.2f}' for v in where)}){placed}"
    return text
