"""GGUF files written with gguf.GGUFWriter, and a header-level corruption
of one (a tensor type id a newer writer could produce)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GGUF_KEYS = [(q, tied) for q in ("F32", "F16", "Q8_0") for tied in (True, False)]


@dataclass
class BuiltGGUF:
    path: Path
    qtype: str  # F32, F16, Q8_0
    tied: bool
    written: np.ndarray  # what token_embd.weight holds, dequantised (float32)
    row_bytes: int  # bytes of one row as written
    n_elements: int  # elements of every tensor written


def build_gguf(
    path: Path,
    qtype: str = "F32",
    tied: bool = True,
    vocab: int = 48,
    dim: int = 64,
    with_tokenizer: bool = False,
    seed: int = 0,
) -> BuiltGGUF:
    """Write a GGUF file with ``token_embd.weight`` (V x d) in ``qtype``,
    ``output.weight`` when untied, and a GPT-2 style vocabulary when asked."""
    import gguf

    rng = np.random.default_rng(seed)
    table = rng.standard_normal((vocab, dim)).astype(np.float32) * 0.5
    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_name(f"test {qtype}")
    w.add_context_length(64)
    w.add_embedding_length(dim)
    w.add_block_count(0)
    if with_tokenizer:
        tokens = gguf_vocab(vocab)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_types([gguf.TokenType.CONTROL] * 2 + [gguf.TokenType.NORMAL] * (len(tokens) - 2))
        w.add_token_scores([0.0] * len(tokens))
        w.add_token_merges([])
        w.add_bos_token_id(0)
        w.add_eos_token_id(1)
    qt = gguf.GGMLQuantizationType[qtype]
    n_elements = 0
    tensors = [("token_embd.weight", table)]
    if not tied:
        tensors.append(("output.weight", rng.standard_normal((vocab, dim)).astype(np.float32)))
    written = None
    for name, arr in tensors:
        if qt == gguf.GGMLQuantizationType.F32:
            data = arr
            w.add_tensor(name, data)
        elif qt == gguf.GGMLQuantizationType.F16:
            data = arr.astype(np.float16)
            w.add_tensor(name, data)
        else:
            data = gguf.quants.quantize(arr, qt)
            w.add_tensor(name, data, raw_dtype=qt)
        if name == "token_embd.weight":
            written = np.asarray(gguf.quants.dequantize(np.asarray(data), qt), dtype=np.float32).reshape(vocab, dim)
            raw_row_bytes = np.asarray(data).reshape(vocab, -1).view(np.uint8).shape[1]
        n_elements += arr.size
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return BuiltGGUF(Path(path), qtype, tied, written, raw_row_bytes, n_elements)


def gguf_vocab(n: int) -> list[str]:
    """``n`` distinct byte-level pieces: specials, then letters and Ġ-words."""
    words = ["<s>", "</s>"]
    words += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    base = ["the", "cat", "sat", "on", "mat", "dog", "log", "sun"]
    words += ["Ġ" + b for b in base]
    i = 0
    while len(words) < n:
        words.append(f"w{i}")
        i += 1
    return words[:n]


def patch_gguf_tensor_type(path: Path, name: str, new_type: int) -> None:
    """Overwrite the GGML type id of tensor ``name`` in the file's tensor
    directory (a header-level corruption, as a newer writer could produce)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    field_off = None
    for t in reader.tensors:
        if t.name == name:
            # ReaderTensor.field holds the parts of the info record; the type is
            # the u32 after the dims
            field_off = t.field.offset
            n_dims = len(t.shape)
            break
    del reader
    assert field_off is not None
    raw = bytearray(Path(path).read_bytes())
    # record: u64 name length, name, u32 n_dims, u64 dims * n, u32 type, u64 offset
    (ln,) = struct.unpack_from("<Q", raw, field_off)
    assert raw[field_off + 8 : field_off + 8 + ln].decode() == name
    pos = field_off + 8 + ln + 4 + 8 * n_dims
    struct.pack_into("<I", raw, pos, new_type)
    Path(path).write_bytes(bytes(raw))


def write_gguf(path: Path, table: np.ndarray | None = None, kv: list | None = None,
               raw: tuple | None = None, tied: bool = True) -> Path:
    """A GGUF file written by gguf.GGUFWriter: ``table`` (float32, stored F32)
    as token_embd.weight, or ``raw`` = (bytes as uint8 array, (V, d), qtype)
    for a type given as raw blocks (shape None: the bytes' shape says it); extra metadata ``kv`` as
    (key, value, GGUFValueType) triples, written as they are, so a key such as
    general.alignment may disagree with the layout the writer uses (32)."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch="llama")
    w.add_name("fuzz")
    for key, value, vtype in kv or ():
        w.add_key_value(key, value, vtype)
    if raw is not None:
        data, shape, qtype = raw
        w.add_tensor("token_embd.weight", data, raw_shape=shape, raw_dtype=qtype)
    else:
        w.add_tensor("token_embd.weight", np.asarray(table, dtype=np.float32))
    if not tied:
        w.add_tensor("output.weight", np.zeros((4, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)
