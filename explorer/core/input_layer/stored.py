"""One small tensor of a checkpoint, read when asked: a position table, a
token-type table or a LayerNorm vector. No Qt here.

It reads through the same row readers as the token table
(:mod:`explorer.core.sources.readers`): ``pread`` for safetensors,
dequantisation by the ``gguf`` package for GGUF. A vector (1-D tensor) is
read as one row.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.sources.common import SourceError
from explorer.core.sources.readers import GGUFRows, SafetensorsRows

__all__ = ["StoredTensor", "safetensors_tensor", "gguf_tensor"]

#: safetensors dtypes the row reader converts to float32
_ST_FLOAT = ("F32", "F16", "BF16", "F64")


@dataclass(frozen=True, eq=False)
class StoredTensor:
    """A lazily read tensor of shape (rows, cols); a vector has rows = 1.

    Attributes
    ----------
    name : str
        Its name in the checkpoint (``embeddings.position_embeddings.weight``).
    rows, cols : int
    dtype : str
        As stored (F32, BF16, Q8_0...).
    """

    name: str
    rows: int
    cols: int
    dtype: str
    _reader: object = field(repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def read(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Rows start..stop as float32, shape (stop - start, cols)."""
        stop = self.rows if stop is None else min(int(stop), self.rows)
        start = max(0, min(int(start), stop))
        if stop == start:
            return np.empty((0, self.cols), np.float32)
        return np.asarray(self._reader.read_range(start, stop), dtype=np.float32)

    def take(self, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` (any order, repeats allowed) as float32, shape (len(ids), cols)."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size == 0:
            return np.empty((0, self.cols), np.float32)
        uniq, inverse = np.unique(ids, return_inverse=True)
        got = np.asarray(self._reader.read(uniq), dtype=np.float32)
        return np.ascontiguousarray(got[inverse])

    def vector(self) -> np.ndarray:
        """The tensor as a float32 vector of length cols (for 1-D tensors); cached."""
        with self._lock:
            if "vector" not in self._cache:
                v = self.read(0, 1)[0].copy()
                v.flags.writeable = False
                self._cache["vector"] = v
            return self._cache["vector"]


def safetensors_tensor(entry, name: str) -> StoredTensor:
    """A tensor of a safetensors checkpoint from its header entry.

    Raises
    ------
    SourceError
        For a dtype that is not floating point or a shape that is not 1-D or 2-D.
    """
    shape = tuple(int(s) for s in entry.shape)
    if entry.dtype not in _ST_FLOAT or len(shape) not in (1, 2) or 0 in shape:
        raise SourceError(f"{entry.file}: {name} has shape {shape} and type {entry.dtype}, which cannot be read "
                          "as an input-layer table")
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}[entry.dtype]
    reader = SafetensorsRows(Path(entry.file), name, entry.dtype, (rows, cols), entry.start)
    return StoredTensor(name, rows, cols, dtype, reader)


def gguf_tensor(header, name: str) -> StoredTensor:
    """A tensor of a GGUF file, memory-mapped and dequantised per row.

    Raises
    ------
    SourceError
        For a shape that is not 1-D or 2-D, a tensor past the file's end or
        a type the gguf package does not know.
    """
    import gguf

    from explorer.core.sources import ggufio

    info = header.tensors[name]
    shape = tuple(int(s) for s in info.shape)
    if len(shape) not in (1, 2) or 0 in shape:
        raise SourceError(f"{header.path}: {name} has shape {shape}, not a table or a vector")
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    try:
        rb = ggufio.row_bytes(info.type_id, cols)
        qtype = gguf.GGMLQuantizationType(info.type_id)
    except (ggufio.GGUFError, ValueError) as exc:
        raise SourceError(f"{header.path}: {name} cannot be read ({exc})") from None
    if info.offset + rows * rb > header.path.stat().st_size:
        raise SourceError(f"{header.path}: {name} runs past the end of the file (truncated?); copy it again")
    raw = np.memmap(header.path, dtype=np.uint8, mode="r", offset=info.offset, shape=(rows, rb))
    return StoredTensor(name, rows, cols, ggufio.type_name(info.type_id), GGUFRows(raw, qtype, cols))
