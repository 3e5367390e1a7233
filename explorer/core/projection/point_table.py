"""The projection's points as a table: id, piece, metadata and coordinates, one
column per array, sorted by an argsort permutation and cut to the points the
filters show. A view reads a cell at a time, so 50,000 rows cost nothing
until they are on screen; pieces are read from the tokenizer only for the
rows drawn; sorting by piece needs every piece, read once per table by
:func:`piece_order_job` in a worker (:meth:`PointTable.set_piece_order`). No Qt here.

The columns are those of :func:`explorer.core.interop.rows.layout_rows` (the
CSV, Projector and Atlas exports) over the same metadata, kept as arrays.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from explorer.core.health.report import CATEGORIES, CATEGORY_LABELS
from explorer.core.interop.rows import metadata_arrays, one_line
from explorer.core.tokens.meta import KINDS

__all__ = ["PieceOrder", "PointColumn", "PointTable", "piece_order_job", "point_table"]

#: pieces read between two yields of :func:`piece_order_job` (where it can be stopped)
PIECE_BLOCK = 4096


@dataclass(frozen=True, eq=False)
class PointColumn:
    """One column: numbers (``values``, NaN where not known) or categories
    (``codes`` into ``labels``, -1 where not known)."""

    name: str
    values: np.ndarray | None = None
    codes: np.ndarray | None = None
    labels: tuple[str, ...] = ()
    integer: bool = False

    def text(self, r: int, plain: bool = False) -> str:
        """Cell ``r`` as shown (thousands separators, 4 significant digits; "" where not known);
        ``plain``: as a file carries it (no separators, 6 significant digits)."""
        if self.codes is not None:
            c = int(self.codes[r])
            return self.labels[c] if c >= 0 else ""
        v = float(self.values[r])
        if not np.isfinite(v):
            return ""
        if self.integer:
            return f"{int(v)}" if plain else f"{int(v):,}"
        return f"{v:.6g}" if plain else f"{v:.4g}"

    def sort_key(self) -> np.ndarray:
        """(n,) float64: ascending order of the cells, unknown ones last."""
        if self.codes is None:
            return np.where(np.isfinite(self.values), self.values, np.inf).astype(np.float64)
        rank = np.empty(len(self.labels) + 1, np.float64)
        rank[:-1] = np.argsort(np.argsort(np.asarray(self.labels, object)))  # alphabetical rank of each label
        rank[-1] = np.inf
        return rank[np.where(self.codes >= 0, self.codes, len(self.labels))]


@dataclass(eq=False)
class PointTable:
    """The drawn points, one row each, with the piece read on demand.

    Attributes
    ----------
    ids : ndarray (n,) int64
    columns : list of PointColumn
        After id and piece: the metadata, then the coordinates.
    """

    ids: np.ndarray
    columns: list[PointColumn]
    shown_piece: object  # id -> DisplayPiece
    _pieces: dict = field(default_factory=dict)
    _by_piece: np.ndarray | None = None  # the rows ascending by piece, once every piece was read
    _row_pieces: tuple | None = None  # and the piece of each row

    @property
    def pieces_read(self) -> bool:
        """Every piece is known (:meth:`set_piece_order`): sorting by piece reads nothing."""
        return self._by_piece is not None

    def set_piece_order(self, found: PieceOrder) -> None:
        """What :func:`piece_order_job` read for these rows: their pieces (by row) and order."""
        self._row_pieces, self._by_piece = found.pieces, found.order

    NAMES = ("id", "piece")

    def header(self) -> list[str]:
        return [*self.NAMES, *(c.name for c in self.columns)]

    def piece(self, r: int) -> str:
        if self._row_pieces is not None:
            return self._row_pieces[r]
        tid = int(self.ids[r])
        if tid not in self._pieces:
            self._pieces[tid] = one_line(self.shown_piece(tid).text)
        return self._pieces[tid]

    def cell(self, r: int, c: int, plain: bool = False) -> str:
        """The text of row ``r``, column ``c`` (as :meth:`header` names them); ``plain``: for a file."""
        if c == 0:
            return f"{int(self.ids[r])}"
        if c == 1:
            return self.piece(r)
        return self.columns[c - 2].text(r, plain)

    def order(self, c: int, descending: bool = False) -> np.ndarray:
        """(n,) int64: the rows sorted by column ``c`` (stable; unknown cells last either way)."""
        if c == 0:
            key = self.ids.astype(np.float64)
        elif c == 1:
            order = self._by_piece if self._by_piece is not None else \
                _argsort_pieces([self.piece(r) for r in range(len(self.ids))])
            return order[::-1].copy() if descending else order.copy()
        else:
            key = self.columns[c - 2].sort_key()
        if descending:
            finite = np.isfinite(key)
            key = np.where(finite, -key, np.inf)
        return np.argsort(key, kind="stable").astype(np.int64)

    def write_csv(self, path, rows) -> int:
        """Write the rows ``rows`` (indices, in order) with the header. Returns the rows written."""
        rows = np.asarray(rows, np.int64)
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(self.header())
            for r in rows.tolist():
                w.writerow([self.cell(r, c, plain=True) for c in range(len(self.columns) + 2)])
        return len(rows)


@dataclass(frozen=True, eq=False)
class PieceOrder:
    """The pieces of ``ids`` (one line each, as the table shows them) and the rows ascending by piece."""

    ids: np.ndarray
    pieces: tuple[str, ...]
    order: np.ndarray


def piece_order_job(shown_piece, ids) -> Iterator[tuple[float, str]]:
    """Read the piece of each of ``ids`` with ``shown_piece`` (id -> DisplayPiece) and sort
    them (a generator for a worker: yields progress, returns a :class:`PieceOrder`)."""
    ids = np.asarray(ids, np.int64)
    pieces: list[str] = []
    for start in range(0, len(ids), PIECE_BLOCK):
        yield start / max(1, len(ids)), "Reading the pieces to sort by…"
        pieces += [one_line(shown_piece(i).text) for i in ids[start:start + PIECE_BLOCK].tolist()]
    return PieceOrder(ids, tuple(pieces), _argsort_pieces(pieces))


def _argsort_pieces(pieces: list[str]) -> np.ndarray:
    """(n,) int64: stable ascending order of ``pieces``, as ``sorted`` compares strings."""
    return np.argsort(np.asarray(pieces, object), kind="stable").astype(np.int64) if pieces \
        else np.zeros(0, np.int64)


def _category(name: str, ids: np.ndarray, codes_of: np.ndarray | None, labels) -> PointColumn:
    codes = np.full(len(ids), -1, np.int64)
    if codes_of is not None:
        inside = ids < len(codes_of)
        codes[inside] = codes_of[ids[inside]]
    return PointColumn(name, codes=codes, labels=tuple(labels))


def point_table(ids, coords, axes, table, meta=None, health=None, classes=None, user=None,
                pieces: dict | None = None) -> PointTable:
    """The table of the points ``ids`` (n,) drawn at ``coords`` (n, k), whose axes are named ``axes``.

    ``meta`` (TokenMetadata) gives kind, length and norm, ``health`` (HealthReport)
    the round-trip category, ``classes`` (ClassIndex) the class, ``user`` (UserMetadata)
    one column per column of the user's file; a column not known yet is empty.
    ``pieces`` (id -> shown piece) is a cache of pieces already read, shared and filled.
    """
    ids = np.asarray(ids, np.int64)
    known = metadata_arrays(ids, meta, health)  # as the exports' rows have them
    cols = [_category("class", ids, classes.of.astype(np.int64) if classes is not None else None,
                      classes.names if classes is not None else ()),
            PointColumn("kind", codes=known["kind"], labels=KINDS),
            PointColumn("length", values=known["length"], integer=True),
            PointColumn("norm", values=known["norm"]),
            PointColumn("health", codes=known["health"], labels=tuple(CATEGORY_LABELS[c] for c in CATEGORIES))]
    for col in (user.columns if user is not None else ()):
        cols.append(_category(col.name, ids, col.codes, col.labels))
    coords = np.asarray(coords, np.float64)
    cols += [PointColumn(name, values=coords[:, j]) for j, name in enumerate(axes)]
    return PointTable(ids, cols, table.shown_piece, {} if pieces is None else pieces)
