"""Bad inputs: name -> (builder, regex the SourceError message must match).

Each builder takes the folder to write into and keyword arguments gpt2 (a
single-file BuiltModel), sharded (a sharded Llama BuiltModel whose embedding
is model.embed_tokens.weight) and gguf_file (a Q8_0 GGUF path).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np

from tests.support.gguf_files import patch_gguf_tensor_type, write_gguf


def _truncated_safetensors(tmp, gpt2, **_):
    raw = (gpt2.folder / "model.safetensors").read_bytes()
    p = tmp / "half.safetensors"
    p.write_bytes(raw[: len(raw) // 2])
    return p


def _corrupt_safetensors(tmp, **_):
    p = tmp / "garbage.safetensors"
    p.write_bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    return p


def _truncated_folder(tmp, gpt2, **_):
    folder = shutil.copytree(gpt2.folder, tmp / "cut")
    raw = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(raw[: len(raw) - 100])
    return folder


def _truncated_gguf(tmp, gguf_file, **_):
    raw = gguf_file.read_bytes()
    p = tmp / "half.gguf"
    p.write_bytes(raw[: len(raw) // 2])
    return p


def _header_only_gguf(tmp, gguf_file, **_):
    raw = gguf_file.read_bytes()
    p = tmp / "head.gguf"
    p.write_bytes(raw[:60])
    return p


def _not_gguf(tmp, **_):
    p = tmp / "fake.gguf"
    p.write_bytes(b"this is not a gguf file at all, only text" * 4)
    return p


def _txt(tmp, **_):
    p = tmp / "notes.txt"
    p.write_text("the cat sat on the mat\n")
    return p


def _png(tmp, **_):
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b"")
    p = tmp / "picture.png"
    p.write_bytes(png)
    return p


class _Boom:
    def __reduce__(self):
        return (os.system, ("touch PWNED",))


def _pickle_bin(tmp, **_):
    import torch

    p = tmp / "pytorch_model.bin"
    torch.save({"evil": _Boom()}, p)
    return p


def _pickle_folder(tmp, **_):
    import torch

    folder = tmp / "pickled"
    folder.mkdir()
    torch.save({"evil": _Boom()}, folder / "pytorch_model.bin")
    (folder / "config.json").write_text("{}")
    return folder


def _empty_folder(tmp, **_):
    folder = tmp / "empty"
    folder.mkdir()
    return folder


def _missing_shard(tmp, sharded, **_):
    folder = shutil.copytree(sharded.folder, tmp / "sharded")
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    victim = index["weight_map"]["model.embed_tokens.weight"]
    (folder / victim).unlink()
    return folder


def _bad_config(tmp, gpt2, **_):
    folder = shutil.copytree(gpt2.folder, tmp / "badcfg")
    (folder / "config.json").write_text('{"vocab_size": 10,')
    return folder


def _bad_index(tmp, sharded, **_):
    folder = shutil.copytree(sharded.folder, tmp / "badindex")
    (folder / "model.safetensors.index.json").write_text('{"metadata": {}}')
    return folder


def _unknown_ggml_type(tmp, gguf_file, **_):
    p = tmp / "newtype.gguf"
    shutil.copy(gguf_file, p)
    patch_gguf_tensor_type(p, "token_embd.weight", 200)
    return p


def _config_not_object(tmp, gpt2, **_):
    folder = shutil.copytree(gpt2.folder, tmp / "listcfg")
    (folder / "config.json").write_text("[1, 2, 3]")
    return folder


def _index_map_not_object(tmp, sharded, **_):
    folder = shutil.copytree(sharded.folder, tmp / "listindex")
    (folder / "model.safetensors.index.json").write_text('{"weight_map": ["model-00001-of-00002.safetensors"]}')
    return folder


def _corrupt_tokenizer(tmp, gpt2, **_):
    folder = shutil.copytree(gpt2.folder, tmp / "badtok")
    (folder / "tokenizer.json").write_text("{not a tokenizer")
    return folder


def _no_matrix_safetensors(tmp, **_):
    import torch
    from safetensors.torch import save_file

    p = tmp / "vector.safetensors"
    save_file({"bias": torch.zeros(8)}, str(p))
    return p


def _int_safetensors(tmp, **_):
    import torch
    from safetensors.torch import save_file

    p = tmp / "ints.safetensors"
    save_file({"model.embed_tokens.weight": torch.zeros(10, 4, dtype=torch.int64)}, str(p))
    return p


def _gguf_without_embedding(tmp, **_):
    import gguf

    p = tmp / "noembed.gguf"
    w = gguf.GGUFWriter(str(p), arch="llama")
    w.add_tensor("blk.0.attn_q.weight", np.zeros((4, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return p


def _missing_path(tmp, **_):
    return tmp / "no" / "such" / "model.safetensors"


def _ones_gguf(tmp, value, vtype_name, name):
    """An all-1.0 48 x 64 F32 table whose general.alignment says ``value``
    while the data is laid out at 32: any silent open would read padding."""
    import gguf

    kv = [("general.alignment", value, getattr(gguf.GGUFValueType, vtype_name))]
    return write_gguf(tmp / f"{name}.gguf", np.ones((48, 64), np.float32), kv=kv)


def _typed_gguf(tmp, dtype, name):
    """token_embd.weight stored as an integer or float64 GGML type (I8, F64...)."""
    import gguf

    p = tmp / f"{name}.gguf"
    w = gguf.GGUFWriter(str(p), arch="llama")
    w.add_tensor("token_embd.weight", np.ones((48, 64), dtype=dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return p


def _q8_1_gguf(tmp, **_):
    """Q8_1 blocks (40 bytes per 32 values): the gguf package cannot dequantise them."""
    import gguf

    qt = gguf.GGMLQuantizationType.Q8_1
    block, size = gguf.GGML_QUANT_SIZES[qt]
    raw = np.zeros((48, 64 // block * size), np.uint8)
    return write_gguf(tmp / "q8_1.gguf", raw=(raw, None, qt))


def _long_key_gguf(tmp, gguf_file, **_):
    """The first key's length (a u64 at byte 24) grown so the key swallows
    the whole header, up to the tensor data: found by the fuzz suite, whose
    error message then quoted 700 characters of header."""
    import gguf

    reader = gguf.GGUFReader(str(gguf_file))
    data_start = min(int(t.data_offset) for t in reader.tensors)
    del reader
    raw = bytearray(gguf_file.read_bytes())
    struct.pack_into("<Q", raw, 24, data_start - 32)
    raw[data_start : data_start + 4] = struct.pack("<I", 0x7FFF0000)  # the value type read after it
    p = tmp / "longkey.gguf"
    p.write_bytes(bytes(raw))
    return p


def write_safetensors(path: Path, header: dict, data: bytes = b"", length: int | None = None) -> Path:
    """A safetensors file from a header dict and data bytes; ``length``
    overrides the 8-byte header length (to make it lie)."""
    raw = json.dumps(header).encode()
    n = len(raw) if length is None else length
    Path(path).write_bytes(struct.pack("<Q", n) + raw + data)
    return Path(path)


def _empty_rows(tmp, **_):
    return write_safetensors(tmp / "norows.safetensors",
                             {"model.embed_tokens.weight": {"dtype": "F32", "shape": [0, 16], "data_offsets": [0, 0]}})


def _empty_cols(tmp, **_):
    return write_safetensors(tmp / "nocols.safetensors",
                             {"model.embed_tokens.weight": {"dtype": "F32", "shape": [16, 0], "data_offsets": [0, 0]}})


def _trillion_by_zero(tmp, **_):
    # opening it used to loop over 10**12 rows, 16,384 at a time
    header = {"model.embed_tokens.weight": {"dtype": "F32", "shape": [10**12, 0], "data_offsets": [0, 0]}}
    return write_safetensors(tmp / "huge-empty.safetensors", header)


def nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_config(tmp, gpt2, **_):
    folder = shutil.copytree(gpt2.folder, tmp / "deepcfg")
    (folder / "config.json").write_text('{"a": ' + nested_json(100_000) + "}")
    return folder


def _deep_index(tmp, sharded, **_):
    folder = shutil.copytree(sharded.folder, tmp / "deepindex")
    (folder / "model.safetensors.index.json").write_text('{"weight_map": ' + nested_json(100_000) + "}")
    return folder


def _renamed_shard(tmp, sharded, name: str, new_name) -> Path:
    """A copy of the sharded model whose index names the embedding's shard
    ``new_name(folder, shard)`` instead (the shard file stays where it was)."""
    folder = shutil.copytree(sharded.folder, tmp / name)
    index_path = folder / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    victim = index["weight_map"]["model.embed_tokens.weight"]
    renamed = new_name(folder, victim)
    index["weight_map"] = {k: (renamed if v == victim else v) for k, v in index["weight_map"].items()}
    index_path.write_text(json.dumps(index))
    return folder


def _shard_outside(tmp, sharded, **_):
    """An index entry ../elsewhere/w.safetensors naming a real file outside the folder."""
    def outside(folder, victim):
        (tmp / "elsewhere").mkdir()
        shutil.copy(folder / victim, tmp / "elsewhere" / "w.safetensors")
        return "../elsewhere/w.safetensors"

    return _renamed_shard(tmp, sharded, "inside", outside)


def _absolute_shard(tmp, sharded, **_):
    return _renamed_shard(tmp, sharded, "absolute", lambda folder, victim: str((folder / victim).resolve()))


BAD_FILES = {
    "missing-path": (_missing_path, "no such file or folder"),
    "truncated-safetensors": (_truncated_safetensors, "not a valid safetensors file.*truncated or corrupt"),
    "truncated-safetensors-in-folder": (_truncated_folder, "not a valid safetensors file"),
    "corrupt-safetensors": (_corrupt_safetensors, "not a valid safetensors file"),
    "truncated-gguf": (_truncated_gguf, "truncated"),
    "header-only-gguf": (_header_only_gguf, "not a readable GGUF file"),
    "not-gguf": (_not_gguf, "not a readable GGUF file.*magic"),
    "txt": (_txt, r"unsupported file type \.txt"),
    "png": (_png, r"unsupported file type \.png"),
    "pickle-bin": (_pickle_bin, "unpickling can run code"),
    "pickle-folder": (_pickle_folder, "only pickled weights"),
    "empty-folder": (_empty_folder, "no .safetensors or .gguf weights"),
    "missing-shard": (_missing_shard, "shard model-.*missing"),
    "invalid-config": (_bad_config, "config.json is not valid JSON"),
    "invalid-index": (_bad_index, "shard index is not valid"),
    "unknown-ggml-type": (_unknown_ggml_type, "unknown GGML tensor type 200"),
    "config-not-an-object": (_config_not_object, "config.json is not a JSON object"),
    "index-map-not-an-object": (_index_map_not_object, "shard index is not valid"),
    "corrupt-tokenizer": (_corrupt_tokenizer, "tokenizer file cannot be read"),
    "no-matrix-safetensors": (_no_matrix_safetensors, "no 2-D tensor"),
    "integer-safetensors": (_int_safetensors, "stored as I64, which is not supported"),
    "gguf-without-embedding": (_gguf_without_embedding, "no token_embd.weight"),
    # issue 11, item 4: general.alignment that is not a u32 power of two, or does not match the file
    "gguf-alignment-zero": (lambda tmp, **_: _ones_gguf(tmp, 0, "UINT32", "a0"), "general.alignment is 0"),
    "gguf-alignment-nan": (lambda tmp, **_: _ones_gguf(tmp, float("nan"), "FLOAT32", "anan"),
                           "general.alignment must be a u32"),
    "gguf-alignment-negative": (lambda tmp, **_: _ones_gguf(tmp, -32, "INT32", "aneg"),
                                "general.alignment must be a u32"),
    "gguf-alignment-string": (lambda tmp, **_: _ones_gguf(tmp, "32", "STRING", "astr"),
                              "general.alignment must be a u32"),
    "gguf-alignment-not-power-of-two": (lambda tmp, **_: _ones_gguf(tmp, 48, "UINT32", "a48"), "not a power of two"),
    "gguf-alignment-smaller-than-file": (lambda tmp, **_: _ones_gguf(tmp, 8, "UINT32", "a8"),
                                         "alignment.*do(es)? not match the file"),
    "gguf-alignment-larger-than-file": (lambda tmp, **_: _ones_gguf(tmp, 4096, "UINT32", "a4096"),
                                        "general.alignment does not match the file|not a multiple"),
    "gguf-key-swallows-header": (_long_key_gguf, "not a readable GGUF file"),
    # item 5: types the gguf package cannot dequantise are refused at open, by name
    "gguf-i8": (lambda tmp, **_: _typed_gguf(tmp, np.int8, "i8"), "stored as I8, which the gguf package cannot"),
    "gguf-i32": (lambda tmp, **_: _typed_gguf(tmp, np.int32, "i32"), "stored as I32"),
    "gguf-f64": (lambda tmp, **_: _typed_gguf(tmp, np.float64, "f64"), "stored as F64"),
    "gguf-q8_1": (_q8_1_gguf, "stored as Q8_1"),
    # item 6: empty tables
    "safetensors-zero-rows": (_empty_rows, "an empty table has no rows"),
    "safetensors-zero-columns": (_empty_cols, "an empty table has no rows"),
    "safetensors-trillion-by-zero": (_trillion_by_zero, "an empty table has no rows"),
    # item 7: JSON nested past the parser's recursion limit
    "deeply-nested-config": (_deep_config, "config.json is nested too deeply"),
    "deeply-nested-index": (_deep_index, "shard index is nested too deeply"),
    # item 13: shards stay inside the model folder
    "shard-outside-folder": (_shard_outside, "not a file inside the model folder"),
    "shard-absolute-path": (_absolute_shard, "not a file inside the model folder"),
}


def make_bad_input(name: str, tmp: Path, **models) -> Path:
    """Write bad input ``name`` of :data:`BAD_FILES` under ``tmp`` and return its path."""
    return BAD_FILES[name][0](Path(tmp), **models)
