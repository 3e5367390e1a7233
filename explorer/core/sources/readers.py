"""Row readers: the lazy part of a table. No Qt here.

Each reader returns float32 rows: ``read_range(start, stop)`` a contiguous
run, ``read(ids)`` sorted unique ids. ``whole()`` gives the float32 array
when the reader already holds it (toys), ``stored()`` the bytes as stored
when they are a plain array in this process (a memory-mapped GGUF tensor).
``native_range(start, stop)`` gives a run as a torch tensor in a dtype torch
computes with natively (a bfloat16 view of the memory-mapped file for
safetensors, float32 otherwise) and ``release_range`` lets the pages of such
a view go once a whole-table pass has used them.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from explorer.core.sources.common import SourceError

__all__ = ["ArrayRows", "RandomRows", "SafetensorsRows", "GGUFRows", "dequantize_q8_0", "runs", "RANDOM_BLOCK_VALUES"]

#: random tables are generated in blocks of at most this many values, so one
#: row costs at most ~256 K normal draws (about a millisecond), whatever d is
RANDOM_BLOCK_VALUES = 256 * 1024
#: blocks kept per random table (at most 64 MB of float32)
_RANDOM_CACHE_BLOCKS = 64


def runs(ids: np.ndarray) -> list[np.ndarray]:
    """Split sorted ids into runs of consecutive ids."""
    if len(ids) == 0:
        return []
    breaks = np.nonzero(np.diff(ids) != 1)[0] + 1
    return np.split(ids, breaks)


class ArrayRows:
    """Rows of an array held in memory (the toy tables)."""

    def __init__(self, array: np.ndarray):
        self.array = np.ascontiguousarray(array, dtype=np.float32)

    def read_range(self, start: int, stop: int) -> np.ndarray:
        return self.array[start:stop]

    def read(self, ids: np.ndarray) -> np.ndarray:
        return self.array[ids]

    def whole(self) -> np.ndarray | None:
        return self.array

    def stored(self) -> np.ndarray | None:
        return None

    #: bytes per value of :meth:`native_range`'s tensors
    native_itemsize = 4

    def native_range(self, start: int, stop: int):
        import torch

        return torch.from_numpy(np.ascontiguousarray(self.read_range(start, stop)))

    def release_range(self, start: int, stop: int) -> None:
        pass


class RandomRows:
    """N(0, std^2) rows generated per block from (seed, block index).

    A block holds ``max(1, RANDOM_BLOCK_VALUES // d)`` rows, so any row is
    reproducible without generating the rest of the table, and reading one
    row of a 128,256 x 4,096 table draws 256 K values, not millions. A small
    LRU of blocks serves repeated reads; long runs (``iter_blocks``) are drawn
    straight into the output and do not flush it.
    """

    def __init__(self, vocab_size: int, dim: int, seed: int, std: float):
        self.v, self.d, self.seed, self.std = vocab_size, dim, seed, np.float32(std)
        self.block_rows = max(1, RANDOM_BLOCK_VALUES // dim)
        self._cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _draw(self, b: int, out: np.ndarray) -> None:
        rng = np.random.default_rng([self.seed, b])
        rng.standard_normal(dtype=np.float32, out=out)
        out *= self.std

    def _rows_in(self, b: int) -> int:
        return min(self.block_rows, self.v - b * self.block_rows)

    def _block(self, b: int, need: int | None = None) -> np.ndarray:
        """The first ``need`` rows of block ``b`` at least (all of them by default).

        The draws of a block are one stream: its first rows are the same
        whether or not the rest is drawn. So reading one row draws the block
        only up to that row, and the cache keeps the longest start of each
        block drawn so far (a sampled read of a wide table, one row in each
        block, drew twice what it needed before)."""
        rows = self._rows_in(b)
        need = rows if need is None else min(need, rows)
        with self._lock:
            blk = self._cache.get(b)
            if blk is not None and len(blk) >= need:
                self._cache.move_to_end(b)
                return blk
        blk = np.empty((need, self.d), np.float32)
        self._draw(b, blk)
        with self._lock:
            held = self._cache.get(b)
            if held is None or len(held) < need:
                self._cache[b] = blk
            self._cache.move_to_end(b)
            while len(self._cache) > _RANDOM_CACHE_BLOCKS:
                self._cache.popitem(last=False)
        return blk

    def read_range(self, start: int, stop: int) -> np.ndarray:
        out = np.empty((stop - start, self.d), np.float32)
        i = start
        while i < stop:
            b, off = divmod(i, self.block_rows)
            rows = self._rows_in(b)
            n = min(stop - i, rows - off)
            if off == 0 and n == rows:
                # a whole block: draw it in place (a long scan must not flush the cache)
                with self._lock:
                    cached = self._cache.get(b)
                if cached is not None and len(cached) == rows:
                    out[i - start : i - start + n] = cached
                else:
                    self._draw(b, out[i - start : i - start + n])
            else:
                out[i - start : i - start + n] = self._block(b, off + n)[off : off + n]
            i += n
        return out

    def read(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, np.int64).reshape(-1)
        out = np.empty((len(ids), self.d), np.float32)
        blocks, offsets = np.divmod(ids, self.block_rows)
        order = np.argsort(blocks, kind="stable")
        bounds = np.flatnonzero(np.diff(blocks[order])) + 1
        for group in np.split(order, bounds) if len(ids) else ():
            blk = self._block(int(blocks[group[0]]), int(offsets[group].max()) + 1)
            out[group] = blk[offsets[group]]
        return out

    def whole(self) -> np.ndarray | None:
        return None

    def stored(self) -> np.ndarray | None:
        return None

    #: bytes per value of :meth:`native_range`'s tensors
    native_itemsize = 4

    def native_range(self, start: int, stop: int):
        import torch

        return torch.from_numpy(np.ascontiguousarray(self.read_range(start, stop)))

    def release_range(self, start: int, stop: int) -> None:
        pass


class SafetensorsRows:
    """Rows of one tensor of a safetensors file, read with ``pread``.

    The (validated) header gives the tensor's byte range; each run of rows is
    one positioned read converted to float32 with numpy (bfloat16 by widening
    its 16 bits). Rows are not read through a memory map: on a 2 GB table,
    mapped pages touched by a sample of rows (and the kernel's read-ahead
    around each) would all count as resident memory. Whole-table passes
    (:meth:`native_range`) do map the file, to compute on the stored
    bfloat16 without a copy, and release each block's pages after use. No
    torch import for reading rows (it costs a second at start).
    """

    _NUMPY = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "F64": np.float64}

    def __init__(self, path: Path, name: str, st_dtype: str, shape: tuple[int, int], base: int):
        self.path, self.name, self.st_dtype = path, name, st_dtype
        self.shape = shape
        self.np_dtype = np.dtype(self._NUMPY[st_dtype])
        self.row_bytes = shape[1] * self.np_dtype.itemsize
        #: byte offset of row 0 in the file
        self.base = base
        self._fd = os.open(str(path), os.O_RDONLY)
        self._lock = threading.Lock()
        self._mapped: mmap.mmap | None = None

    def __del__(self):
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def read_range(self, start: int, stop: int) -> np.ndarray:
        n = stop - start
        want = n * self.row_bytes
        buf = os.pread(self._fd, want, self.base + start * self.row_bytes)
        if len(buf) != want:
            raise SourceError(f"{self.path}: the file ends before row {stop - 1:,} (truncated?); copy it again")
        raw = np.frombuffer(buf, dtype=self.np_dtype).reshape(n, self.shape[1])
        if self.st_dtype == "BF16":
            return (raw.astype(np.uint32) << 16).view(np.float32)
        return raw.astype(np.float32)

    def read(self, ids: np.ndarray) -> np.ndarray:
        out = [self.read_range(run[0], run[-1] + 1) for run in runs(ids)]
        return np.concatenate(out) if out else np.empty((0, self.shape[1]), np.float32)

    def whole(self) -> np.ndarray | None:
        return None

    def stored(self) -> np.ndarray | None:
        return None

    @property
    def native_itemsize(self) -> int:
        """Bytes per value of :meth:`native_range`'s tensors."""
        return self.np_dtype.itemsize if self.st_dtype in ("F32", "F16", "BF16") else 4

    def _map(self) -> mmap.mmap:
        with self._lock:
            if self._mapped is None:
                # a private (copy-on-write) map: writable for torch.frombuffer, never written
                self._mapped = mmap.mmap(self._fd, 0, access=mmap.ACCESS_COPY)
            return self._mapped

    def native_range(self, start: int, stop: int):
        """Rows start..stop as a torch tensor viewing the memory-mapped file
        (no copy) for float32, float16 and bfloat16; float32 otherwise.

        Call :meth:`release_range` once done with it, or the pages it touched
        stay in this process's resident memory.
        """
        import torch

        dtype = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}.get(self.st_dtype)
        if dtype is None:
            return torch.from_numpy(self.read_range(start, stop))
        mapped = self._map()
        n, offset = stop - start, self.base + start * self.row_bytes
        if offset + n * self.row_bytes > len(mapped):
            raise SourceError(f"{self.path}: the file ends before row {stop - 1:,} (truncated?); copy it again")
        return torch.frombuffer(mapped, dtype=dtype, count=n * self.shape[1], offset=offset).view(n, self.shape[1])

    def release_range(self, start: int, stop: int) -> None:
        """Drop this process's mapping of the pages of rows start..stop (the
        OS page cache keeps them; reading them again maps them again)."""
        mapped = self._mapped
        if mapped is None or not hasattr(mapped, "madvise"):
            return
        page = mmap.PAGESIZE
        first = (self.base + start * self.row_bytes) // page * page
        last = min(len(mapped), self.base + stop * self.row_bytes)
        if last > first:
            try:
                mapped.madvise(mmap.MADV_DONTNEED, first, last - first)
            except (OSError, ValueError):
                pass

    def tensor(self):
        """The stored tensor as torch, in its stored dtype."""
        from safetensors import safe_open

        with safe_open(str(self.path), framework="pt") as f:
            return f.get_tensor(self.name)


