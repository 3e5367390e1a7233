"""The header of a safetensors file, read and checked against the file.

The format is an 8-byte little-endian header length, a JSON object of
``name -> {dtype, shape, data_offsets}`` and the data. Every field a user's
file can get wrong is checked here, before anything is read from the data:
a header longer than the file, JSON that is not an object or nests without
end, shapes that are not lists of sizes, byte ranges outside the data or of
the wrong length for their shape. No Qt here.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

from explorer.core.sources.common import SourceError, shown

__all__ = ["TensorEntry", "read_safetensors_header", "ST_ITEMSIZE"]

#: bytes per element of the safetensors dtypes whose size is known
ST_ITEMSIZE = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2,
    "I64": 8, "I32": 4, "I16": 2, "I8": 1,
    "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
}
#: the safetensors library refuses headers above 100 MB; so do we
_MAX_HEADER = 100 * 1000 * 1000
#: no checkpoint tensor has more dimensions than this (ggml has 4, torch 64)
_MAX_DIMS = 64
_MAX_SIZE = 2**63 - 1


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a safetensors file, as its header describes it.

    Attributes
    ----------
    file : Path
    dtype : str
        The safetensors dtype string (F32, BF16, I64, ...).
    shape : tuple of int
    start : int
        Offset of the tensor's first byte from the start of the file.
    nbytes : int
    """

    file: Path
    dtype: str
    shape: tuple[int, ...]
    start: int
    nbytes: int

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


def _bad(path: Path, reason: str) -> SourceError:
    return SourceError(
        f"{path}: not a valid safetensors file ({reason}); it may be truncated or corrupt, "
        "save or download it again"
    )


def read_safetensors_header(path: Path) -> dict[str, TensorEntry]:
    """Parse and check the header of the safetensors file at ``path``.

    Returns
    -------
    dict
        Tensor name -> :class:`TensorEntry`, in the header's order.

    Raises
    ------
    SourceError
        Naming what is wrong with the file.
    """
    path = Path(path)
    size = path.stat().st_size
    if size < 8:
        raise _bad(path, f"the file has only {size} bytes")
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        if n == 0 or n > min(_MAX_HEADER, size - 8):
            raise _bad(path, f"its header claims {n:,} bytes but the file has {size:,}")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise _bad(path, "its header is nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(path, f"its header is not JSON: {str(exc)[:80]}") from None
    if not isinstance(header, dict):
        raise _bad(path, "its header is not a JSON object")
    data_len = size - 8 - n
    out: dict[str, TensorEntry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        out[name] = _entry(path, name, info, 8 + n, data_len)
    return out


def _is_size(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= _MAX_SIZE


def _entry(path: Path, name: str, info, data_start: int, data_len: int) -> TensorEntry:
    what = f"tensor {shown(name, 60)}"
    if not isinstance(info, dict):
        raise _bad(path, f"{what} is not described by an object")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if not isinstance(dtype, str):
        raise _bad(path, f"{what} has no dtype")
    if not isinstance(shape, list) or len(shape) > _MAX_DIMS or not all(_is_size(s) for s in shape):
        raise _bad(path, f"{what} has a shape that is not a list of sizes")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_size(o) for o in offsets)):
        raise _bad(path, f"{what} has data_offsets that are not two byte offsets")
    begin, end = offsets
    if not begin <= end <= data_len:
        raise _bad(path, f"{what} needs bytes {begin:,} to {end:,} of a data section of {data_len:,}")
    shape_t = tuple(int(s) for s in shape)
    item = ST_ITEMSIZE.get(dtype)
    if item is not None and math.prod(shape_t) * item != end - begin:
        raise _bad(path, f"{what} of shape {list(shape_t)} in {dtype} does not take {end - begin:,} bytes")
    return TensorEntry(path, dtype, shape_t, data_start + begin, end - begin)
