"""Both ends of the model for one token: its output row beside its input
row, and the direct path, the tokens its input row alone would predict
(logits E[i] · W_outᵀ, as if no layer stood between the two ends). No Qt here.

With tied ends W_out is E, so the direct path's logit for token j is
E[i] · E[j]; the token itself scores its squared norm, which usually wins:
the bare embedding would predict the token it just read, and the layers
must learn to move away from it. Untied, the output rows are learned on
their own, and the direct path reads like a table of likely next tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.geometry.vectors import cosine, row_products, vector_norm
from explorer.core.jobs import run_to_end

__all__ = ["DirectPath", "iter_direct_path", "direct_path", "INLINE_LOGITS", "lesson"]

#: tables up to this many values answer on the spot (microseconds); bigger ones stream in a worker
INLINE_LOGITS = 4 * 1024 * 1024


@dataclass(frozen=True)
class DirectPath:
    """What one token's input row predicts through the output matrix alone.

    Attributes
    ----------
    token_id : int
    tied : bool
        The output matrix is E itself.
    output_row : ndarray (d,) float32
        W_out[i], the row the model scores token i with.
    input_norm, output_norm : float
    cosine : float
        cos(E[i], W_out[i]) (1 when tied; NaN when a row is zero or non-finite).
    top_ids : ndarray (k,) int64
        The tokens with the highest logits E[i] · W_out[j], highest first.
    top_logits : ndarray (k,) float64
    self_rank : int
        Where token i itself ranks among all V logits (0: first).
    """

    token_id: int
    tied: bool
    output_row: np.ndarray
    input_norm: float
    output_norm: float
    cosine: float
    top_ids: np.ndarray
    top_logits: np.ndarray
    self_rank: int


def iter_direct_path(table, token_id: int, k: int = 8) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a
    :class:`DirectPath`, or None when the table has no output matrix.

    The output matrix is streamed in blocks (a 128 K x 4 K bfloat16 head is
    never held as float32 whole); the logits are computed in float64.
    """
    out = table.output_table()
    if out is None:
        return None
    x = table.row(int(token_id)).astype(np.float64)
    w_i = out.row(int(token_id))
    v = out.vocab_size
    logits = np.empty(v, np.float64)
    for start, block in out.iter_blocks(stop=v):
        # numpy's own loops, not BLAS: the window scores a small table itself (INLINE_LOGITS), and BLAS's
        # one pool of threads kept it waiting while a job's product ran
        logits[start : start + len(block)] = row_products(block.astype(np.float64), x)
        yield (start + len(block)) / v, f"Scoring {start + len(block):,} of {v:,} output rows…"
    finite = np.where(np.isfinite(logits), logits, -np.inf)
    k = min(int(k), v)
    top = np.argpartition(-finite, k - 1)[:k] if k < v else np.arange(v)
    top = top[np.argsort(-finite[top], kind="stable")]
    own = finite[int(token_id)]
    self_rank = int(np.count_nonzero(finite > own))
    w64 = w_i.astype(np.float64)
    n_in, n_out = vector_norm(x), vector_norm(w64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cos = cosine(x, w64)
    return DirectPath(int(token_id), out is table, np.asarray(w_i, np.float32), n_in, n_out, cos,
                      top.astype(np.int64), logits[top], self_rank)


def direct_path(table, token_id: int, k: int = 8) -> DirectPath | None:
    """:func:`iter_direct_path` run to the end."""
    return run_to_end(iter_direct_path(table, token_id, k))


def lesson(result: DirectPath) -> str:
    """One line on what tying does to the direct path, from the figures."""
    if result.tied:
        own = f"it scores its own squared norm ‖E[i]‖² = {result.input_norm ** 2:.3g}"
        if result.self_rank == 0:
            return (f"Tied: the output row is this very row, so {own} and comes first: the bare embedding would "
                    "predict the token it just read, and the layers must learn to move away from it.")
        return (f"Tied: the output row is this very row, so {own}, number {result.self_rank + 1:,} of "
                f"all logits: longer rows pointing its way score higher still.")
    place = "first" if result.self_rank == 0 else f"number {result.self_rank + 1:,}"
    return (f"Not tied: the output row is learned on its own, and the token itself comes {place} among its "
            "direct predictions.")