#: bytes of a Q8_0 block: its float16 scale, then 32 int8 values
_Q8_0_BLOCK = 34


def dequantize_q8_0(raw: np.ndarray) -> np.ndarray:
    """Rows of Q8_0 blocks (n, k * 34) bytes -> (n, k * 32) float32: each value times its block's
    scale in float32, as the gguf package computes it, in a few operations over all the rows.

    gguf does it 16 rows at a time, each a handful of small numpy calls holding the GIL: while
    SmolLM2 opened, 330 ms of every load held the GIL there, and each turn of the window that
    needed it in the meantime waited its turn for it again and again."""
    raw = np.asarray(raw, np.uint8)
    blocks = raw.reshape(-1, _Q8_0_BLOCK)
    scale = blocks[:, :2].view(np.float16).astype(np.float32)
    values = blocks[:, 2:].view(np.int8).astype(np.float32)
    values *= scale
    return values.reshape(*raw.shape[:-1], raw.shape[-1] // _Q8_0_BLOCK * 32)


class GGUFRows:
    """Rows of a memory-mapped GGUF tensor, dequantised by the gguf package (Q8_0 here: the same
    numbers, see :func:`dequantize_q8_0`)."""

    def __init__(self, raw: np.ndarray, qtype, dim: int):
        self.raw, self.dim, self.qtype = raw, dim, qtype

    def dequantize(self, raw: np.ndarray) -> np.ndarray:
        import gguf

        raw = np.asarray(raw)
        if self.qtype == gguf.GGMLQuantizationType.Q8_0 and raw.ndim == 2 and raw.shape[-1] % _Q8_0_BLOCK == 0:
            rows = dequantize_q8_0(raw)
        else:
            rows = gguf.quants.dequantize(raw, self.qtype)
        return np.ascontiguousarray(rows.reshape(-1, self.dim), dtype=np.float32)

    def read_range(self, start: int, stop: int) -> np.ndarray:
        return self.dequantize(self.raw[start:stop])

    def read(self, ids: np.ndarray) -> np.ndarray:
        return self.dequantize(self.raw[ids])

    def whole(self) -> np.ndarray | None:
        return None

    def stored(self) -> np.ndarray | None:
        return self.raw

    #: bytes per value of :meth:`native_range`'s tensors
    native_itemsize = 4

    def native_range(self, start: int, stop: int):
        import torch

        return torch.from_numpy(np.ascontiguousarray(self.read_range(start, stop)))

    def release_range(self, start: int, stop: int) -> None:
        pass
