"""Build small *real* models and files for the source tests.

Everything here writes genuine files with the field's own libraries
(transformers ``save_pretrained``, tokenizers trainers, gguf.GGUFWriter), so
the explorer reads exactly what a user's disk would hold. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SENTENCES = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a bank by the river is green",
    "she put money in the bank",
    "unhappiness is not happiness",
    "the robot arm lifted a box with a tool",
    "tokens become rows of an embedding table",
    "every row is a vector of numbers",
    "small models learn slowly but surely",
    "hello world, hello embeddings!",
]

#: a text every tokenizer built here can encode without unknown pieces
SAMPLE_TEXT = "the cat sat on the mat by the river bank"

SPECIAL = ["<unk>", "<pad>", "<s>", "</s>"]


def explorer_dirs(tmp_path_factory) -> tuple[Path, Path]:
    """(cache, config) folders shared by every test of one session, so the
    slow GGUF tokenizer of smollm2 is built once, in-process or not."""
    base = tmp_path_factory.getbasetemp()
    cache, config = base / "explorer-cache", base / "explorer-config"
    cache.mkdir(parents=True, exist_ok=True)
    config.mkdir(parents=True, exist_ok=True)
    return cache, config


# --------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------


def train_bpe(vocab_size: int = 160):
    """A BPE tokenizer trained on :data:`SENTENCES`, adding <s> ... </s>."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    return tok


def train_wordlevel(extra_words: int = 0):
    """A word-level tokenizer over the words of :data:`SENTENCES` (plus
    ``extra_words`` made-up words, to make a vocabulary larger than a table)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = list(SENTENCES) + [f"word{i}" for i in range(extra_words)]
    trainer = trainers.WordLevelTrainer(special_tokens=SPECIAL, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def save_tokenizer(tok, folder: Path) -> None:
    """Wrap in transformers' fast tokenizer and save it beside the weights."""
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(str(folder))


# --------------------------------------------------------------------------
# transformers models
# --------------------------------------------------------------------------

ARCHS = ("gpt2", "bert", "llama")

#: every (arch, dtype, tied, sharded) combination the tests build
ZOO_KEYS = [
    (arch, dtype, tied, sharded)
    for arch in ARCHS
    for dtype in ("float32", "float16", "bfloat16")
    for tied in (True, False)
    for sharded in (False, True)
]


def zoo_id(key) -> str:
    arch, dtype, tied, sharded = key
    return f"{arch}-{dtype}-{'tied' if tied else 'untied'}-{'sharded' if sharded else 'single'}"


GGUF_KEYS = [(q, tied) for q in ("F32", "F16", "Q8_0") for tied in (True, False)]


@dataclass
class BuiltModel:
    folder: Path
    arch: str
    dtype: str  # float32, float16, bfloat16
    tied: bool
    sharded: bool
    embedding: np.ndarray  # get_input_embeddings().weight as float32
    n_params: int  # sum(p.numel() for p in model.parameters())
    itemsize: int
    native: object = None  # the same weight as a torch tensor in its own dtype


def _config(arch: str, vocab: int, hidden: int, tied: bool):
    from transformers import BertConfig, GPT2Config, LlamaConfig

    if arch == "gpt2":
        return GPT2Config(
            vocab_size=vocab, n_embd=hidden, n_layer=1, n_head=2, n_positions=64, tie_word_embeddings=tied,
            bos_token_id=2, eos_token_id=3,
        )
    if arch == "bert":
        return BertConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=2 * hidden, max_position_embeddings=64, tie_word_embeddings=tied,
        )
    if arch == "llama":
        return LlamaConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
            num_key_value_heads=1, intermediate_size=2 * hidden, max_position_embeddings=64,
            tie_word_embeddings=tied,
        )
    raise ValueError(arch)


def _model_class(arch: str, headless: bool = False):
    import transformers as tf

    if headless:
        return {"gpt2": tf.GPT2Model, "bert": tf.BertModel, "llama": tf.LlamaModel}[arch]
    return {"gpt2": tf.GPT2LMHeadModel, "bert": tf.BertForMaskedLM, "llama": tf.LlamaForCausalLM}[arch]


def build_model(
    folder: Path,
    arch: str,
    dtype: str = "float32",
    tied: bool = True,
    sharded: bool = False,
    hidden: int = 32,
    extra_rows: int = 0,
    headless: bool = False,
    tokenizer=None,
    vocab: int | None = None,
    seed: int = 0,
) -> BuiltModel:
    """Build a tiny random model of ``arch`` with its own tokenizer and save
    both into ``folder`` in Hugging Face layout.

    ``vocab`` defaults to the tokenizer's size plus ``extra_rows`` padding rows.
    """
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tokenizer if tokenizer is not None else train_bpe()
    if vocab is None:
        vocab = tok.get_vocab_size() + extra_rows
    torch.manual_seed(seed)
    cfg = _config(arch, vocab, hidden, tied)
    model = _model_class(arch, headless)(cfg)
    model = model.to(getattr(torch, dtype)).eval()
    native = model.get_input_embeddings().weight.detach().clone()
    emb = native.float().numpy().copy()
    n_params = sum(p.numel() for p in model.parameters())
    kwargs = {"max_shard_size": "8KB"} if sharded else {}
    model.save_pretrained(str(folder), **kwargs)
    save_tokenizer(tok, folder)
    return BuiltModel(
        folder=folder, arch=arch, dtype=dtype, tied=tied, sharded=sharded, embedding=emb,
        n_params=n_params, itemsize=torch.empty((), dtype=getattr(torch, dtype)).element_size(), native=native,
    )


# --------------------------------------------------------------------------
# GGUF files
# --------------------------------------------------------------------------


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
        tokens = _gguf_vocab(vocab)
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


def _gguf_vocab(n: int) -> list[str]:
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


# --------------------------------------------------------------------------
# Bad inputs: name -> (builder, regex the SourceError message must match).
# Each builder takes the folder to write into and keyword arguments gpt2 (a
# single-file BuiltModel), sharded (a sharded Llama BuiltModel whose embedding
# is model.embed_tokens.weight) and gguf_file (a Q8_0 GGUF path).
# --------------------------------------------------------------------------


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
    return write_safetensors(tmp / "huge-empty.safetensors",
                             {"model.embed_tokens.weight": {"dtype": "F32", "shape": [10**12, 0], "data_offsets": [0, 0]}})


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


# --------------------------------------------------------------------------
# Folders around a given tokenizer.json (for tokenizers that fail at run time)
# --------------------------------------------------------------------------


def wordlevel_json(vocab: dict[str, int], unk: str = "[UNK]", pre_tokenizer: dict | None = None) -> dict:
    """A tokenizer.json document of a WordLevel model over ``vocab``."""
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": pre_tokenizer or {"type": "Whitespace"}, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": unk},
    }


#: a Split pre-tokenizer whose pattern backtracks without end on "aaaa...b":
#: the onig engine gives up and the tokenizers library panics (a BaseException)
BACKTRACKING_SPLIT = {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False}


def folder_with_tokenizer(folder: Path, tokenizer: dict | str, vocab: int = 16, dim: int = 8, seed: int = 0) -> Path:
    """A model folder: a float32 ``model.embed_tokens.weight`` (vocab x dim)
    written with safetensors, beside the given tokenizer.json (a dict or raw text)."""
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    save_file({"model.embed_tokens.weight": torch.randn(vocab, dim, generator=g)}, str(folder / "model.safetensors"))
    text = tokenizer if isinstance(tokenizer, str) else json.dumps(tokenizer)
    (folder / "tokenizer.json").write_text(text)
    return folder
