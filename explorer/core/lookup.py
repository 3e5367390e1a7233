"""The two ways to get row i of E: a gather, or a one-hot vector times E.

See FACTS.md, "Cost of the two ways to look up". No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cost import dtype_bytes

__all__ = [
    "onehot",
    "gather",
    "onehot_matmul",
    "LookupCost",
    "lookup_cost",
    "row_address",
    "compare_paths",
]


def onehot(ids: np.ndarray, vocab_size: int, dtype=np.float32) -> np.ndarray:
    """One-hot rows: shape (n, V), a single 1 at column ids[k] in row k."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise IndexError(f"ids must lie in 0..{vocab_size - 1}")
    out = np.zeros((ids.size, vocab_size), dtype=dtype)
    out[np.arange(ids.size), ids] = 1
    return out


def gather(table: np.ndarray, ids) -> np.ndarray:
    """E[ids]: a row gather, no arithmetic. ids of any shape -> shape + (d,)."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= table.shape[0]):
        raise IndexError(f"id out of range for a table of {table.shape[0]} rows")
    return table[ids]


def onehot_matmul(table: np.ndarray, ids) -> np.ndarray:
    """one_hot(ids) @ E, computed in full: every zero is multiplied."""
    ids = np.asarray(ids, dtype=np.int64)
    flat = onehot(ids.reshape(-1), table.shape[0], dtype=table.dtype) @ table
    return flat.reshape(ids.shape + (table.shape[1],))


@dataclass(frozen=True)
class LookupCost:
    """What each path costs for ``tokens`` tokens on a V x d table.

    FLOPs count a multiply and an add as two operations: 2 * V * d per token.
    """

    vocab_size: int
    dim: int
    tokens: int
    onehot_flops: int
    onehot_multiplies: int
    zero_multiplies: int
    zero_fraction: float
    gather_flops: int
    gather_bytes: int
    row_stride: int


def lookup_cost(vocab_size: int, dim: int, tokens: int = 1, dtype: str = "float32", row_bytes: int | None = None) -> LookupCost:
    """Costs of the two paths. ``row_bytes`` overrides the stride (quantised rows)."""
    v, d, n = int(vocab_size), int(dim), int(tokens)
    stride = int(row_bytes) if row_bytes is not None else d * dtype_bytes(dtype)
    mults = v * d * n
    zeros = (v - 1) * d * n
    return LookupCost(
        vocab_size=v,
        dim=d,
        tokens=n,
        onehot_flops=2 * v * d * n,
        onehot_multiplies=mults,
        zero_multiplies=zeros,
        zero_fraction=(v - 1) / v,
        gather_flops=0,
        gather_bytes=stride * n,
        row_stride=stride,
    )


def row_address(base: int, token_id: int, dim: int, itemsize: float) -> int:
    """base + i * d * itemsize: where row i starts in memory."""
    return int(base) + int(round(int(token_id) * int(dim) * itemsize))


@dataclass(frozen=True)
class PathComparison:
    equal: bool
    max_abs_diff: float
    finite: bool
    message: str


def compare_paths(table: np.ndarray, ids) -> PathComparison:
    """Check that one-hot @ E equals E[ids], and say why when it does not.

    A single inf or nan anywhere in a column of E makes that column of the
    one-hot product nan (0 * inf = nan), while the gather stays finite.
    """
    g = gather(table, ids)
    o = onehot_matmul(table, ids)
    finite = bool(np.isfinite(table).all())
    equal = bool(np.array_equal(g, o))
    diff = float(np.nanmax(np.abs(g - o))) if g.size and np.isfinite(g - o).any() else 0.0
    if equal:
        msg = "Both paths give exactly the same row."
    elif not finite:
        bad_cols = np.nonzero(~np.isfinite(table).all(axis=0))[0]
        msg = (
            f"The table holds non-finite values (in {len(bad_cols)} column(s)); 0 x inf is NaN, so the "
            "one-hot product turns those columns into NaN while the gather copies the row unchanged."
        )
    else:
        msg = f"The paths differ by at most {diff:.3g} (floating-point summation order)."
    return PathComparison(equal, diff, finite, msg)
