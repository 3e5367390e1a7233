"""The rows of a projection as another tool reads them: each token's id, its
piece, its metadata and its coordinates. One table of rows feeds the CSV, the
Embedding Projector's folder and the Embedding Atlas parquet. No Qt here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.health.report import CATEGORIES, CATEGORY_LABELS
from explorer.core.tokens.meta import KINDS

__all__ = ["LayoutRows", "layout_rows", "metadata_arrays", "one_line", "METADATA_COLUMNS"]

#: the metadata every export carries after id and piece, in this order
METADATA_COLUMNS = ("fitted", "class", "kind", "length", "norm", "health", "shown", "lasso")
#: what a tab, a line break or a carriage return becomes in a one-line cell (as pieces are shown)
_ONE_LINE = str.maketrans({"\t": "⇥", "\n": "↵", "\r": "␍"})


def one_line(text: str) -> str:
    """``text`` with tabs and line breaks replaced by the marks the app shows
    (⇥ ↵ ␍), so that it fits one cell of a file without quoting (a TSV)."""
    return text.translate(_ONE_LINE)


@dataclass(frozen=True, eq=False)
class LayoutRows:
    """A layout's tokens, one row each.

    Attributes
    ----------
    ids : ndarray (n,) int64
        The fitted tokens, then the tokens placed later.
    pieces : list of str
        What each piece stands for, as the app shows it (visible whitespace:
        ``␣queen``, ``↵``); never a tab or a line break.
    stored : list of str
        The pieces as the tokenizer stores them (``Ġqueen``).
    coords : ndarray (n, k) float32
        The coordinates on every axis of the layout.
    axes : tuple of str
        The name of each coordinate column (``PC1``…, ``tsne_1``…, a custom axis).
    metadata : dict of str to list
        :data:`METADATA_COLUMNS` -> one value per row, None where not known:
        ``fitted``, ``shown`` and ``lasso`` (inside the user's lasso) bool, ``class``, ``kind`` and ``health`` str,
        ``length`` int (characters), ``norm`` float (the row's L2 norm).
    """

    ids: np.ndarray
    pieces: list[str]
    stored: list[str]
    coords: np.ndarray
    axes: tuple[str, ...]
    metadata: dict[str, list]

    def __len__(self) -> int:
        return len(self.ids)


def _axis(result, j: int) -> str:
    """``PC1``…, a custom axis's name, or ``tsne_1``… for a layout."""
    if hasattr(result, "axis_name"):
        return result.axis_name(j)
    return f"{result.method}_{j + 1}"


def _known(values: np.ndarray, inside: np.ndarray) -> list:
    return [v if ok else None for v, ok in zip(values.tolist(), inside.tolist())]


def metadata_arrays(ids, meta=None, health=None) -> dict[str, np.ndarray]:
    """The metadata of each id as arrays (n,), where the rows and the points' table read it.

    ``kind`` int64 codes into :data:`KINDS`, ``length`` and ``norm`` float64 (NaN where not
    known), ``health`` int64 codes into :data:`CATEGORIES` (an id past the report: the last);
    -1 where not known (``meta`` or ``health`` None, an id past ``meta``).
    """
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    out = {"kind": np.full(n, -1, np.int64), "length": np.full(n, np.nan), "norm": np.full(n, np.nan),
           "health": np.full(n, -1, np.int64)}
    if meta is not None:
        inside = ids < len(meta.kind)
        safe = np.where(inside, ids, 0)
        out["kind"] = np.where(inside, meta.kind[safe], -1).astype(np.int64)
        out["length"] = np.where(inside, meta.length[safe], np.nan)
        out["norm"] = np.where(inside, meta.norm[safe].astype(np.float64), np.nan)
    if health is not None:
        inside = ids < len(health.categories)
        out["health"] = np.where(inside, health.categories[np.where(inside, ids, 0)], len(CATEGORIES) - 1)
    return out


def _metadata(ids: np.ndarray, meta, health) -> dict[str, list]:
    """kind, length, norm and health category of each id (None where not known), vectorised."""
    arrays = metadata_arrays(ids, meta, health)
    length, norm = arrays["length"], arrays["norm"]
    return {"kind": np.asarray((*KINDS, None), object)[arrays["kind"]].tolist(),  # -1: the last, None
            "length": _known(np.where(np.isfinite(length), length, 0).astype(np.int64), np.isfinite(length)),
            "norm": _known(norm, np.isfinite(norm)),
            "health": np.asarray([*(CATEGORY_LABELS[c] for c in CATEGORIES), None], object)[arrays["health"]].tolist()}


def layout_rows(result, table, extra_ids: Sequence[int] = (), classes=None, meta=None, health=None,
                shown_ids=None, chosen_ids=None) -> LayoutRows:
    """The fitted tokens of ``result`` (a ProjectionResult or ManifoldResult),
    then ``extra_ids`` that were not fitted (projected with the same components;
    placed among their nearest rows in a t-SNE or UMAP layout), one row each.

    ``classes`` names each id's class (``name_of``), ``meta`` (a TokenMetadata)
    gives kind, length and norm, ``health`` (a HealthReport) the round-trip
    category; ``shown_ids`` are the points the view's filter shows (all when None);
    ``chosen_ids`` the tokens inside the user's lasso (none when None).
    """
    extra = [int(i) for i in dict.fromkeys(extra_ids) if result.index_of(int(i)) < 0]
    ids = np.concatenate([result.ids, np.asarray(extra, np.int64)]).astype(np.int64)
    coords = np.vstack([result.coords, result.coords_of(table, extra)]) if extra else result.coords
    metadata = {"fitted": (np.arange(len(ids)) < len(result.ids)).tolist(),
                "class": [classes.name_of(i) if classes is not None else None for i in ids.tolist()],
                **_metadata(ids, meta, health),
                "shown": (np.isin(ids, np.asarray(shown_ids, np.int64)) if shown_ids is not None
                          else np.ones(len(ids), bool)).tolist(),
                "lasso": np.isin(ids, np.asarray(chosen_ids if chosen_ids is not None else [], np.int64)).tolist()}
    return LayoutRows(ids=ids, pieces=[one_line(table.shown_piece(i).text) for i in ids.tolist()],
                      stored=[table.piece(i) for i in ids.tolist()], coords=np.asarray(coords, np.float32),
                      axes=tuple(_axis(result, j) for j in range(result.n_components)),
                      metadata={k: metadata[k] for k in METADATA_COLUMNS})
