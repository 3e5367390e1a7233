"""The projection's CSV exports: coordinates of the tokens drawn, and the
neighbour lists already computed (no new search). No Qt here."""

from __future__ import annotations

import csv
from collections.abc import Sequence

import numpy as np

from explorer.core.geometry.neighbors import NeighborList
from explorer.core.health.report import CATEGORIES, CATEGORY_LABELS
from explorer.core.projection.job import ProjectionResult, TokensOfInterest
from explorer.core.tokens.meta import KINDS

__all__ = ["COORDINATE_COLUMNS", "write_coordinates_csv", "write_neighbors_csv"]

#: the columns before the coordinates
COORDINATE_COLUMNS = ["id", "piece", "fitted", "class", "kind", "length", "norm", "health", "shown"]


def _column(result, j: int) -> str:
    """``PC1``…, a custom axis's name, or ``tsne_1``… for a layout."""
    if hasattr(result, "axis_name"):
        return result.axis_name(j)
    return f"{result.method}_{j + 1}"


def _metadata(ids: np.ndarray, meta, health) -> list[list[str]]:
    """kind, length, norm and health category of each id ("" where not known), vectorised."""
    n = len(ids)
    cols = [[""] * n for _ in range(4)]
    if meta is not None:
        inside = ids < len(meta.kind)
        safe = np.where(inside, ids, 0)
        cols[0] = np.where(inside, np.asarray(KINDS, object)[meta.kind[safe]], "").tolist()
        cols[1] = np.where(inside, meta.length[safe].astype(str), "").tolist()
        cols[2] = [f"{v:.6g}" if ok else "" for v, ok in zip(meta.norm[safe].tolist(), inside.tolist())]
    if health is not None:
        names = np.asarray([CATEGORY_LABELS[c] for c in CATEGORIES], object)
        inside = ids < len(health.categories)
        cols[3] = np.where(inside, names[health.categories[np.where(inside, ids, 0)]], names[-1]).tolist()
    return cols


def write_coordinates_csv(path, result: ProjectionResult, table, extra_ids: Sequence[int] = (), classes=None,
                          meta=None, health=None, shown_ids=None) -> int:
    """Write the fitted tokens, then ``extra_ids`` that were not fitted (projected
    with the same components; placed among their nearest rows in a t-SNE or
    UMAP layout), one row each. Returns the rows written.

    Columns :data:`COORDINATE_COLUMNS` then the coordinate on every component:
    id, piece, fitted (1/0), class, kind, length (characters) and norm (from
    ``meta``, a TokenMetadata), health (the round-trip category of ``health``,
    a HealthReport), shown (1 when among ``shown_ids``, the points the view's
    filter shows; 1 for all when None).
    """
    extra = [int(i) for i in dict.fromkeys(extra_ids) if result.index_of(int(i)) < 0]
    ids = np.concatenate([result.ids, np.asarray(extra, np.int64)]).astype(np.int64)
    coords = np.vstack([result.coords, result.coords_of(table, extra)]) if extra else result.coords
    n_fitted = len(result.ids)
    kind, length, norm, category = _metadata(ids, meta, health)
    shown = np.isin(ids, np.asarray(shown_ids, np.int64)) if shown_ids is not None else np.ones(len(ids), bool)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COORDINATE_COLUMNS + [_column(result, j) for j in range(result.n_components)])
        for r, tid in enumerate(ids.tolist()):
            name = classes.name_of(tid) if classes is not None else None
            w.writerow([tid, table.piece(tid), int(r < n_fitted), name or "", kind[r], length[r], norm[r], category[r],
                        int(shown[r])] + [f"{v:.6g}" for v in coords[r]])
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
