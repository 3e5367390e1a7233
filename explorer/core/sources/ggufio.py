"""A fast, read-only view of a GGUF file's header.

``gguf.GGUFReader`` builds Python objects for every metadata element (the
tokenizer's ~100k strings included) and needs about 3 s for SmolLM2. We only
need the scalar metadata, the tensor directory and a memory map of one
tensor, which a direct parse gives in milliseconds. Dequantisation is still
done by the ``gguf`` package.

No Qt here.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from explorer.core.units import shorten

__all__ = ["GGUFError", "GGUFTensorInfo", "GGUFHeader", "read_header"]

GGUF_MAGIC = b"GGUF"

# value types of the GGUF key/value section
_SCALAR = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
_STRING = 8
_ARRAY = 9


class GGUFError(ValueError):
    """The file is not a readable GGUF file."""


def _q(value, limit: int = 48) -> str:
    """A name or value from the file, quoted short for a message: a corrupt
    length can make a key swallow the rest of the header."""
    return shorten(repr(value), limit)


@dataclass(frozen=True)
class GGUFTensorInfo:
    name: str
    #: shape in PyTorch (row-major) order, e.g. (V, d) for token_embd.weight
    shape: tuple[int, ...]
    type_id: int
    #: byte offset of the data from the start of the file
    offset: int

    @property
    def n_elements(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass
class GGUFHeader:
    path: Path
    version: int
    metadata: dict
    #: length of each array-valued metadata key (arrays are not decoded)
    array_lengths: dict[str, int]
    tensors: dict[str, GGUFTensorInfo]
    #: ``general.alignment`` (checked), 32 when the file does not say
    alignment: int = 32
    #: bytes of the header and tensor directory, from the start of the file
    header_size: int = 0


def read_header(path: str | Path) -> GGUFHeader:
    """Parse the header and tensor directory of a GGUF file and check them
    against the file.

    Besides the format itself, ``general.alignment`` must be a u32 power of
    two, every tensor must start at a multiple of it, and (when every
    tensor's type is known) the tensors must follow each other as the GGUF
    spec and llama.cpp lay them out, ending where the file ends: a header
    that does not match its file would otherwise read rows from the wrong
    bytes.

    Raises
    ------
    GGUFError
        If the file is not GGUF, is truncated, or has a malformed header.
    """
    path = Path(path)
    size = path.stat().st_size
    key = str(path.resolve())
    with _HEADERS_LOCK:
        kept = _HEADERS.get(key)
    header = None
    if kept is not None and kept[0] == size:
        with open(path, "rb") as f:
            same = _digest(f.read(kept[1].header_size)) == kept[2]
        header = kept[1] if same else None
    if header is None:
        header, digest = _read_header(path, size)
        with _HEADERS_LOCK:
            _HEADERS[key] = (size, header, digest)
            _HEADERS.move_to_end(key)
            while len(_HEADERS) > _HEADERS_KEPT:
                _HEADERS.popitem(last=False)
    # the caller's own dicts: one that edits them must not change the next caller's header
    return replace(header, path=path, metadata=dict(header.metadata), array_lengths=dict(header.array_lengths),
                   tensors=dict(header.tensors))


#: headers parsed so far, by real path, with the file's size and a digest of the header's bytes:
#: the model list is read again each time the picker opens, and skipping SmolLM2's ~150,000
#: strings in Python held the GIL for 11-50 ms each time. The digest (hashlib lets the GIL go)
#: takes 1-2 ms; a header rewritten in place, within the file system's clock tick, is still seen
_HEADERS: OrderedDict[str, tuple[int, GGUFHeader, bytes]] = OrderedDict()
_HEADERS_KEPT = 16
_HEADERS_LOCK = threading.Lock()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _read_header(path: Path, size: int) -> tuple[GGUFHeader, bytes]:
    """The parsed header and the digest of its bytes, from one mapping of the file."""
    if size < 24:
        raise GGUFError("the file is too short to be GGUF")
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            header = _parse(path, mm, size)
            return header, _digest(mm[: header.header_size])
        except (struct.error, IndexError, OverflowError) as exc:
            raise GGUFError(f"the GGUF header is truncated or corrupt ({exc})") from None
        except UnicodeDecodeError:
            raise GGUFError("the GGUF header holds a string that is not UTF-8 (corrupt file?)") from None
        finally:
            mm.close()


def _parse(path: Path, mm, size: int) -> GGUFHeader:
    unpack = struct.unpack_from
    if mm[:4] != GGUF_MAGIC:
        raise GGUFError("the file does not start with the GGUF magic bytes")
    (version,) = unpack("<I", mm, 4)
    if version not in (2, 3):
        raise GGUFError(f"GGUF version {version} is not supported (versions 2 and 3 are)")
    n_tensors, n_kv = unpack("<QQ", mm, 8)
    # every entry takes at least 8 bytes (a string length): more entries than
    # that cannot fit in the file, and would only make the loops below spin
    if n_tensors > min(1_000_000, size // 8) or n_kv > min(1_000_000, size // 8):
        raise GGUFError("the GGUF header announces an impossible number of entries")
    pos = 24

    def read_str(p: int) -> tuple[str, int]:
        (ln,) = unpack("<Q", mm, p)
        p += 8
        if p + ln > size:
            raise GGUFError("a string runs past the end of the file (truncated?)")
        return mm[p : p + ln].decode("utf-8"), p + ln

    def skip_value(vtype: int, p: int) -> int:
        if vtype in _SCALAR:
            return p + _SCALAR[vtype][1]
        if vtype == _STRING:
            (ln,) = unpack("<Q", mm, p)
            return p + 8 + ln
        raise GGUFError(f"unknown GGUF value type {vtype} inside an array (nested arrays are not read)")

    metadata: dict = {}
    types: dict[str, int] = {}
    array_lengths: dict[str, int] = {}
    for _ in range(n_kv):
        key, pos = read_str(pos)
        (vtype,) = unpack("<I", mm, pos)
        pos += 4
        types[key] = vtype
        if vtype in _SCALAR:
            fmt, n = _SCALAR[vtype]
            (metadata[key],) = unpack(fmt, mm, pos)
            pos += n
        elif vtype == _STRING:
            metadata[key], pos = read_str(pos)
        elif vtype == _ARRAY:
            elem, n = unpack("<IQ", mm, pos)
            pos += 12
            array_lengths[key] = n
            least = _SCALAR[elem][1] if elem in _SCALAR else 8
            if n * least > size - pos:
                raise GGUFError(f"array {_q(key)} announces {n:,} elements, more than the file holds (truncated?)")
            if elem in _SCALAR:
                pos += n * _SCALAR[elem][1]
            elif elem == _STRING:
                for _i in range(n):
                    (ln,) = unpack("<Q", mm, pos)
                    pos += 8 + ln
                    if pos > size:
                        break
            else:
                for _i in range(n):
                    pos = skip_value(elem, pos)
                    if pos > size:
                        break
        else:
            raise GGUFError(f"unknown GGUF value type {vtype} for key {_q(key)}")
        if pos > size:
            raise GGUFError("the metadata runs past the end of the file (truncated?)")

    infos = []
    for _ in range(n_tensors):
        name, pos = read_str(pos)
        (n_dims,) = unpack("<I", mm, pos)
        pos += 4
        if not 1 <= n_dims <= 8:
            raise GGUFError(f"tensor {_q(name)} has {n_dims} dimensions")
        dims = unpack(f"<{n_dims}Q", mm, pos)
        pos += 8 * n_dims
        type_id, offset = unpack("<IQ", mm, pos)
        pos += 12
        n_el = 1
        for dim in dims:
            n_el *= dim
        if n_el >= 2**62:
            raise GGUFError(f"tensor {_q(name)} has an impossible shape {tuple(reversed(dims))}")
        infos.append((name, tuple(reversed(dims)), type_id, offset))

    alignment = _alignment(metadata, types)
    data_start = pos + (-pos % alignment)
    tensors = {
        name: GGUFTensorInfo(name, shape, type_id, data_start + off)
        for name, shape, type_id, off in infos
    }
    _check_layout(infos, alignment, data_start, size)
    return GGUFHeader(path, version, metadata, array_lengths, tensors, alignment, pos)


def _alignment(metadata: dict, types: dict[str, int]) -> int:
    """``general.alignment``: a u32 power of two (32 when absent), as the GGUF
    spec and llama.cpp require."""
    key = "general.alignment"
    if key not in metadata:
        return 32
    value = metadata[key]
    if types[key] != 4:
        raise GGUFError(f"general.alignment must be a u32, not a value of GGUF type {types[key]} ({_q(value)})")
    if value <= 0 or value & (value - 1):
        raise GGUFError(f"general.alignment is {value}, not a power of two")
    return int(value)


def _check_layout(infos, alignment: int, data_start: int, size: int) -> None:
    """Tensor offsets against the alignment and the file's size."""
    import gguf

    known = True
    expected = 0
    end = data_start
    for name, shape, type_id, offset in infos:
        if offset % alignment:
            raise GGUFError(f"tensor {_q(name)} starts at offset {offset:,}, "
                            f"not a multiple of the alignment {alignment}")
        try:
            block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(type_id)]
        except (ValueError, KeyError):
            known = False
            continue
        n_el = 1
        for s in shape:
            n_el *= s
        if not shape or shape[-1] % block:
            raise GGUFError(f"tensor {_q(name)} has rows of {shape[-1] if shape else 0} values, "
                            f"not a multiple of its type's block of {block}")
        nbytes = n_el // block * type_size
        if data_start + offset + nbytes > size:
            raise GGUFError(
                f"tensor {_q(name)} needs bytes up to {data_start + offset + nbytes:,} but the file has only "
                f"{size:,} (truncated, or general.alignment does not match the file)"
            )
        if known and offset != expected:
            # llama.cpp lays tensors out in directory order, each padded to the
            # alignment; a header that says otherwise does not match its data
            raise GGUFError(
                f"tensor {_q(name)} is said to start at offset {offset:,} but the tensors before it end at "
                f"{expected:,}; the tensor directory does not match the file"
            )
        expected += nbytes + (-nbytes % alignment)
        end = max(end, data_start + offset + nbytes)
    if known and infos and size - end >= alignment:
        raise GGUFError(
            f"the file holds {size - end:,} bytes after its last tensor: general.alignment ({alignment}) "
            "or the tensor offsets do not match the file"
        )


