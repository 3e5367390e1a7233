"""Model sources against real files: every spec kind, checked against the
field's libraries reading the same bytes (safetensors, gguf, torch)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.core import sources
from explorer.core.sources import SourceError, open_table
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, NameTokenizer
from tests.support import model_factory as mf
from tests.support.model_factory import GGUF_KEYS, ZOO_KEYS, zoo_id
from tests.support.paths import REPO

FACTS_TOYS = {
    "cat-sat": (
        ["the", "cat", "sat", "on", "mat", "<pad>"],
        [
            [0.10, -0.20, 0.05, 0.30],
            [0.44, 0.12, -0.08, 0.19],
            [-0.15, 0.33, 0.27, -0.05],
            [0.08, -0.02, 0.41, 0.22],
            [0.19, 0.19, -0.19, 0.05],
            [0.00, 0.00, 0.00, 0.00],
        ],
    ),
    "gradient": (
        ["0", "1", "2", "3", "4", "5"],
        [
            [0.10, -0.20, 0.30, 0.05],
            [0.40, 0.10, -0.10, 0.20],
            [-0.30, 0.25, 0.15, -0.05],
            [0.05, 0.60, -0.40, 0.10],
            [0.20, -0.10, 0.00, 0.35],
            [-0.15, 0.05, 0.45, -0.20],
        ],
    ),
    "robot": (
        ["robot", "arm", "box", "tool"],
        [[1.0, 0.0, 1.0], [0.9, 0.1, 0.8], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.5]],
    ),
    "five-rows": (
        ["0", "1", "2", "3", "4"],
        [
            [0.12, -0.45, 0.88],
            [0.34, 0.91, -0.15],
            [-0.78, 0.22, 0.05],
            [0.61, -0.11, 0.49],
            [-0.02, 0.83, -0.67],
        ],
    ),
}


# --------------------------------------------------------------------------
# default (bundled)
# --------------------------------------------------------------------------


def test_default_is_the_bundled_checkpoint():
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    folder = sources.resources_dir() / "default"
    t = open_table("default")
    tensors = load_file(str(folder / "model.safetensors"))
    ref = tensors[t.tensor_name]
    assert t.kind == "bundled"
    assert (t.vocab_size, t.dim) == tuple(ref.shape)
    assert t.dtype == "float32" and t.row_bytes == ref.shape[1] * 4
    np.testing.assert_array_equal(t.matrix(), ref.float().numpy())
    assert t.model_params == sum(v.numel() for v in tensors.values())
    # its own output projection (lm_head) is stored beside E -> untied
    assert tuple(tensors["lm_head.weight"].shape) == tuple(ref.shape)
    assert not torch.equal(tensors["lm_head.weight"], ref)
    assert t.tied is False
    # the tokenizer is the folder's own tokenizer.json
    own = Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = t.example_text
    assert text
    assert [x.id for x in t.tokenizer.encode(text)] == own.encode(text).ids
    # classes.json maps words to class names through the same tokenizer
    classes = json.loads((folder / "classes.json").read_text())
    assert t.classes
    for tid, cls in t.classes.items():
        assert classes[own.id_to_token(tid)] == cls


# --------------------------------------------------------------------------
# toys
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FACTS_TOYS))
def test_toy_tables_hold_the_facts_rows(name):
    names, rows = FACTS_TOYS[name]
    t = open_table(f"toy:{name}")
    expect = np.asarray(rows, dtype=np.float32)
    assert t.kind == "toy" and t.spec == f"toy:{name}"
    assert (t.vocab_size, t.dim) == expect.shape
    assert t.params == expect.size
    assert t.row_bytes == expect.shape[1] * 4 and t.dtype == "float32"
    np.testing.assert_array_equal(t.matrix(), expect)
    assert isinstance(t.tokenizer, NameTokenizer)
    assert [t.piece(i) for i in range(t.vocab_size)] == names
    # every example text opens with ids inside the table
    assert all(0 <= tok.id < t.vocab_size for tok in t.tokenizer.encode(t.example_text))


def test_toy_lookups_from_facts():
    five = open_table("toy:five-rows")
    np.testing.assert_array_equal(five.row(2), np.float32([-0.78, 0.22, 0.05]))

    grad = open_table("toy:gradient")
    ids = [tok.id for tok in grad.tokenizer.encode("3 1 3")]
    assert ids == [3, 1, 3]
    m = grad.rows(ids)
    assert m.shape == (3, 4)
    np.testing.assert_array_equal(m[0], m[2])

    cat = open_table("toy:cat-sat")
    toks = cat.tokenizer.encode("cat sat")
    assert [x.id for x in toks] == [1, 2]
    np.testing.assert_array_equal(cat.rows([1, 2]), np.float32([[0.44, 0.12, -0.08, 0.19], [-0.15, 0.33, 0.27, -0.05]]))

    robot = open_table("toy:robot")
    r = {robot.piece(i): robot.row(i).astype(np.float64) for i in range(4)}
    assert robot.params == 12
    assert np.dot(r["robot"], r["arm"]) == pytest.approx(1.7)
    assert np.dot(r["robot"], r["box"]) == pytest.approx(0.0)
    assert np.dot(r["robot"], r["tool"]) == pytest.approx(-0.5)

    def cos(a, b):
        return np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b)

    assert cos(r["robot"], r["arm"]) == pytest.approx(0.995, abs=5e-4)
    assert cos(r["robot"], r["tool"]) == pytest.approx(-0.316, abs=5e-4)


def test_toy_spec_unknown_name():
    with pytest.raises(SourceError, match="unknown toy table 'nope'.*toy:cat-sat"):
        open_table("toy:nope")


# --------------------------------------------------------------------------
# random
# --------------------------------------------------------------------------


def test_random_table_shape_and_layout():
    t = open_table("random:50257x768")
    assert (t.vocab_size, t.dim) == (50257, 768)
    assert t.dtype == "float32" and t.row_bytes == 768 * 4
    assert t.params == 38_597_376
    assert t.stored_bytes == 154_389_504
    assert t.byte_offset(42) == 129_024 == 0x1F800
    assert isinstance(t.tokenizer, IdTokenizer)
    assert [x.id for x in t.tokenizer.encode("42 7 42")] == [42, 7, 42]
    # last row is reachable, one past it is not
    assert t.row(50256).shape == (768,)
    with pytest.raises(IndexError, match="out of range"):
        t.row(50257)


def test_random_is_seeded_and_reproducible():
    ids = [0, 1, 4095, 4096, 9999]
    a = open_table("random:10000x16:7").rows(ids)
    b = open_table("random:10000x16:7").rows(ids)
    c = open_table("random:10000x16:8").rows(ids)
    d = open_table("random:10000x16").rows(ids)
    e = open_table("random:10000x16:0").rows(ids)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_array_equal(d, e)  # seed 0 is the default seed
    assert open_table("random:10000x16:0").spec == "random:10000x16"
    assert open_table("random:10000x16:7").spec == "random:10000x16:7"


def test_random_std_is_gpt2_init():
    m = open_table("random:6000x64:3").matrix()
    assert m.dtype == np.float32
    assert abs(float(m.mean())) < 1e-3
    assert float(m.std()) == pytest.approx(0.02, rel=0.02)


def test_random_rows_do_not_depend_on_reading_order():
    spec = "random:9000x8:5"
    whole = np.concatenate([blk for _, blk in open_table(spec).iter_blocks(block_rows=1000)])
    assert whole.shape == (9000, 8)
    order = [8999, 3, 4100, 3, 4095, 0, 8191, 8192]
    fresh = open_table(spec)
    np.testing.assert_array_equal(fresh.rows(order), whole[order])
    # one row at a time, in reverse, on yet another table
    other = open_table(spec)
    for i in reversed(order):
        np.testing.assert_array_equal(other.row(i), whole[i])
    np.testing.assert_array_equal(open_table(spec).matrix(), whole)


@pytest.mark.parametrize("spec", ["random:0x5", "random:axb", "random:5x0", "random:10x", "random:20000000x4"])
def test_bad_random_spec(spec):
    with pytest.raises(SourceError, match="random"):
        open_table(spec)


# --------------------------------------------------------------------------
# minilm and smollm2: the two real packaged models
# --------------------------------------------------------------------------


def test_minilm_rows_equal_safetensors(minilm_table, minilm_tensors):
    t = minilm_table
    ref = minilm_tensors["embeddings.word_embeddings.weight"]
    assert t.kind == "package" and t.spec == "minilm"
    assert (t.vocab_size, t.dim) == (30_522, 384) == tuple(ref.shape)
    assert t.dtype == "float32" and ref.dtype == torch.float32
    assert t.row_bytes == 384 * 4
    assert t.tensor_name == "embeddings.word_embeddings.weight"
    assert t.model_params == sum(v.numel() for v in minilm_tensors.values())
    assert t.tied is None  # a BertModel: no output projection
    ids = [30_521, 0, 101, 102, 2924, 2924, 15_000, 1, 2]  # unsorted, repeated, both ends
    np.testing.assert_array_equal(t.rows(ids), ref[ids].numpy())
    blocks = dict(t.iter_blocks(block_rows=10_000, stop=20_000))
    np.testing.assert_array_equal(blocks[10_000], ref[10_000:20_000].numpy())
    assert isinstance(t.tokenizer, HFTokenizer)
    assert t.tokenizer.vocab_size == 30_522


def test_minilm_tokenizer_is_bert_wordpiece(minilm_table, minilm_dir):
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(minilm_dir))
    text = "The river bank had unhappiness."
    toks = minilm_table.tokenizer.encode(text)
    assert [x.id for x in toks] == hf(text)["input_ids"]
    assert [x.piece for x in toks] == hf.convert_ids_to_tokens(hf(text)["input_ids"])
    assert minilm_table.tokenizer.kind == "WordPiece"


def test_smollm2_rows_equal_gguf_dequantize(smollm2_table, smollm2_reference):
    import gguf

    t, ref = smollm2_table, smollm2_reference
    emb = ref["embedding"]
    assert t.kind == "package" and t.spec == "smollm2"
    assert (t.vocab_size, t.dim) == (49_152, 576) == emb.shape
    assert t.dtype == ref["type"].name == "Q8_0"
    block, size = gguf.GGML_QUANT_SIZES[ref["type"]]
    assert t.row_bytes == 576 // block * size == 612
    assert t.byte_offset(42) == 42 * 612
    assert t.tied is True and "output.weight" not in ref["names"]
    assert t.model_params == ref["n_elements"]
    ids = [49_151, 0, 42, 42, 1000, 999, 25_000]
    np.testing.assert_array_equal(t.rows(ids), emb[ids])
    np.testing.assert_array_equal(t.matrix(), emb)
    assert isinstance(t.tokenizer, HFTokenizer)
    assert t.tokenizer.vocab_size == 49_152


def test_package_prefix_spec(minilm_dir):
    t = open_table("package:minilm")
    assert (t.vocab_size, t.dim) == (30_522, 384)


# --------------------------------------------------------------------------
# Models built here with transformers
# --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ZOO_KEYS, ids=[zoo_id(k) for k in ZOO_KEYS])
def test_transformers_checkpoints(zoo, key):
    from safetensors import safe_open
    from transformers import AutoTokenizer

    built = zoo[key]
    arch, dtype, tied, sharded = key
    t = open_table(str(built.folder))
    assert t.kind == "folder"
    V, d = built.embedding.shape
    assert (t.vocab_size, t.dim) == (V, d)
    # rows equal the model's get_input_embeddings().weight, converted to float32
    np.testing.assert_array_equal(t.matrix(), built.embedding)
    np.testing.assert_array_equal(t.rows([V - 1, 0, 3, 3]), built.embedding[[V - 1, 0, 3, 3]])
    # dtype as stored, stride from it
    assert t.dtype == dtype
    assert t.row_bytes == d * built.itemsize
    assert t.byte_offset(V - 1) == (V - 1) * d * built.itemsize
    native = t.torch_table()
    assert native.dtype == getattr(torch, dtype)
    assert torch.equal(native, built.native)
    # whole-model parameter count with tied weights counted once
    assert t.model_params == built.n_params
    assert t.tied is tied
    # layout on disk
    index = built.folder / "model.safetensors.index.json"
    assert index.is_file() == sharded
    if sharded:
        shard = json.loads(index.read_text())["weight_map"][t.tensor_name]
        with safe_open(str(built.folder / shard), framework="pt") as f:
            assert t.tensor_name in f.keys()
    # tokens come from the model's own tokenizer
    hf = AutoTokenizer.from_pretrained(str(built.folder))
    toks = t.tokenizer.encode(mf.SAMPLE_TEXT)
    assert [x.id for x in toks] == hf(mf.SAMPLE_TEXT)["input_ids"]
    assert [x.piece for x in toks] == hf.convert_ids_to_tokens(hf(mf.SAMPLE_TEXT)["input_ids"])
    assert t.tokenizer.vocab_size == len(hf)
    assert t.trained_rows == min(V, len(hf))
    if V > len(hf):
        assert any("padding rows" in n for n in t.notes)


def test_tokenizers_differ_between_architectures(zoo):
    """The tokenizer follows the folder: same text, different ids."""
    a = open_table(str(zoo[("gpt2", "float32", True, False)].folder))
    b = open_table(str(zoo[("bert", "float32", True, False)].folder))
    ia = [x.id for x in a.tokenizer.encode(mf.SAMPLE_TEXT)]
    ib = [x.id for x in b.tokenizer.encode(mf.SAMPLE_TEXT)]
    assert ia != ib


def test_hub_style_gpt2_without_prefix(hub_gpt2):
    from safetensors import safe_open

    with safe_open(str(hub_gpt2.folder / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
    assert "wte.weight" in keys and not any(k.startswith("transformer.") for k in keys)
    t = open_table(str(hub_gpt2.folder))
    assert t.tensor_name == "wte.weight"
    np.testing.assert_array_equal(t.matrix(), hub_gpt2.embedding)
    assert t.model_params == hub_gpt2.n_params
    assert t.tied is True  # LM-head architecture without a stored head


def test_single_safetensors_file_by_path(gpt2_single, tmp_path):
    # in its folder: the tokenizer beside it is used
    f = gpt2_single.folder / "model.safetensors"
    t = open_table(str(f))
    assert t.kind == "safetensors" and t.path == f
    np.testing.assert_array_equal(t.matrix(), gpt2_single.embedding)
    assert isinstance(t.tokenizer, HFTokenizer)
    assert t.disk_bytes == f.stat().st_size
    # alone: no tokenizer, ids are typed
    alone = tmp_path / "weights.safetensors"
    shutil.copy(f, alone)
    t2 = open_table(str(alone))
    np.testing.assert_array_equal(t2.matrix(), gpt2_single.embedding)
    assert isinstance(t2.tokenizer, IdTokenizer)
    assert any("No tokenizer" in n for n in t2.notes)
    assert t2.tied is None  # no config, no head: cannot be told


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_large_table_is_read_lazily_and_exactly(tmp_path, dtype):
    """Above the preload threshold rows come from the memory map, slice by slice."""
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(0)
    w = torch.randn(2100, 4096, generator=g).to(getattr(torch, dtype))
    save_file({"model.embed_tokens.weight": w, "lm_head.weight": w.clone()}, str(tmp_path / "model.safetensors"))
    t = open_table(str(tmp_path))
    assert not t.holds_matrix  # not preloaded
    assert (t.vocab_size, t.dim, t.dtype, t.row_bytes) == (2100, 4096, dtype, 8192)
    assert torch.equal(t.torch_table(), w)
    assert t.tied is False
    ids = [2099, 5, 6, 7, 5, 1000, 0]
    np.testing.assert_array_equal(t.rows(ids), w[ids].float().numpy())
    start, blk = next(iter(t.iter_blocks(block_rows=300)))
    np.testing.assert_array_equal(blk, w[:300].float().numpy())


def test_odd_but_valid_config_values(gpt2_single, tmp_path):
    """Unusual config values must not break opening (no traceback)."""
    folder = shutil.copytree(gpt2_single.folder, tmp_path / "odd")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["architectures"] = "GPT2LMHeadModel"  # a string, not a list
    (folder / "config.json").write_text(json.dumps(cfg))
    t = open_table(str(folder))
    np.testing.assert_array_equal(t.matrix(), gpt2_single.embedding)
    assert t.tied is True
    # a lone .safetensors beside a config that is not an object still opens
    (folder / "config.json").write_text("[]")
    t2 = open_table(str(folder / "model.safetensors"))
    np.testing.assert_array_equal(t2.matrix(), gpt2_single.embedding)


def test_relative_folder_path(gpt2_single, monkeypatch):
    monkeypatch.chdir(gpt2_single.folder.parent)
    t = open_table("./" + gpt2_single.folder.name)
    np.testing.assert_array_equal(t.matrix(), gpt2_single.embedding)


# --------------------------------------------------------------------------
# Hugging Face cache
# --------------------------------------------------------------------------


def _fake_hf_cache(root: Path, repo: str, current: Path, stale: Path | None = None) -> Path:
    """The hub cache layout: blobs, snapshots/<hash>/ with symlinks, refs/main."""
    base = root / ("models--" + repo.replace("/", "--"))
    (base / "blobs").mkdir(parents=True)
    (base / "refs").mkdir()
    for n, (src, commit) in enumerate(((stale, "0" * 40), (current, "a1b2c3" + "d" * 34))):
        if src is None:
            continue
        snap = base / "snapshots" / commit
        snap.mkdir(parents=True)
        for f in src.iterdir():
            blob = base / "blobs" / f"{n}-{f.name}"
            shutil.copy(f, blob)
            os.symlink(os.path.relpath(blob, snap), snap / f.name)
    (base / "refs" / "main").write_text("a1b2c3" + "d" * 34)
    return base


def test_hf_cache_repo(zoo, tmp_path, monkeypatch):
    current = zoo[("llama", "bfloat16", True, True)]
    stale = zoo[("gpt2", "float32", True, False)]
    cache = tmp_path / "hub"
    _fake_hf_cache(cache, "org/name", current.folder, stale.folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    for spec in ("org/name", "hf:org/name"):
        t = open_table(spec)
        assert t.kind == "cache"
        assert t.name == "org/name"
        # refs/main picks the current snapshot, not the other one
        np.testing.assert_array_equal(t.matrix(), current.embedding)
        assert t.dtype == "bfloat16" and t.tied is True
        assert isinstance(t.tokenizer, HFTokenizer)
        # the spec it reports opens the same table again
        np.testing.assert_array_equal(open_table(t.spec).matrix(), current.embedding)
    assert "org/name" in sources.cached_repos()
    with pytest.raises(SourceError, match="not a file, a folder or a model in the local Hugging Face cache"):
        open_table("org/other")
    with pytest.raises(SourceError, match="Hugging Face cache"):
        open_table("hf:nobody/nothing")


# --------------------------------------------------------------------------
# GGUF written here
# --------------------------------------------------------------------------


@pytest.mark.parametrize("key", GGUF_KEYS, ids=[f"{q}-{'tied' if t else 'untied'}" for q, t in GGUF_KEYS])
def test_gguf_tables(ggufs, key):
    import gguf

    built = ggufs[key]
    qtype, tied = key
    t = open_table(str(built.path))
    V, d = built.written.shape
    assert t.kind == "gguf"
    assert (t.vocab_size, t.dim) == (V, d)
    assert t.dtype == qtype
    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType[qtype]]
    assert t.row_bytes == d // block * size == built.row_bytes
    assert t.byte_offset(V - 1) == (V - 1) * built.row_bytes
    np.testing.assert_array_equal(t.matrix(), built.written)
    np.testing.assert_array_equal(t.rows([V - 1, 2, 2, 0]), built.written[[V - 1, 2, 2, 0]])
    assert t.tied is tied
    assert t.model_params == built.n_elements
    # no vocabulary in the file: integer ids
    assert isinstance(t.tokenizer, IdTokenizer)
    assert [x.id for x in t.tokenizer.encode("3 0 3")] == [3, 0, 3]


def test_gguf_agrees_with_gguf_reader(ggufs):
    import gguf

    built = ggufs[("Q8_0", False)]
    reader = gguf.GGUFReader(str(built.path))
    tensors = {x.name: x for x in reader.tensors}
    ref = gguf.quants.dequantize(tensors["token_embd.weight"].data, tensors["token_embd.weight"].tensor_type)
    np.testing.assert_array_equal(open_table(str(built.path)).matrix(), ref)


def test_gguf_with_vocabulary(gguf_with_vocab):
    from transformers import AutoTokenizer

    t = open_table(str(gguf_with_vocab.path))
    np.testing.assert_array_equal(t.matrix(), gguf_with_vocab.written)
    assert isinstance(t.tokenizer, HFTokenizer)
    words = mf._gguf_vocab(gguf_with_vocab.written.shape[0])
    # transformers' GGUF conversion may append its own end-of-text token
    assert t.tokenizer.vocab_size >= len(words)
    assert [t.tokenizer.piece(i) for i in range(len(words))] == words
    assert t.tokenizer.id_of("Ġcat") == words.index("Ġcat")
    hf = AutoTokenizer.from_pretrained(str(gguf_with_vocab.path.parent), gguf_file=gguf_with_vocab.path.name)
    text = "cat sat"
    assert [x.id for x in t.tokenizer.encode(text)] == hf(text, add_special_tokens=True)["input_ids"]
    # a second opening reuses the cached tokenizer and gives the same ids
    again = open_table(str(gguf_with_vocab.path))
    assert [x.id for x in again.tokenizer.encode(text)] == [x.id for x in t.tokenizer.encode(text)]
    cache = Path(os.environ["EXPLORER_CACHE_DIR"]) / "gguf-tokenizers"
    assert any(cache.glob("*/tokenizer.json"))


def test_gguf_in_a_folder(ggufs, tmp_path):
    built = ggufs[("F16", True)]
    shutil.copy(built.path, tmp_path / "model.gguf")
    t = open_table(str(tmp_path))
    np.testing.assert_array_equal(t.matrix(), built.written)


# --------------------------------------------------------------------------
# Bad input: each a SourceError with a message that says what is wrong
# --------------------------------------------------------------------------


@pytest.fixture
def bad_inputs(tmp_path, gpt2_single, llama_sharded, ggufs):
    def make(name):
        fn, _ = mf.BAD_FILES[name]
        return fn(tmp_path, gpt2=gpt2_single, sharded=llama_sharded, gguf_file=ggufs[("Q8_0", True)].path)

    return make


@pytest.mark.parametrize("name", list(mf.BAD_FILES))
def test_bad_files_raise_source_error(bad_inputs, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = bad_inputs(name)
    with pytest.raises(SourceError, match=mf.BAD_FILES[name][1]) as info:
        open_table(str(path))
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 400
    assert not (tmp_path / "PWNED").exists()  # nothing was unpickled


@pytest.mark.parametrize(
    "spec, pattern",
    [
        ("", "no model given"),
        ("   ", "no model given"),
        ("what is this?", "unknown model spec"),
        ("toy:", "unknown toy table"),
        ("random:axb", "bad random spec"),
        ("random:0x5", "out of range"),
        ("not-a-repo-here", "Hugging Face cache"),
    ],
)
def test_bad_specs(spec, pattern):
    with pytest.raises(SourceError, match=pattern):
        open_table(spec)


def test_tokenizer_larger_than_table_is_flagged(mismatch_folder):
    folder, tok = mismatch_folder
    t = open_table(str(folder))
    assert t.vocab_size == tok.get_vocab_size() - 40
    assert t.tokenizer.vocab_size == tok.get_vocab_size()
    assert t.trained_rows == t.vocab_size
    assert any("ids past the table" in n for n in t.notes)
    high = tok.id_to_token(tok.get_vocab_size() - 1)
    (token,) = t.tokenizer.encode(high)
    assert token.id >= t.vocab_size
    with pytest.raises(IndexError, match="out of range"):
        t.rows([token.id])


def test_id_checks():
    t = open_table("toy:robot")
    with pytest.raises(IndexError):
        t.row(4)
    with pytest.raises(IndexError):
        t.rows([0, -1])
    with pytest.raises(TypeError):
        t.byte_offset(1.5)


# --------------------------------------------------------------------------
# Listing
# --------------------------------------------------------------------------


def test_list_sources(minilm_dir, smollm2_path, zoo, tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    _fake_hf_cache(cache, "org/tiny", zoo[("bert", "float16", False, False)].folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    recent_folder = str(zoo[("gpt2", "float16", False, True)].folder)
    infos = {i.spec: i for i in sources.list_sources([recent_folder, str(tmp_path / "gone")])}
    assert infos["default"].origin == "bundled" and infos["default"].error is None
    for n in sources.TOY_NAMES:
        assert infos[f"toy:{n}"].vocab_size == open_table(f"toy:{n}").vocab_size
    assert (infos["minilm"].vocab_size, infos["minilm"].dim, infos["minilm"].dtype) == (30_522, 384, "float32")
    sm = infos["smollm2"]
    assert (sm.vocab_size, sm.dim, sm.dtype, sm.tied) == (49_152, 576, "Q8_0", True)
    assert infos["org/tiny"].origin == "cache" and infos["org/tiny"].dtype == "float16"
    assert infos["org/tiny"].tied is False
    assert infos[recent_folder].origin == "recent" and infos[recent_folder].dtype == "float16"
    gone = infos[str(tmp_path / "gone")]
    assert gone.error and "no such file" in gone.error


# --------------------------------------------------------------------------
# Issue 11: bad input gives one clear line, never a crash or the wrong bytes
# --------------------------------------------------------------------------


def test_alignment_that_does_not_match_the_file_never_reads_padding(tmp_path):
    """An all-1.0 table announced at alignment 8 but laid out at 32 opened
    before and showed row 0 as zeros (the padding). The same bytes at the
    alignment they were written with open and read 1.0 everywhere."""
    import gguf

    ones = np.ones((48, 64), np.float32)
    good = mf.write_gguf(tmp_path / "good.gguf", ones,
                         kv=[("general.alignment", 32, gguf.GGUFValueType.UINT32)])
    np.testing.assert_array_equal(open_table(str(good)).matrix(), ones)
    for value in (8, 16, 64, 4096):
        bad = mf.write_gguf(tmp_path / f"a{value}.gguf", ones,
                            kv=[("general.alignment", value, gguf.GGUFValueType.UINT32)])
        with pytest.raises(SourceError, match="alignment|offset"):
            open_table(str(bad))


@pytest.mark.parametrize("spec, pattern", [
    ("~nosuchuser-explorer/x", "not a user of this machine"),
    ("random:" + "9" * 5000 + "x4", "out of range"),
    ("random:4x" + "9" * 5000, "out of range"),
    ("random:4x4:" + "9" * 5000, "seed .* too long"),
    ("toy:robot\nrm -rf", "unknown toy table"),
    ("what\nis\u2028this", "unknown model spec"),
    ("a\x00b", "NUL"),
    ("hf:../../etc", "not a repo id"),
])
def test_bad_specs_are_one_line(spec, pattern):
    with pytest.raises(SourceError, match=pattern) as info:
        open_table(spec)
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and "\u2028" not in msg and len(msg) < 400


def test_classes_json_that_is_not_an_object_turns_colouring_off(gpt2_single, tmp_path):
    for name, text in (("list", "[1, 2, 3]"), ("deep", '{"a": ' + mf.nested_json(100_000) + "}"),
                       ("number", "42"), ("nested-values", '{"the": {"x": 1}}')):
        folder = shutil.copytree(gpt2_single.folder, tmp_path / name)
        (folder / "classes.json").write_text(text)
        t = open_table(str(folder))
        assert t.classes is None
        assert any("Colouring by class is off" in n for n in t.notes), t.notes
        np.testing.assert_array_equal(t.matrix(), gpt2_single.embedding)


def test_tokenizer_with_an_id_of_three_billion_costs_no_memory(tmp_path):
    """The piece table was a list up to the largest id: 24 GB for 3e9."""
    import tracemalloc

    tj = mf.wordlevel_json({"[UNK]": 0, "a": 1, "far": 3_000_000_000})
    t = open_table(str(mf.folder_with_tokenizer(tmp_path / "m", tj)))
    tracemalloc.start()
    try:
        assert t.piece(1) == "a" and t.piece(3_000_000_000) == "far" and t.piece(7) == "<7>"
        assert t.completion_pieces()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024
    (tok,) = t.tokenizer.encode("far")
    assert tok.id == 3_000_000_000  # flagged out of range by its users, not a crash here


@pytest.mark.parametrize("tokenizer, text, pattern", [
    (mf.wordlevel_json({"a": 0, "b": 1}, unk="[UNK]"), "a zzz", "Missing \\[UNK\\] token"),
    (mf.wordlevel_json({"[UNK]": 0, "a": 1}, pre_tokenizer=mf.BACKTRACKING_SPLIT), "a" * 40 + "b", "retry-limit"),
])
def test_tokenizer_failures_are_tokenize_errors(tmp_path, tokenizer, text, pattern):
    from explorer.core.tokens.tokenize import TokenizeError

    t = open_table(str(mf.folder_with_tokenizer(tmp_path / "m", tokenizer)))
    with pytest.raises(TokenizeError, match=pattern) as info:
        t.tokenizer.encode(text)
    assert len(str(info.value).splitlines()) == 1


def test_random_rows_are_drawn_in_small_blocks():
    """One row of random:128256x4096 drew a 4,096-row block (16 M values,
    64 MB); now at most 256 K values are drawn for it."""
    import tracemalloc

    t = open_table("random:128256x4096")
    tracemalloc.start()
    try:
        row = t.row(100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert row.shape == (4096,)
    assert peak < 2 * 1024 * 1024  # one block of 64 rows = 1 MB
    # the same values whichever way they are read
    whole = np.concatenate([blk for _, blk in t.iter_blocks(block_rows=300, stop=700)])
    np.testing.assert_array_equal(t.rows([699, 0, 64, 63]), whole[[699, 0, 64, 63]])
    assert float(np.std(whole)) == pytest.approx(0.02, rel=0.02)


def test_wide_tables_stream_in_bounded_blocks_and_refuse_impossible_copies():
    from explorer.core.memory import MemoryLimitError

    t = open_table("random:10000000x65536")
    start, blk = next(iter(t.iter_blocks(block_rows=16_384)))
    assert start == 0 and blk.nbytes <= 256 * 1024 * 1024 and blk.shape[1] == 65536
    with pytest.raises(MemoryLimitError, match="needs 2.62 TB"):
        t.matrix()  # refused before allocating anything
    assert t.unit_matrix() is None  # too big to hold: searches stream


def test_table_is_immutable_and_its_caches_are_shared_between_threads():
    import dataclasses
    import threading

    t = open_table("random:3000x16:1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"
    with pytest.raises(TypeError):
        open_table("default").classes[0] = "x"
    renamed = dataclasses.replace(t, name="renamed", notes=t.notes + ("one more",))
    assert renamed.name == "renamed" and t.name != "renamed" and renamed.notes[-1] == "one more"
    np.testing.assert_array_equal(renamed.matrix(), t.matrix())
    # many threads asking at once get one and the same cached array
    fresh = open_table("random:20000x64:2")
    barrier = threading.Barrier(4)
    got = []

    def ask():
        barrier.wait()
        got.append(fresh.unit_matrix())

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(got) == 4 and all(u is got[0] for u in got)
    assert fresh.all_finite() is True


def test_all_finite_sees_an_inf_in_the_file(tmp_path):
    from safetensors.torch import save_file

    w = torch.zeros(10, 4)
    w[3, 2] = float("inf")
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    t = open_table(str(tmp_path))
    assert t.all_finite() is False
    assert open_table("toy:robot").all_finite() is True


def test_stored_buffer_is_the_real_address(ggufs):
    t = open_table(str(ggufs[("Q8_0", True)].path))
    buf = t.stored_buffer()
    assert "Q8_0 blocks" in buf.description
    assert isinstance(buf.keep_alive, np.ndarray) and buf.keep_alive.shape[0] == t.vocab_size
    assert buf.address == buf.keep_alive.__array_interface__["data"][0]
    f = open_table("toy:robot").stored_buffer()
    assert f.address == f.keep_alive.data_ptr() and "float32" in f.description


def _bytes_read() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux's per-process I/O counters")
def test_peek_reads_headers_not_rows(tmp_path):
    """The picker's listing must not read tables or build tokenizers: a
    32 MB table is listed with a few kB read, and a folder whose
    tokenizer.json is broken is still listed (opening it says why not)."""
    from safetensors.torch import save_file

    w = torch.zeros(2048, 4096)  # 32 MB of float32, small enough that opening reads it all
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    (tmp_path / "tokenizer.json").write_text("{not a tokenizer")
    before = _bytes_read()
    info = sources.peek(str(tmp_path), "recent")
    read = _bytes_read() - before
    assert info.error is None and (info.vocab_size, info.dim, info.dtype) == (2048, 4096, "float32")
    assert read < 1024 * 1024
    with pytest.raises(SourceError, match="tokenizer file cannot be read"):
        open_table(str(tmp_path))
    (tmp_path / "tokenizer.json").unlink()
    before = _bytes_read()
    open_table(str(tmp_path)).matrix()
    assert _bytes_read() - before >= w.numel() * 4  # opening does read the rows


def test_gguf_tokenizer_cache_is_written_under_a_unique_name(gguf_with_vocab, tmp_path, monkeypatch):
    """The old fixed name tokenizer.tmp collided between two processes; a
    folder squatting it now changes nothing, and nothing is left behind."""
    from explorer.core.sources import gguf_source

    cache = tmp_path / "cache"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    t = open_table(str(gguf_with_vocab.path))
    (entry,) = list((cache / "gguf-tokenizers").glob("*/tokenizer.json"))
    (entry.parent / "tokenizer.tmp").mkdir()  # where every process used to write
    assert gguf_source.save_atomically(t.tokenizer.backend, entry)
    leftovers = [p.name for p in entry.parent.iterdir() if p.name not in ("tokenizer.json", "tokenizer.tmp")]
    assert leftovers == []
    again = open_table(str(gguf_with_vocab.path))
    assert [x.id for x in again.tokenizer.encode("cat sat")] == [x.id for x in t.tokenizer.encode("cat sat")]


def test_two_processes_build_the_gguf_tokenizer_at_once(gguf_with_vocab, tmp_path):
    import subprocess
    import sys

    env = dict(os.environ, EXPLORER_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(REPO))
    code = ("import sys; from explorer.core.sources import open_table; "
            "t = open_table(sys.argv[1]); print([x.id for x in t.tokenizer.encode('cat sat')])")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(gguf_with_vocab.path)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-500:] for o in outs]
    assert outs[0][0] == outs[1][0] and outs[0][0].startswith("[")
    folder = tmp_path / "cache" / "gguf-tokenizers"
    files = sorted(p.name for p in folder.rglob("*") if p.is_file())
    assert files == ["tokenizer.json"]
    json.loads(next(folder.rglob("tokenizer.json")).read_text())  # complete, not half written
