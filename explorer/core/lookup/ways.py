"""The two ways to get row i of E: a gather, or a one-hot vector times E.

See FACTS.md, "Cost of the two ways to look up". No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.cost.parameters import dtype_bytes
from explorer.core.sources.table import StoredBuffer

__all__ = [
    "onehot",
    "gather",
    "onehot_matmul",
    "LookupCost",
    "lookup_cost",
    "row_address",
    "compare_paths",
    "PathComparison",
    "DTYPE_CHOICES",
    "RowLayout",
    "row_layout",
    "compare_table_paths",
    "measure_lookup_job",
    "lookup_check_job",
    "StoredBase",
    "stored_base_job",
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


def lookup_cost(vocab_size: int, dim: int, tokens: int = 1, dtype: str = "float32",
                row_bytes: int | None = None) -> LookupCost:
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


def compare_paths(table: np.ndarray, ids, finite: bool | None = None) -> PathComparison:
    """Check that one-hot @ E equals E[ids], and say why when it does not.

    A single inf or nan anywhere in a column of E makes that column of the
    one-hot product nan (0 * inf = nan), while the gather stays finite.
    ``finite`` (whether all of E is finite) may be given when already known.
    """
    g = gather(table, ids)
    o = onehot_matmul(table, ids)
    finite = bool(np.isfinite(table).all()) if finite is None else bool(finite)
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


# -- the pointer path in the view: layouts per dtype, base address, checks -------------

#: what the lookup view offers: "stored" (the table as it is), or a plain dtype
DTYPE_CHOICES = ("stored", "float32", "float16", "bfloat16", "int8")

#: quantisation blocks: (values, bytes) per block
_BLOCKS = {"Q8_0": (32, 34), "Q4_0": (32, 18)}
_BLOCK_NOTES = {
    "Q8_0": "Q8_0: 32 values in 34 bytes (32 int8 + a float16 scale)",
    "Q4_0": "Q4_0: 32 values in 18 bytes (16 bytes of 4-bit codes + a float16 scale)",
}


@dataclass(frozen=True)
class RowLayout:
    """Where row ``token_id`` lies in a V x d table stored in ``dtype``.

    Attributes
    ----------
    dtype : str
        The element type named (the stored one for ``"stored"``).
    itemsize : float
        Bytes per value (fractional for block quantisations).
    stride : int
        Bytes from one row to the next (d x itemsize, or the stored row_bytes).
    offset : int
        token_id x stride: bytes from the table's start to the row.
    table_bytes : int
        V x stride.
    quantised : bool
        The rows are stored as quantisation blocks.
    note : str
        How the stride comes about, in words.
    block_values, block_bytes : int
        Values and bytes per quantisation block, when known (else 0): a row
        is d / block_values blocks of block_bytes each.
    """

    vocab_size: int
    dim: int
    token_id: int
    dtype: str
    itemsize: float
    stride: int
    offset: int
    table_bytes: int
    quantised: bool
    note: str
    block_values: int = 0
    block_bytes: int = 0


def row_layout(vocab_size: int, dim: int, token_id: int, dtype: str = "stored",
               stored_dtype: str = "float32", row_bytes: int | None = None) -> RowLayout:
    """Stride, offset and size of row ``token_id`` for a dtype.

    ``dtype="stored"`` uses ``stored_dtype`` and ``row_bytes`` (which may be a
    quantised GGUF layout: its stride is row_bytes, not d x itemsize).
    """
    from explorer.core.cost.parameters import DTYPE_BYTES

    v, d, i = int(vocab_size), int(dim), int(token_id)
    if not 0 <= i < v:
        raise IndexError(f"token id {i:,} is out of range: rows 0 to {v - 1:,}")
    name = stored_dtype if dtype == "stored" else dtype
    if dtype == "stored" and row_bytes is not None:
        stride = int(row_bytes)
    else:
        stride = d * dtype_bytes(name)
    quantised = name not in DTYPE_BYTES
    if quantised:
        note = _BLOCK_NOTES.get(name, f"{name} stores the values in quantisation blocks")
        note += f"; one row of {d:,} values takes {stride:,} bytes ({stride / d:.4g} bytes per value)"
    else:
        note = f"{d:,} values x {dtype_bytes(name)} bytes ({name}) = {stride:,} bytes per row"
    block_values, block_bytes = _BLOCKS.get(name, (0, 0)) if quantised else (0, 0)
    return RowLayout(v, d, i, name, stride / d, stride, i * stride, v * stride, quantised, note,
                     block_values, block_bytes)


def compare_table_paths(table, token_id: int) -> PathComparison | None:
    """:func:`compare_paths` on a loaded table's real values for one id, or
    None when the table is too big to hold in memory (then nothing is checked)."""
    if not table.fits_in_memory:
        return None
    matrix = table.matrix()
    finite = table.all_finite()  # cached by the table: a V x d scan is too much for every click
    with np.errstate(invalid="ignore", over="ignore"):
        return compare_paths(matrix, [int(token_id)], finite=finite)


def measure_lookup_job(table, batch_sizes=(1, 64), repeats: int = 5):
    """A job for a worker: gather, one-hot @ E and nn.Linear timed on
    ``table`` (:func:`explorer.core.bench.iter_bench_lookup`); yields
    ``(fraction, message)`` progress, returns a
    :class:`~explorer.core.bench.LookupMeasurement`."""
    from explorer.core.bench import iter_bench_lookup

    return (yield from iter_bench_lookup(table, batch_sizes=[int(b) for b in batch_sizes], repeats=repeats))


#: where the stored table starts in this process's memory (address, keep_alive, description)
StoredBase = StoredBuffer


def stored_base_job(table) -> Iterator[tuple[float, str]]:
    """:meth:`EmbeddingTable.stored_buffer` for a worker (it may read the whole table and
    import torch): yields progress, returns a :class:`StoredBase`, or None
    for a table too big to hold (offsets are then shown from a symbolic base)."""
    yield 0.0, "Finding where the table starts in memory…"
    if not table.fits_in_memory:
        return None
    return table.stored_buffer()


def lookup_check_job(table, token_id: int) -> Iterator[tuple[float, str]]:
    """:func:`compare_table_paths` for a worker (the first call scans E for
    non-finite values): yields progress, returns a PathComparison or None."""
    yield 0.0, "Checking one-hot @ E against E[i]…"
    return compare_table_paths(table, int(token_id))
