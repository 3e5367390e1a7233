"""The nearest rows of one token, for whatever table: in memory in one
matrix-vector product, streamed in blocks for tables too big to hold.
No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from explorer.core.geometry.nearest import Neighbor, iter_search, nearest_neighbors
from explorer.core.jobs import run_to_end

__all__ = ["NeighborList", "INLINE_VALUES", "neighbors_of", "iter_neighbors_of"]

#: tables of at most this many values (V x d) are searched on the spot: a
#: product this small takes well under a millisecond
INLINE_VALUES = 1_000_000


@dataclass(frozen=True)
class NeighborList:
    """The nearest rows of ``token_id`` by cosine.

    Attributes
    ----------
    token_id : int
    neighbors : tuple of Neighbor
        Best first; never the token itself, rows with zero norm or
        non-finite values never appear.
    rows_searched : int
        Rows compared (the table's trained rows).
    """

    token_id: int
    neighbors: tuple[Neighbor, ...]
    rows_searched: int

    def ids(self) -> list[int]:
        return [n.id for n in self.neighbors]


def neighbors_of(table, token_id: int, k: int = 10) -> NeighborList:
    """The ``k`` nearest rows of ``token_id`` (runs to the end; see :func:`iter_neighbors_of`)."""
    return run_to_end(iter_neighbors_of(table, token_id, k))


def iter_neighbors_of(table, token_id: int, k: int = 10) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a :class:`NeighborList`.

    A table held in memory is searched in one product (its unit rows are
    cached by the loader); a bigger one is streamed by
    :func:`~explorer.core.geometry.nearest.iter_search`, with a chance to stop
    between blocks.
    """
    table.check_id(token_id)
    query = table.row(int(token_id))
    total = table.trained_rows
    if table.unit_matrix() is not None:
        found = nearest_neighbors(table, query, k=k, exclude=[token_id])
        return NeighborList(int(token_id), tuple(found), total)
    found = yield from iter_search(table, query[None, :], k, [[int(token_id)]])
    return NeighborList(int(token_id), tuple(found[0]), total)
