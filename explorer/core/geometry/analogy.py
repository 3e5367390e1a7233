"""Word analogies a − b + c (king − man + woman ≈ queen) as a job for a
worker: one product for a table held in memory, streamed block by block
(with progress, and a chance to stop) for a table too big to hold. No Qt here.

Two targets, both ranked by cosine (:class:`AnalogyForm`): the rows as
stored, a − b + c, or each row scaled to unit length first, â − b̂ + ĉ
(the usual form for word vectors: a long row does not outweigh the others).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

import numpy as np

from explorer.core.geometry.nearest import Neighbor, nearest_neighbors
from explorer.core.geometry.vectors import normalize_rows

__all__ = ["ANALOGY_K", "AnalogyForm", "AnalogyResult", "analogy_job", "analogy_target"]

#: answers kept
ANALOGY_K = 5
#: values per streamed block (about 32 MB of float32)
_STREAM_VALUES = 8 * 1024 * 1024


class AnalogyForm(Enum):
    """Which vector the answers are nearest to."""

    #: each row scaled to length 1 first: â − b̂ + ĉ
    UNIT = "unit"
    #: the rows as stored: a − b + c
    PLAIN = "plain"

    @property
    def formula(self) -> str:
        return "â − b̂ + ĉ" if self is AnalogyForm.UNIT else "a − b + c"

    @property
    def words(self) -> str:
        """What is computed, in words."""
        if self is AnalogyForm.UNIT:
            return "â − b̂ + ĉ: each row scaled to length 1 before the sum"
        return "a − b + c: the rows as stored"


def analogy_target(rows: np.ndarray, form: AnalogyForm = AnalogyForm.UNIT) -> np.ndarray:
    """The vector (d,) float64 whose nearest rows answer the analogy.

    Parameters
    ----------
    rows : ndarray (3, d)
        The rows of a, b and c.
    form : AnalogyForm
    """
    rows = np.asarray(rows, np.float64).reshape(3, -1)
    ra, rb, rc = normalize_rows(rows) if form is AnalogyForm.UNIT else rows
    return ra - rb + rc


@dataclass(frozen=True)
class AnalogyResult:
    """The rows nearest by cosine to a − b + c (or â − b̂ + ĉ, see :class:`AnalogyForm`),
    a, b and c excluded.

    Attributes
    ----------
    a, b, c : int
        The three token ids.
    answers : tuple of Neighbor
        Best first.
    rows_searched : int
        Rows compared (the table's trained rows).
    form : AnalogyForm
        The target the answers are nearest to.
    """

    a: int
    b: int
    c: int
    answers: tuple[Neighbor, ...]
    rows_searched: int
    form: AnalogyForm = AnalogyForm.UNIT

    @property
    def best(self) -> Neighbor | None:
        return self.answers[0] if self.answers else None

    def as_json(self, model: str, query, piece_of) -> dict:
        """What ``analogy --json`` prints: ``model``, ``query`` (the three words), ``form``
        (``unit`` or ``plain``), ``formula`` and ``answers`` (``piece``, ``id``, ``cosine``);
        ``piece_of(id)`` names a row."""
        return {
            "model": model,
            "query": list(query),
            "form": self.form.value,
            "formula": self.form.formula,
            "answers": [{"piece": piece_of(int(n.id)), "id": int(n.id), "cosine": float(n.cosine)}
                        for n in self.answers],
        }

    def ids(self) -> list[int]:
        return [n.id for n in self.answers]


def analogy_job(table, a: int, b: int, c: int, k: int = ANALOGY_K,
                form: AnalogyForm | str = AnalogyForm.UNIT) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns an :class:`AnalogyResult`
    of the ``k`` rows nearest by cosine to the ``form``'s target.

    Raises IndexError for an id outside the table.
    """
    form = AnalogyForm(form)
    for i in (a, b, c):
        table.check_id(int(i))
    a, b, c = int(a), int(b), int(c)
    total = int(table.trained_rows)
    yield 0.0, "Solving the analogy…"
    target = analogy_target(table.rows([a, b, c]), form)
    if table.unit_matrix() is not None:
        return AnalogyResult(a, b, c, tuple(nearest_neighbors(table, target, k=k, exclude=(a, b, c))), total, form)
    block = max(256, _STREAM_VALUES // max(1, table.dim))
    best: list[Neighbor] = []
    for start, rows in table.iter_blocks(block, stop=total):
        local = [i - start for i in (a, b, c) if start <= i < start + len(rows)]
        best += [Neighbor(n.id + start, n.cosine) for n in nearest_neighbors(rows, target, k=k, exclude=local)]
        best = sorted(best, key=lambda n: -n.cosine)[:k]
        done = start + len(rows)
        yield done / total, f"Solving the analogy… {done:,} of {total:,} rows"
    return AnalogyResult(a, b, c, tuple(best), total, form)
