"""The projection's CSV exports: coordinates of the tokens drawn, and the
neighbour lists already computed (no new search). No Qt here."""

from __future__ import annotations

import csv
from collections.abc import Sequence

from explorer.core.geometry.neighbors import NeighborList
from explorer.core.interop.rows import METADATA_COLUMNS, layout_rows
from explorer.core.projection.job import ProjectionResult, TokensOfInterest

__all__ = ["COORDINATE_COLUMNS", "write_coordinates_csv", "write_neighbors_csv"]

#: the columns before the coordinates
COORDINATE_COLUMNS = ["id", "piece", *METADATA_COLUMNS]


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def write_coordinates_csv(path, result: ProjectionResult, table, extra_ids: Sequence[int] = (), classes=None,
                          meta=None, health=None, shown_ids=None, chosen_ids=None) -> int:
    """Write the fitted tokens, then ``extra_ids`` that were not fitted (projected
    with the same components; placed among their nearest rows in a t-SNE or
    UMAP layout), one row each. Returns the rows written.

    Columns :data:`COORDINATE_COLUMNS` then the coordinate on every component:
    id, piece (as stored), fitted (1/0), class, kind, length (characters) and norm (from
    ``meta``, a TokenMetadata), health (the round-trip category of ``health``,
    a HealthReport), shown (1 when among ``shown_ids``, the points the view's
    filter shows; 1 for all when None), lasso (1 when among ``chosen_ids``). See
    :func:`explorer.core.interop.rows.layout_rows`.
    """
    rows = layout_rows(result, table, extra_ids, classes, meta, health, shown_ids, chosen_ids)
    columns = [rows.metadata[name] for name in METADATA_COLUMNS]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COORDINATE_COLUMNS + list(rows.axes))
        for r, tid in enumerate(rows.ids.tolist()):
            w.writerow([tid, rows.stored[r]] + [_cell(c[r]) for c in columns] + [f"{v:.6g}" for v in rows.coords[r]])
    return len(rows)


def write_neighbors_csv(path, table, interest: TokensOfInterest | None, selected: NeighborList | None) -> int:
    """Write the neighbour lists the projection has: each text token's nearest
    rows (from the tokens of interest) and the selected token's (the state's
    search). Columns: id, piece, rank, neighbour_id, neighbour_piece, cosine.
    Returns the rows written (the header not counted).
    """
    lists: dict[int, tuple] = {}
    if interest is not None:
        lists.update((tid, nbs) for tid, nbs in zip(interest.text, interest.nearest) if nbs)
    if selected is not None:
        lists[selected.token_id] = selected.neighbors  # the longer list wins
    rows = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "piece", "rank", "neighbour_id", "neighbour_piece", "cosine"])
        for tid, nbs in lists.items():
            for rank, nb in enumerate(nbs, 1):
                w.writerow([tid, table.piece(tid), rank, nb.id, table.piece(nb.id), f"{nb.cosine:.6f}"])
                rows += 1
    return rows
