"""The readout under the pointer, the same in 2D and 3D: the token, its id,
class, kind and health category (when known), and where it is drawn on
each axis shown."""

from __future__ import annotations

import html
from collections.abc import Sequence

from explorer.core.health.report import CATEGORIES, CATEGORY_LABELS
from explorer.core.tokens.meta import KINDS

__all__ = ["hover_text"]


def hover_text(table, classes, result, token_id: int, axes: Sequence[int], where: Sequence[float],
               meta=None, health=None) -> str:
    """Rich text for ``token_id`` drawn at ``where`` (one value per axis in ``axes``, 0-based); its kind
    from ``meta`` (TokenMetadata) and round-trip category from ``health`` (HealthReport) when given."""
    text = f"<b>{html.escape(table.shown_piece(token_id).text)}</b>  id {token_id:,}"
    name = classes.name_of(token_id) if classes is not None else None
    if name:
        text += f"  · {html.escape(name)}"
    if meta is not None and token_id < len(meta.kind):
        text += f"  · {KINDS[int(meta.kind[token_id])]}"
    if health is not None and token_id < len(health.categories):
        text += f"  · health: {CATEGORY_LABELS[CATEGORIES[int(health.categories[token_id])]]}"
    if result.linear:
        text += "<br>" + ", ".join(f"{html.escape(result.axis_name(k))} = {v:+.3f}" for k, v in zip(axes, where))
    else:
        placed = "" if result.index_of(token_id) >= 0 else " (placed among its nearest rows)"
        text += f"<br>{result.name} ({', '.join(f'{v:+.2f}' for v in where)}){placed}"
    return text
