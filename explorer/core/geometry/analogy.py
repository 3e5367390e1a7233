"""Word analogies a − b + c (king − man + woman ≈ queen) as a job for a
worker: one product for a table held in memory, streamed block by block
(with progress, and a chance to stop) for a table too big to hold. No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from explorer.core.geometry.nearest import Neighbor, analogy, nearest_neighbors
from explorer.core.geometry.vectors import normalize_rows

__all__ = ["ANALOGY_K", "AnalogyResult", "analogy_job"]

#: answers kept
ANALOGY_K = 5
#: values per streamed block (about 32 MB of float32)
_STREAM_VALUES = 8 * 1024 * 1024


@dataclass(frozen=True)
class AnalogyResult:
    """The rows nearest to â − b̂ + ĉ by cosine (unit rows), a, b and c excluded.

    Attributes
    ----------
    a, b, c : int
        The three token ids.
    answers : tuple of Neighbor
        Best first.
    rows_searched : int
        Rows compared (the table's trained rows).
    """

    a: int
    b: int
    c: int
    answers: tuple[Neighbor, ...]
    rows_searched: int

    @property
    def best(self) -> Neighbor | None:
        return self.answers[0] if self.answers else None

    def as_json(self, model: str, query, piece_of) -> dict:
        """What ``analogy --json`` prints: ``model``, ``query`` (the three words) and
        ``answers`` (``piece``, ``id``, ``cosine``); ``piece_of(id)`` names a row."""
        return {
            "model": model,
            "query": list(query),
            "answers": [{"piece": piece_of(int(n.id)), "id": int(n.id), "cosine": float(n.cosine)}
                        for n in self.answers],
        }

    def ids(self) -> list[int]:
        return [n.id for n in self.answers]


def analogy_job(table, a: int, b: int, c: int, k: int = ANALOGY_K) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns an :class:`AnalogyResult`.

    Raises IndexError for an id outside the table.
    """
    for i in (a, b, c):
        table.check_id(int(i))
    a, b, c = int(a), int(b), int(c)
    total = int(table.trained_rows)
    yield 0.0, "Solving the analogy…"
    if table.unit_matrix() is not None:
        return AnalogyResult(a, b, c, tuple(analogy(table, a, b, c, k=k)), total)
    ra, rb, rc = normalize_rows(table.rows([a, b, c]))
    target = ra - rb + rc
    block = max(256, _STREAM_VALUES // max(1, table.dim))
    best: list[Neighbor] = []
    for start, rows in table.iter_blocks(block, stop=total):
        local = [i - start for i in (a, b, c) if start <= i < start + len(rows)]
        best += [Neighbor(n.id + start, n.cosine) for n in nearest_neighbors(rows, target, k=k, exclude=local)]
        best = sorted(best, key=lambda n: -n.cosine)[:k]
        done = start + len(rows)
        yield done / total, f"Solving the analogy… {done:,} of {total:,} rows"
    return AnalogyResult(a, b, c, tuple(best), total)
