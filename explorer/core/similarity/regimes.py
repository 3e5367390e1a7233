"""How alike a few chosen tokens are, three ways: the table's learned vectors,
their ids taken as numbers, and one-hot vectors (FACTS.md, "Why vectors and
not ids").

:func:`matrix_token_ids` says which tokens the Similarity view compares and
:func:`similarity_matrices` computes everything it draws for them. At most
:data:`MAX_TOKENS` tokens, so the matrices are small and cheap (a few
hundred microseconds). No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.geometry.vectors import id_distance_matrix, one_hot_distance_matrix, similarity_matrix

__all__ = [
    "METRICS",
    "MAX_TOKENS",
    "SimilarityMatrices",
    "matrix_token_ids",
    "similarity_matrices",
    "similarity_job",
    "is_cheap",
]

#: the measures of the learned vectors, in the order the view offers them
METRICS = ("cosine", "dot", "euclidean")
#: most tokens compared at once (the text's and the added ones)
MAX_TOKENS = 200
#: multiply-adds (n * n * d) computed on the spot; more go to a worker
#: (200 tokens of a 4,096-wide table take 150 ms or more on a busy 2-core machine)
INLINE_MACS = 8_000_000


@dataclass(frozen=True)
class SimilarityMatrices:
    """The chosen tokens compared three ways.

    Attributes
    ----------
    ids : tuple of int
        The tokens, in the order of the rows and columns.
    labels : tuple of str
        Their pieces, shortened for axis labels.
    metric : str
        ``cosine``, ``dot`` or ``euclidean`` (a distance).
    learned : ndarray, float64, shape (n, n)
        The metric between the table's rows (all finite).
    id_distance : ndarray, float64, shape (n, n)
        |i - j|: the order scalar ids invent.
    one_hot : ndarray, float64, shape (n, n)
        ‖e_i - e_j‖: sqrt(2) for every pair of different tokens.
    levels, id_levels, one_hot_levels : (float, float)
        The colour range of each matrix.
    signed : bool
        The learned values are signed (cosine, dot): a diverging map centred on 0.
    zeroed : tuple of int
        Positions (row indices) whose rows held NaN or inf; those values were
        counted as 0 so the rest of the matrix stays readable.
    """

    ids: tuple
    labels: tuple
    metric: str
    learned: np.ndarray
    id_distance: np.ndarray
    one_hot: np.ndarray
    levels: tuple
    id_levels: tuple
    one_hot_levels: tuple
    signed: bool
    zeroed: tuple = ()

    @property
    def n(self) -> int:
        return len(self.ids)

    def index(self, token_id: int) -> int:
        """Row of ``token_id``, or -1 when it is not compared."""
        try:
            return self.ids.index(int(token_id))
        except ValueError:
            return -1


def matrix_token_ids(tokens: Iterable, extra_ids: Iterable[int], vocab_size: int,
                     limit: int = MAX_TOKENS) -> tuple[int, ...]:
    """The tokens to compare: the text's distinct non-special tokens in order of
    appearance, then the added ones; ids outside the table are left out.

    Parameters
    ----------
    tokens : iterable of Token
    extra_ids : iterable of int
        Tokens the user added (neighbours clicked, searches).
    vocab_size : int
    limit : int

    Returns
    -------
    tuple of int, at most ``limit`` long.
    """
    ids = [int(t.id) for t in tokens if not t.special and 0 <= t.id < vocab_size]
    ids += [int(i) for i in extra_ids if 0 <= i < vocab_size]
    return tuple(dict.fromkeys(ids))[: max(0, int(limit))]


def similarity_matrices(table, ids: Sequence[int], metric: str = "cosine", label_chars: int = 12) -> SimilarityMatrices:
    """The learned, scalar-id and one-hot matrices of the tokens ``ids``.

    Parameters
    ----------
    table : EmbeddingTable
    ids : sequence of int
        Distinct token ids inside the table (see :func:`matrix_token_ids`).
    metric : str
        One of :data:`METRICS`.
    label_chars : int
        Longest label.

    Returns
    -------
    SimilarityMatrices
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; use {', '.join(METRICS)}")
    ids = tuple(int(i) for i in ids)
    n = len(ids)
    rows = table.rows(list(ids)).astype(np.float64) if n else np.zeros((0, table.dim))
    finite = np.isfinite(rows).all(axis=1)
    rows = np.where(np.isfinite(rows), rows, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        learned = similarity_matrix(rows, metric)
    learned = np.nan_to_num(learned, nan=0.0, posinf=0.0, neginf=0.0)
    if metric == "cosine":
        levels = (-1.0, 1.0)
    elif metric == "dot":
        lim = float(np.abs(learned).max()) if n else 0.0
        levels = (-(lim or 1.0), lim or 1.0)
    else:
        levels = (0.0, (float(learned.max()) if n else 0.0) or 1.0)
    id_dist = id_distance_matrix(ids) if n else np.zeros((0, 0))
    one_hot = one_hot_distance_matrix(ids) if n else np.zeros((0, 0))
    return SimilarityMatrices(
        ids=ids,
        labels=tuple(table.shown_piece(i).short(label_chars) for i in ids),
        metric=metric,
        learned=learned,
        id_distance=id_dist,
        one_hot=one_hot,
        levels=levels,
        id_levels=(0.0, (float(id_dist.max()) if n else 0.0) or 1.0),
        one_hot_levels=(0.0, 2.0),
        signed=metric != "euclidean",
        zeroed=tuple(int(k) for k in np.flatnonzero(~finite)),
    )


def is_cheap(n_tokens: int, dim: int) -> bool:
    """Whether comparing ``n_tokens`` rows of width ``dim`` takes only a few
    milliseconds (n * n * d <= :data:`INLINE_MACS`)."""
    return int(n_tokens) ** 2 * int(dim) <= INLINE_MACS


def similarity_job(table, ids: Sequence[int], metric: str = "cosine") -> Iterator[tuple[float, str]]:
    """:func:`similarity_matrices` as a job for a worker: yields progress,
    returns :class:`SimilarityMatrices`."""
    yield 0.0, f"Comparing {len(ids):,} tokens of width {table.dim:,}…"
    return similarity_matrices(table, ids, metric)