def row_bytes(type_id: int, width: int) -> int:
    """Bytes one row of ``width`` values takes in GGML type ``type_id``."""
    import gguf

    try:
        qtype = gguf.GGMLQuantizationType(type_id)
    except ValueError:
        raise GGUFError(f"unknown GGML tensor type {type_id}") from None
    block, type_size = gguf.GGML_QUANT_SIZES[qtype]
    if width % block:
        raise GGUFError(f"row width {width} is not a multiple of the {qtype.name} block of {block}")
    return width // block * type_size


def type_name(type_id: int) -> str:
    import gguf

    try:
        return gguf.GGMLQuantizationType(type_id).name
    except ValueError:
        return f"type {type_id}"


def memmap_rows(header: GGUFHeader, name: str) -> np.ndarray:
    """Memory-map a 2-D tensor's raw bytes as uint8 of shape (rows, row_bytes).

    Raises
    ------
    GGUFError
        For a tensor that is not 2-D, empty, or not inside the file.
    """
    info = header.tensors[name]
    if len(info.shape) != 2:
        raise GGUFError(f"tensor {_q(name)} is not 2-D (shape {info.shape})")
    rows, width = info.shape
    if rows == 0 or width == 0:
        raise GGUFError(f"tensor {_q(name)} has shape ({rows:,}, {width:,}): an empty table has no rows to show")
    rb = row_bytes(info.type_id, width)
    end = info.offset + rows * rb
    if end > header.path.stat().st_size:
        raise GGUFError(
            f"tensor {_q(name)} needs bytes up to {end:,} but the file has only "
            f"{header.path.stat().st_size:,} (truncated?)"
        )
    return np.memmap(header.path, dtype=np.uint8, mode="r", offset=info.offset, shape=(rows, rb))
