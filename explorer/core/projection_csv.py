"""The projection's CSV exports: coordinates of the tokens drawn, and the
neighbour lists already computed (no new search). No Qt here."""

from __future__ import annotations

import csv
from typing import Sequence

import numpy as np

from .neighbors import NeighborList
from .projection import ProjectionResult, TokensOfInterest

__all__ = ["write_coordinates_csv", "write_neighbors_csv"]


def _column(result, j: int) -> str:
    """``PC1``…, a custom axis's name, or ``tsne_1``… for a layout."""
    if hasattr(result, "axis_name"):
        return result.axis_name(j)
    return f"{result.method}_{j + 1}"


def write_coordinates_csv(path, result: ProjectionResult, table, extra_ids: Sequence[int] = (), classes=None) -> int:
    """Write id, piece, fitted (1/0), class and the coordinate on every component
    of the fitted tokens, then of ``extra_ids`` that were not fitted
    (projected with the same components; placed among their nearest rows in
    a t-SNE or UMAP layout). Returns the rows written.
    """
    extra = [int(i) for i in dict.fromkeys(extra_ids) if result.index_of(int(i)) < 0]
    ids = np.concatenate([result.ids, np.asarray(extra, np.int64)])
    coords = np.vstack([result.coords, result.coords_of(table, extra)]) if extra else result.coords
    n_fitted = len(result.ids)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "piece", "fitted", "class"] + [_column(result, j) for j in range(result.n_components)])
        for r, tid in enumerate(ids.tolist()):
            name = classes.name_of(tid) if classes is not None else None
            w.writerow([tid, table.piece(tid), int(r < n_fitted), name or ""] + [f"{v:.6g}" for v in coords[r]])
    return len(ids)


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
