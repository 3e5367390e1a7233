"""Whole-table passes: row norms and products with a few vectors, streamed. No Qt here.

Blocks come from :meth:`EmbeddingTable.iter_native_blocks`: a bfloat16 file
is read through a memory map in its stored dtype and never converted to
float32 as a whole. Two kinds of pass:

* :func:`iter_scan` is exact: each block is widened to float32 a cache-sized
  slice at a time, for the norms (float32 sums) and the products.
* :func:`iter_fast_products` multiplies a bfloat16 table in bfloat16 (torch,
  products summed in float32 and rounded to bfloat16: about 3 significant
  digits). A neighbour search ranks with it, then scores its best
  candidates exactly.

Row norms are kept per table once a pass has measured them all
(:func:`cached_row_norms`), so a search reads the table once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.jobs import run_to_end

__all__ = ["ScanBlock", "iter_scan", "iter_row_norms", "row_norms", "cached_row_norms", "iter_fast_products"]

#: values per float32 slice of a block: 4 MB stay in the CPU's cache
_SLICE_VALUES = 1 << 20

_NORMS: weakref.WeakKeyDictionary[object, np.ndarray] = weakref.WeakKeyDictionary()
_NORMS_LOCK = threading.Lock()


@dataclass(frozen=True)
class ScanBlock:
    """What a pass found for rows ``start .. start + len(norms)``.

    Attributes
    ----------
    start : int
    norms : ndarray (n,) float64
        L2 norms (float32 sums of squares); NaN or inf where a row holds a
        non-finite value or its squares overflow float32 (see :func:`row_norms`).
    products : ndarray (n, k) float32 or None
        ``rows @ vectors.T`` in float32, when vectors were given.
    rough : ndarray (n, m) float32 or None
        ``rows @ rough.T`` in the stored dtype (bfloat16 precision for a
        bfloat16 table), when rough vectors were given.
    """

    start: int
    norms: np.ndarray
    products: np.ndarray | None = None
    rough: np.ndarray | None = None


def _torch():
    import torch

    return torch


def _weights(vectors, dim: int):
    if vectors is None:
        return None
    torch = _torch()
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, dim)
    return torch.from_numpy(np.ascontiguousarray(vectors.T))


def _native_product(block, weights):
    """block @ weights at memory speed: bfloat16 natively, float16 widened per slice."""
    torch = _torch()
    if block.dtype == torch.bfloat16:
        return (block @ weights.to(torch.bfloat16)).float().numpy()
    if block.dtype == torch.float32:
        return (block @ weights).numpy()
    rows = max(1, _SLICE_VALUES // int(block.shape[1]))
    starts = range(0, int(block.shape[0]), rows)
    return np.concatenate([(block[s : s + rows].float() @ weights).numpy() for s in starts])


def iter_scan(table, vectors: np.ndarray | None = None, stop: int | None = None,
              rough: np.ndarray | None = None) -> Iterator[ScanBlock]:
    """One exact pass over rows ``0 .. stop`` (all rows by default).

    Parameters
    ----------
    table : EmbeddingTable
    vectors : ndarray (k, d), optional
        Each row is multiplied with every vector in float32.
    stop : int, optional
    rough : ndarray (m, d), optional
        Vectors multiplied in the stored dtype (see :func:`iter_fast_products`):
        for sketches whose results are checked afterwards.

    Yields
    ------
    ScanBlock
        In row order. A full pass over all rows also stores the norms for
        :func:`cached_row_norms`.
    """
    torch = _torch()
    weights = _weights(vectors, table.dim)
    rough_weights = _weights(rough, table.dim)
    total = table.vocab_size if stop is None else min(int(stop), table.vocab_size)
    slice_rows = max(1, _SLICE_VALUES // table.dim)
    norms_all = np.empty(total, np.float64) if total == table.vocab_size else None
    for start, block in table.iter_native_blocks(stop=total):
        n = int(block.shape[0])
        norms = np.empty(n, np.float64)
        products = np.empty((n, weights.shape[1]), np.float32) if weights is not None else None
        for s in range(0, n, slice_rows):
            part = block[s : s + slice_rows]
            part = part if part.dtype == torch.float32 else part.float()
            norms[s : s + len(part)] = torch.linalg.vector_norm(part, dim=1).numpy()
            if weights is not None:
                products[s : s + len(part)] = (part @ weights).numpy()
        sketch = _native_product(block, rough_weights) if rough_weights is not None else None
        if norms_all is not None:
            norms_all[start : start + n] = norms
        yield ScanBlock(start, norms, products, sketch)
    if norms_all is not None:
        _remember(table, _exact_where_overflowed(table, norms_all))


def _exact_where_overflowed(table, norms: np.ndarray) -> np.ndarray:
    """Norms that came out non-finite, measured again in float64: a finite
    row whose squares overflow float32 gets its true norm, a row holding
    NaN or inf gets NaN."""
    bad = np.nonzero(~np.isfinite(norms))[0]
    for k in range(0, len(bad), 4096):
        ids = bad[k : k + 4096]
        rows = table.rows(ids).astype(np.float64)
        finite = np.isfinite(rows).all(axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            norms[ids] = np.where(finite, np.linalg.norm(np.where(finite[:, None], rows, 0.0), axis=1), np.nan)
    return norms


def _remember(table, norms: np.ndarray) -> None:
    norms.flags.writeable = False
    with _NORMS_LOCK:
        _NORMS[table] = norms


def cached_row_norms(table) -> np.ndarray | None:
    """The table's row norms if a whole pass measured them already, else None.

    Returns
    -------
    ndarray (V,) float64, read-only, or None
        NaN for rows holding a non-finite value.
    """
    with _NORMS_LOCK:
        return _NORMS.get(table)


def iter_row_norms(table) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns the
    row norms (see :func:`cached_row_norms`), measured once per table."""
    cached = cached_row_norms(table)
    if cached is not None:
        return cached
    total = table.vocab_size
    for blk in iter_scan(table):
        done = blk.start + len(blk.norms)
        yield done / total, f"Measuring row norms… {done:,} of {total:,} rows"
    return cached_row_norms(table)


def row_norms(table) -> np.ndarray:
    """:func:`iter_row_norms` run to the end."""
    return run_to_end(iter_row_norms(table))


def iter_fast_products(table, vectors: np.ndarray, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """Products of rows ``0 .. stop`` with ``vectors``, at memory speed.

    A bfloat16 block is multiplied in bfloat16 (the vectors rounded to
    bfloat16, sums in float32, results rounded to bfloat16: relative error
    about 0.4 %); other blocks in float32.

    Yields
    ------
    (start, ndarray (n, k) float32)
    """
    weights = _weights(vectors, table.dim)
    for start, block in table.iter_native_blocks(stop=stop):
        yield start, _native_product(block, weights)
