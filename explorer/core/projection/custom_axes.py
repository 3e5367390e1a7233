"""Custom axes: the vocabulary projected onto directions the user names.

An axis is a pair of tokens ``a → b`` (the direction from a's row to b's,
e.g. man → woman) or a single token (the direction of its row). Each
direction is scaled to unit length and a token's coordinate is the dot
product of its row with it, so the map is linear: the result is a
:class:`~explorer.core.projection.job.ProjectionResult` with these directions
as its components and a zero mean, and every other token (and a − b + c)
lands where the same formula puts it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.projection.job import (
    DEFAULT_SAMPLE,
    MAX_DRAWN,
    ProjectionResult,
    at_most,
    choose_fit_set,
    read_fit_rows,
)
from explorer.core.tokens.words import resolve_word

__all__ = ["AxisError", "Axis", "parse_axis", "custom_axes_job", "named_axes_job"]

_ARROW = re.compile(r"\s*(?:→|->|=>)\s*")


class AxisError(ExplorerError):
    """An axis names a token the vocabulary lacks, or no direction at all."""


@dataclass(frozen=True)
class Axis:
    """A direction in the table's space.

    Attributes
    ----------
    ids : tuple of int
        ``(a, b)`` for the direction b − a, ``(a,)`` for a's own row.
    name : str
        How the axis is labelled (``man → woman``).
    """

    ids: tuple[int, ...]
    name: str

    def direction(self, table) -> np.ndarray:
        """The unit direction (d,) float32. Raises AxisError when it has length 0."""
        rows = table.rows(list(self.ids)).astype(np.float64)
        v = rows[-1] - rows[0] if len(self.ids) == 2 else rows[0]
        norm = float(np.linalg.norm(v)) if np.isfinite(v).all() else 0.0
        if not norm > 0:
            raise AxisError(f"the axis {self.name} has no direction (its rows are equal, zero or not finite)")
        return (v / norm).astype(np.float32)


def _token(table, text: str) -> int:
    found = resolve_word(table.tokenizer, text, rows=table.vocab_size)
    if found is None:
        raise AxisError(f"no token {text!r} in this vocabulary; type a piece or #id")
    return found


def parse_axis(table, text: str) -> Axis:
    """``"man → woman"`` (also ``->``) or ``"king"`` -> an :class:`Axis` of this table's ids."""
    parts = [p for p in _ARROW.split((text or "").strip()) if p]
    if len(parts) not in (1, 2):
        raise AxisError("an axis is a token, or two tokens joined by → (or ->), e.g. man → woman")
    ids = tuple(_token(table, p) for p in parts)
    name = " → ".join(table.shown_piece(i).text for i in ids)
    return Axis(ids, name)


def custom_axes_job(table, axes: Sequence[Axis], mode: str = "auto", sample_size: int = DEFAULT_SAMPLE,
                    interest: Sequence[int] = (), seed: int = 0) -> Iterator[tuple[float, str]]:
    """Coordinates of a fit set of rows on the given axes (a generator for a worker), of at most
    :data:`~explorer.core.projection.job.MAX_DRAWN` of them and the tokens of interest.

    Returns a ProjectionResult whose ``components`` are the unit directions,
    ``mean`` zero, ``explained`` the share of the fit set's total variance
    along each direction, and ``axis_names`` the axes' names.
    """
    t0 = time.perf_counter()
    comps = np.stack([a.direction(table) for a in axes]).astype(np.float32)
    fit = choose_fit_set(table, mode, sample_size, interest, seed)
    yield 0.02, f"Reading {len(fit.ids):,} rows…"
    rows = yield from read_fit_rows(table, fit, 0.02, 0.8)
    rows = np.where(np.isfinite(rows), rows, 0.0)
    coords = (rows @ comps.T).astype(np.float32)
    # no rows (the chosen tokens, none yet): no variance to share, and no numpy warning about it
    total = float(rows.var(axis=0, dtype=np.float64).sum()) if len(rows) else 0.0
    explained = coords.var(axis=0, dtype=np.float64) / total if total > 0 else np.zeros(len(axes))
    del rows
    ids, coords, description = at_most(MAX_DRAWN, fit.ids, coords, fit.description, np.asarray(interest, np.int64),
                                       seed)
    yield 1.0, "Done"
    return ProjectionResult(spec=getattr(table, "spec", ""), mode=fit.mode, ids=ids, coords=coords,
                            explained=np.asarray(explained, np.float64), components=comps,
                            mean=np.zeros(comps.shape[1], np.float32), description=description,
                            seconds=time.perf_counter() - t0, axis_names=tuple(a.name for a in axes))


def named_axes_job(table, texts: Sequence[str], mode: str = "auto", sample_size: int = DEFAULT_SAMPLE,
                   interest: Sequence[int] = (), seed: int = 0) -> Iterator[tuple[float, str]]:
    """:func:`custom_axes_job` for axes typed as text (``"man → woman"``, ``"king"``);
    raises :class:`AxisError` for a text that names no direction."""
    texts = [t for t in texts if t and t.strip()]
    if not texts:
        raise AxisError("type a direction for each axis: a token, or two joined by → (e.g. man → woman)")
    yield 0.0, "Finding the axes' tokens…"
    axes = [parse_axis(table, t) for t in texts]
    return (yield from custom_axes_job(table, axes, mode, sample_size, interest, seed))
