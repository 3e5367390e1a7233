"""Fuzz every parser a user's file reaches, through open_table, peek and
inspect's data function: specs, safetensors headers, GGUF headers and
metadata (real files from gguf.GGUFWriter, then corrupted), and the JSON of
a model folder (config, shard index, classes, tokenizer).

Every outcome is a table that reads its rows, or one ExplorerError line.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from explorer.core.errors import ExplorerError
from explorer.core.sources import open_table, peek
from tests.support import model_factory as mf
from tests.support.fuzzing import check_error, check_inspect, fuzz_settings, outcome


def open_and_read(spec: str):
    """open_table + peek + a short inspection; returns the table or the error."""
    info = peek(spec, "recent")
    if info.error is not None:
        assert "\n" not in info.error and info.error.strip()
    got = outcome(open_table, spec)
    if isinstance(got, ExplorerError):
        event(f"refused: {_kind_of(got)}")
        return got
    event(f"opened {got.kind}")
    # a table that opens reads its first and last rows
    text = "0 1" if got.tokenizer.description.startswith("integer ids") else (got.example_text or "a")
    check_inspect(got, text)
    check_inspect(got, str(got.vocab_size - 1))
    return got


def _kind_of(exc: Exception) -> str:
    """A short class of an error message, for hypothesis's statistics."""
    import re

    msg = re.sub(r"'[^']*'|\S*/\S*|\d[\d,.]*", "_", str(exc))
    return " ".join(msg.split()[:7])[:60]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A folder rewritten by every example, and a private GGUF tokenizer
    cache (every corrupted file would add its own entry)."""
    base = tmp_path_factory.mktemp("fuzz-files")
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_CACHE_DIR", str(base / "cache"))
    yield base
    mp.undo()


# --------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------

digits = st.builds(lambda d, n: d * n, st.sampled_from("0123456789"), st.integers(1, 6000))
numbers = st.one_of(st.integers(0, 100_000).map(str), digits, st.sampled_from(["", "-1", "1.5", "0x10", "１"]))
specs = st.one_of(
    st.builds(lambda v, d, s: f"random:{v}x{d}" + (f":{s}" if s is not None else ""), numbers, numbers,
              st.none() | numbers),
    st.builds(lambda p, x: p + x, st.sampled_from(["toy:", "hf:", "package:", "~", "~root/", "~nosuchuser/", "./", "/",
                                                   "random:", "default", "minilm", "smollm2", "gpt2", ""]),
              st.text(max_size=40)),
    st.text(max_size=80),
    st.sampled_from(["default", "toy:cat-sat", "toy:robot", "random:1x1", "random:10000000x65536:3",
                     "random:10000001x1", "random:1x65537", "hf:a/b/c", "a" * 5000, "/" * 300, "." * 300,
                     "~" + "x" * 300, "\udcff", "random:5x5\n", "toy:robot\x00", "/proc/self/mem", "/dev/null"]),
)


@fuzz_settings(150)
@given(spec=specs)
def test_specs(spec):
    open_and_read(spec)


# --------------------------------------------------------------------------
# Safetensors headers
# --------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=12,
)
sizes = st.one_of(st.integers(0, 64), st.sampled_from([0, 1, 10**12, 2**63 - 1, 2**63, 2**64, -1]))
dtypes = st.sampled_from(["F32", "F16", "BF16", "F64", "I64", "I8", "U8", "BOOL", "F8_E4M3", "Q4", "f32", ""])
names = st.sampled_from(["model.embed_tokens.weight", "wte.weight", "lm_head.weight", "x",
                        "embeddings.word_embeddings.weight"])


@st.composite
def tensor_entries(draw):
    shape = draw(st.one_of(st.lists(sizes, min_size=0, max_size=3), json_values))
    dtype = draw(st.one_of(dtypes, json_values))
    if draw(st.booleans()) and isinstance(shape, list) and all(isinstance(s, int) and 0 <= s < 2**40 for s in shape):
        n = int(np.prod(shape, dtype=object)) if shape else 1
        item = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8}.get(dtype, 1) if isinstance(dtype, str) else 1
        start = draw(st.integers(0, 16))
        offsets = [start, start + n * item]  # consistent, may still run past the data
    else:
        offsets = draw(st.one_of(st.lists(sizes, min_size=0, max_size=3), json_values))
    entry = {"dtype": dtype, "shape": shape, "data_offsets": offsets}
    for key in draw(st.lists(st.sampled_from(["dtype", "shape", "data_offsets"]), max_size=1)):
        del entry[key]
    return entry


ITEM = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}


@st.composite
def valid_then_mutated(draw):
    """A valid one-tensor header for a V x d embedding, with at most one
    field replaced: most examples are near misses of a real file."""
    v, d = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    dtype = draw(st.sampled_from(list(ITEM)))
    entry = {"dtype": dtype, "shape": [v, d], "data_offsets": [0, v * d * ITEM[dtype]]}
    header = {draw(names): entry}
    if draw(st.booleans()):
        key = draw(st.sampled_from(["dtype", "shape", "data_offsets"]))
        entry[key] = draw(st.one_of(st.lists(sizes, max_size=3), json_values, dtypes))
    return header


headers = st.one_of(
    valid_then_mutated(),
    valid_then_mutated(),
    st.dictionaries(names, tensor_entries(), min_size=1, max_size=3),
    st.dictionaries(names, tensor_entries(), max_size=2).map(lambda h: {**h, "__metadata__": {"format": "pt"}}),
    json_values,
)


@fuzz_settings(150)
@given(header=headers, data_len=st.integers(0, 4096), lie=st.none() | sizes, fill=st.sampled_from([0, 0x3F, 0xFF]))
def test_safetensors_headers(work, header, data_len, lie, fill):
    path = work / "fuzz.safetensors"
    raw = json.dumps(header).encode()
    entry = next(iter(header.values()), None) if isinstance(header, dict) and len(header) == 1 else None
    if isinstance(entry, dict) and isinstance(entry.get("data_offsets"), list) and len(entry["data_offsets"]) == 2 \
            and all(isinstance(x, int) and 0 <= x < 10**6 for x in entry["data_offsets"]) and data_len % 2:
        data_len = entry["data_offsets"][1]  # half the near misses carry exactly the data they announce
    length = len(raw) if lie is None or not 0 <= lie < 2**64 else lie
    path.write_bytes(struct.pack("<Q", length) + raw + bytes([fill]) * data_len)
    open_and_read(str(path))


@fuzz_settings(60)
@given(cut=st.integers(0, 2000), flips=st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 255)), max_size=4))
def test_safetensors_bytes(work, default_weights, cut, flips):
    raw = bytearray(default_weights[: max(0, len(default_weights) - cut)])
    for pos, value in flips:
        if pos < len(raw):
            raw[pos] = value
    path = work / "bytes.safetensors"
    path.write_bytes(bytes(raw))
    open_and_read(str(path))


@pytest.fixture(scope="module")
def default_weights() -> bytes:
    from explorer.core.sources import resources_dir

    return (resources_dir() / "default" / "model.safetensors").read_bytes()


# --------------------------------------------------------------------------
# GGUF headers and metadata: real files, then corrupted
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gguf_bases(work):
    out = {}
    for q in ("F32", "F16", "Q8_0"):
        built = mf.build_gguf(work / f"base-{q}.gguf", q, tied=q != "F16", vocab=40, dim=64, seed=3)
        out[q] = (built.path.read_bytes(), _field_offsets(built.path))
    return out


def _field_offsets(path: Path) -> list[tuple[int, int]]:
    """(offset, width) of every integer field of a GGUF header: counts,
    key and string lengths, value types, array lengths, tensor dims, types
    and offsets. Found by walking the file with gguf.GGUFReader."""
    import gguf

    r = gguf.GGUFReader(str(path))
    out = [(8, 8), (16, 8), (4, 4)]
    for f in list(r.fields.values()):
        for part in f.parts:
            if part.dtype.kind in "ui" and part.nbytes in (4, 8) and part.size == 1:
                out.append((int(part.ctypes.data - r.data.ctypes.data), part.nbytes))
    for t in r.tensors:
        for part in t.field.parts:
            if part.dtype.kind in "ui" and part.itemsize in (4, 8):
                base = int(part.ctypes.data - r.data.ctypes.data)
                for k in range(part.size):
                    out.append((base + k * part.itemsize, part.itemsize))
    return sorted(set(out))


extreme = st.one_of(st.integers(0, 70), st.sampled_from([0, 1, 2, 8, 31, 32, 33, 64, 4096, 2**31, 2**32 - 1,
                                                         2**40, 2**63, 2**64 - 1]))


@fuzz_settings(200)
@given(q=st.sampled_from(["F32", "F16", "Q8_0"]), field=st.integers(0, 10_000), value=extreme,
       flips=st.lists(st.tuples(st.integers(0, 700), st.integers(0, 255)), max_size=3),
       cut=st.none() | st.integers(0, 20_000))
def test_gguf_headers(work, gguf_bases, q, field, value, flips, cut):
    raw, fields = gguf_bases[q]
    data = bytearray(raw)
    pos, width = fields[field % len(fields)]
    data[pos : pos + width] = (value % (2 ** (8 * width))).to_bytes(width, "little")
    for p, v in flips:
        data[24 + p % (len(data) - 24)] = v
    if cut is not None:
        data = data[: max(0, len(data) - cut)]
    path = work / "fuzz.gguf"
    path.write_bytes(bytes(data))
    open_and_read(str(path))


gguf_values = st.one_of(
    st.tuples(st.integers(0, 2**32 - 1), st.just("UINT32")),
    st.tuples(st.integers(-(2**31), 2**31 - 1), st.just("INT32")),
    st.tuples(st.floats(width=32), st.just("FLOAT32")),
    st.tuples(st.integers(0, 2**64 - 1), st.just("UINT64")),
    st.tuples(st.text(max_size=10), st.just("STRING")),
    st.tuples(st.booleans(), st.just("BOOL")),
)


@fuzz_settings(120)
@given(
    alignment=st.one_of(st.just(None), st.just(None), st.just((32, "UINT32")), gguf_values),
    extra=st.lists(st.tuples(st.sampled_from(["general.name", "general.architecture", "tokenizer.ggml.model"]),
                             gguf_values), max_size=1),
    shape=st.tuples(st.sampled_from([3, 40, 0, 1]), st.sampled_from([64, 32, 0, 256])),
    tied=st.booleans(),
    qtype=st.sampled_from(["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q8_1", "Q8_K", "I8", "I16", "I32", "I64", "F64"]),
)
def test_gguf_metadata(work, alignment, extra, shape, tied, qtype):
    import gguf

    kv = []
    for key, (value, vtype) in ([("general.alignment", alignment)] if alignment else []) + list(extra):
        kv.append((key, value, getattr(gguf.GGUFValueType, vtype)))
    qt = gguf.GGMLQuantizationType[qtype]
    block, size = gguf.GGML_QUANT_SIZES[qt]
    v, d = shape[0], max(shape[1], block) if shape[1] else 0
    raw = np.full((v, d // block * size), 0x3C, np.uint8)
    path = work / "meta.gguf"
    try:
        mf.write_gguf(path, raw=(raw, None, qt), kv=kv, tied=tied)
    except (ValueError, TypeError, OverflowError, struct.error):
        return  # the writer itself refuses this combination
    open_and_read(str(path))


vocab_pieces = st.one_of(st.text(min_size=0, max_size=6), st.sampled_from(["<s>", "</s>", "Ġthe", "", " ", "\x00"]))


@fuzz_settings(6, long_share=0.05)
@given(tokens=st.lists(vocab_pieces, min_size=0, max_size=60),
       model=st.sampled_from(["gpt2", "llama", "bert", "t5", "unknown", ""]),
       merges=st.lists(st.text(max_size=6), max_size=5), bos=st.integers(0, 2**32 - 1),
       types=st.lists(st.integers(-3, 9), max_size=60), scores=st.booleans())
def test_gguf_vocabulary(work, tokens, model, merges, bos, types, scores):
    """The GGUF's own vocabulary goes through transformers' conversion (slow:
    a few examples in CI, more in a long run)."""
    import gguf

    path = work / f"vocab-{len(list(work.glob('vocab-*.gguf')))}.gguf"
    w = gguf.GGUFWriter(str(path), arch="llama")
    try:
        w.add_tokenizer_model(model)
        w.add_token_list(tokens)
        if types:
            w.add_token_types(types)
        if scores:
            w.add_token_scores([0.0] * len(tokens))
        w.add_token_merges(merges)
        w.add_bos_token_id(bos)
        w.add_tensor("token_embd.weight", np.ones((max(1, len(tokens)), 32), np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
    except (ValueError, TypeError, OverflowError, struct.error, UnicodeEncodeError):
        return  # the writer itself refuses it
    finally:
        w.close()
    got = open_and_read(str(path))
    if not isinstance(got, ExplorerError):
        check_inspect(got, "the cat " + "".join(tokens[:5]))


# --------------------------------------------------------------------------
# The JSON files of a model folder
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(work):
    """A copy of the bundled model (WordLevel tokenizer, classes.json) and a
    tiny sharded Llama with a BPE tokenizer, both written by real libraries."""
    from explorer.core.sources import resources_dir

    default = work / "default-src"
    shutil.copytree(resources_dir() / "default", default)
    sharded = mf.build_model(work / "sharded-src", "llama", "float32", tied=False, sharded=True,
                             tokenizer=mf.train_bpe(120), seed=5).folder
    return {"default": default, "sharded": sharded}


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in list(doc.items())[:60]:
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:60]):
            yield from _paths(v, prefix + (i,))


def _mutate(doc, choose, new_value, delete: bool):
    paths = list(_paths(doc))
    path = paths[choose % len(paths)]
    if not path:
        return new_value
    node = doc
    for step in path[:-1]:
        node = node[step]
    if delete and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = new_value
    return doc


special_values = st.sampled_from([
    None, -1, 0, 3_000_000_000, 2**64, 1e308, float("nan"), "", "[UNK]", "../x", "/etc/passwd",
    "model-00001-of-00002.safetensors", [], {}, "(a|aa)+$", {"Regex": "(a|aa)+$"}, {"Regex": "(((("},
    {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False},
    {"type": "Whitespace"}, {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "[UNK]"},
])
deep = st.integers(1, 200_000).map(mf.nested_json)


@fuzz_settings(150)
@given(which=st.sampled_from(["default/config.json", "default/classes.json", "default/tokenizer.json",
                              "sharded/model.safetensors.index.json", "sharded/tokenizer.json", "sharded/config.json"]),
       how=st.sampled_from(["mutate", "mutate", "mutate", "replace", "deep", "bytes"]),
       choose=st.integers(0, 10**6), value=st.one_of(special_values, json_values), delete=st.booleans(),
       garbage=st.binary(max_size=64))
def test_folder_json(work, folders, which, how, choose, value, delete, garbage):
    kind, name = which.split("/")
    folder = work / "fuzz-folder"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(folders[kind], folder)
    target = folder / name
    if how == "mutate":
        doc = json.loads(target.read_text())
        text = json.dumps(_mutate(doc, choose, value, delete))
    elif how == "replace":
        text = json.dumps(value)
    elif how == "deep":
        text = mf.nested_json(choose % 200_000 + 1)
    else:
        raw = target.read_bytes()
        cut = choose % (len(raw) + 1)
        target.write_bytes(raw[:cut] + garbage)
        text = None
    if text is not None:
        target.write_text(text)
    got = open_and_read(str(folder))
    if not isinstance(got, ExplorerError):
        check_inspect(got, "the cat sat on the river bank, unhappiness " + "a" * 40 + "b")


def test_outcome_rejects_foreign_errors():
    """The harness itself: anything but an ExplorerError fails."""
    with pytest.raises(AssertionError):
        check_error(ValueError("x"))
    with pytest.raises(ZeroDivisionError):
        outcome(lambda: 1 / 0)


def test_memory_is_really_bounded_here(bounded_memory):
    """The harness: past the cap an allocation fails, and the core sees the
    cap and refuses the copy first (a 6 GB table with 4 GB of headroom)."""
    from explorer.core.memory import MemoryLimitError, available_bytes
    from tests.support.fuzzing import HEADROOM, vm_data_bytes

    if bounded_memory is None:
        pytest.skip("no /proc/self/status here")
    with pytest.raises(MemoryError):
        np.ones(2 * HEADROOM // 8)
    # the core sees the cap: what is left under it (the data segment may have
    # shrunk since the module started, so the room can exceed HEADROOM a little)
    assert available_bytes() <= bounded_memory - vm_data_bytes() + (64 << 20)
    with pytest.raises(MemoryLimitError, match="needs 6.00 GB"):
        open_table("random:1000000x1500").matrix()
