"""The backward pass of a lookup: dL/dE = one_hot(x)ᵀ G, a scatter-add.

For a loss whose gradient with respect to the looked-up vectors is G
(one row per position of the text), the gradient of the table is
one_hot(x)ᵀ G, shape (V, d): row k receives the sum of G_t over the
positions t where x_t = k, and every row whose token is absent gets exactly
zero (FACTS.md, "Gradient sparsity"). Only the distinct ids' rows are
stored; the rest of the table's gradient is zero by construction. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.errors import ExplorerError

__all__ = [
    "LookupBackward", "IdsOutsideTable", "upstream_gradient", "lookup_backward", "text_ids", "backward_job",
    "BACKWARD_MAX_POSITIONS",
]

#: positions of a text the backward step takes (a view shows each one's contribution)
BACKWARD_MAX_POSITIONS = 256


class IdsOutsideTable(ExplorerError, IndexError):
    """An id of the text has no row in the table; the message names it."""


def upstream_gradient(n_positions: int, dim: int, seed: int = 0) -> np.ndarray:
    """A seeded upstream gradient G: one standard-normal vector per position.

    Returns
    -------
    ndarray, float32, shape (n_positions, dim)
    """
    return np.random.default_rng(seed).standard_normal((int(n_positions), int(dim))).astype(np.float32)


@dataclass(frozen=True)
class LookupBackward:
    """dL/dE of a lookup for L = Σ_t ⟨G_t, E[x_t]⟩, kept as its non-zero rows.

    Attributes
    ----------
    ids : ndarray, int64, shape (T,)
        The looked-up ids x, in text order.
    upstream : ndarray, float32, shape (T, d)
        G, the gradient of the loss with respect to each looked-up vector.
    vocab_size : int
        V, the table's rows.
    rows : ndarray, int64, shape (R,)
        The rows with a non-zero gradient, sorted.
    grad : ndarray, float64, shape (R, d)
        dL/dE at those rows: grad[r] = Σ_{t : x_t = rows[r]} G_t.
    positions : tuple of tuple of int
        For each row of ``rows``, the positions t whose contributions G_t it sums.
    """

    ids: np.ndarray = field(repr=False)
    upstream: np.ndarray = field(repr=False)
    vocab_size: int
    rows: np.ndarray = field(repr=False)
    grad: np.ndarray = field(repr=False)
    positions: tuple[tuple[int, ...], ...] = field(repr=False)

    def as_json(self, model: str) -> dict:
        """What ``grad --json`` prints: ``model``, ``ids``, ``upstream`` (G, one row per
        position), ``rows_with_gradient`` and ``grad`` (the non-zero rows of dL/dE by id)."""
        return {
            "model": model,
            "ids": self.ids.tolist(),
            "upstream": self.upstream.astype(float).tolist(),
            "rows_with_gradient": self.rows.tolist(),
            "grad": {str(int(i)): g.tolist() for i, g in zip(self.rows, self.grad)},
        }

    @property
    def distinct_ids(self) -> int:
        return int(unique_sorted(self.ids).size)

    @property
    def zero_rows(self) -> int:
        """Rows of dL/dE that are exactly zero: V − R."""
        return self.vocab_size - int(self.rows.size)

    def row_grad(self, token_id: int) -> np.ndarray:
        """dL/dE[token_id], shape (d,) float64: zeros for a row the text does not use."""
        k = int(np.searchsorted(self.rows, token_id))
        if k < self.rows.size and self.rows[k] == token_id:
            return self.grad[k]
        return np.zeros(self.upstream.shape[1])

    def repeated(self) -> list[int]:
        """Indices into ``rows`` of the rows that sum more than one contribution."""
        return [k for k, p in enumerate(self.positions) if len(p) > 1]

    def row_of_position(self, t: int) -> int:
        """Index into ``rows`` of the row position ``t`` adds into (-1: a zero contribution)."""
        k = int(np.searchsorted(self.rows, self.ids[t]))
        return k if k < self.rows.size and self.rows[k] == self.ids[t] else -1

    def partial(self, n_positions: int, columns: int | None = None) -> np.ndarray:
        """The scatter-add stopped after the first ``n_positions`` positions:
        shape (R, columns or d) float64, the rows of ``rows`` (an animation's
        frame; ``columns`` keeps only the first ones, for a view that draws those)."""
        c = self.grad.shape[1] if columns is None else min(int(columns), self.grad.shape[1])
        out = np.zeros((self.grad.shape[0], c))
        n = max(0, min(int(n_positions), self.ids.size))
        k = np.searchsorted(self.rows, self.ids[:n])
        ok = (k < self.rows.size) & (self.rows[np.minimum(k, max(self.rows.size - 1, 0))] == self.ids[:n]) \
            if self.rows.size else np.zeros(n, bool)
        np.add.at(out, k[ok], self.upstream[:n, :c][ok].astype(np.float64))
        return out

    def dense(self) -> np.ndarray:
        """The whole dL/dE, shape (V, d) float64 (for small tables and tests)."""
        out = np.zeros((self.vocab_size, self.upstream.shape[1]))
        out[self.rows] = self.grad
        return out


def lookup_backward(ids, upstream: np.ndarray, vocab_size: int) -> LookupBackward:
    """Scatter-add the upstream gradient onto the rows the text looked up.

    Parameters
    ----------
    ids : sequence of int, shape (T,)
    upstream : ndarray, shape (T, d)
        G; summed in float64.
    vocab_size : int

    Returns
    -------
    LookupBackward

    Raises
    ------
    IdsOutsideTable
        An id is negative or at least ``vocab_size``.
    ValueError
        ``upstream`` does not have one row per id.
    """
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    g = np.asarray(upstream)
    if g.ndim != 2 or g.shape[0] != ids.size:
        raise ValueError(f"the upstream gradient needs one row per position: {ids.size} ids, shape {g.shape}")
    bad = ids[(ids < 0) | (ids >= vocab_size)]
    if bad.size:
        raise IdsOutsideTable(f"id {int(bad[0]):,} is outside the table: it has rows 0 to {vocab_size - 1:,}")
    uniq, inverse = np.unique(ids, return_inverse=True)
    grad = np.zeros((uniq.size, g.shape[1]))
    np.add.at(grad, inverse, g.astype(np.float64))  # one_hot(x)ᵀ G without the V × T one-hot matrix
    hit = np.flatnonzero((grad != 0).any(axis=1))
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(uniq.size))
    groups = np.split(order, starts[1:])
    return LookupBackward(
        ids=ids, upstream=g, vocab_size=int(vocab_size), rows=uniq[hit], grad=grad[hit],
        positions=tuple(tuple(int(t) for t in groups[k]) for k in hit),
    )


def text_ids(table, text: str) -> np.ndarray:
    """The ids the table's tokenizer gives ``text`` (special tokens included), int64 (T,).

    Raises
    ------
    IdsOutsideTable
        A token names no row of the table (an id past the last row, a word
        a table of ids cannot read); the message names the tokens.
    """
    from explorer.core.tokens.problems import group_problems

    tokens = table.tokenizer.encode(text)
    bad = [t for t in tokens if t.problem is not None]
    if bad:
        why = "; ".join(g.sentence(table.vocab_size) for g in group_problems(bad))
        raise IdsOutsideTable(f"the text has tokens without a row in the table ({why})")
    return np.asarray([t.id for t in tokens], dtype=np.int64)


def backward_job(ids, dim: int, vocab_size: int, seed: int = 0):
    """Generator for a worker: the backward step of looking up ``ids`` with a
    seeded G; yields ``(fraction, message)``, returns a :class:`LookupBackward`."""
    yield 0.0, "Sending the gradient back through the lookup…"
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    return lookup_backward(ids, upstream_gradient(ids.size, dim, seed), vocab_size)
