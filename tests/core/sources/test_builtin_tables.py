"""The tables that need no file of the user's: the bundled default, the toys
of FACTS.md, seeded random tables and the two packaged real models (MiniLM,
SmolLM2), checked against the field's libraries reading the same bytes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.core import sources
from explorer.core.sources import SourceError, open_table
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, NameTokenizer

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


def test_a_narrow_table_s_whole_table_passes_come_a_million_rows_at_a_time():
    """The 128 MB of a block held 10,000,000 rows of a one-column table: a health check's pass made its
    norms and sketches in one step of 3.1 s. Blocks now hold at most 2 ** 20 rows, and cover the table."""
    from explorer.core.sources import table as table_module

    t = open_table("random:2500000x2")
    spans = [(start, int(block.shape[0])) for start, block in t.iter_native_blocks()]
    assert [n for _, n in spans] == [table_module._NATIVE_BLOCK_ROWS] * 2 + [2_500_000 - 2 * (1 << 20)]
    assert [start for start, _ in spans] == [0, 1 << 20, 2 << 20]
    last = next(block for start, block in t.iter_native_blocks() if start == 2 << 20)
    np.testing.assert_array_equal(np.asarray(last[-1]), t.row(2_499_999))
    wide = open_table("random:40000x4096")  # a wide table's blocks are still its 128 MB
    assert [int(b.shape[0]) for _, b in wide.iter_native_blocks()] == [8192] * 4 + [40000 - 4 * 8192]


def test_a_sampled_read_draws_each_block_only_up_to_its_last_wanted_row():
    """The matrix overview reads one row in every 63 of a 4,096-wide table
    (one per 64-row block): it drew every row of the table, now only the
    start of each block up to the row wanted, with the same values."""
    from explorer.core.sources.readers import RandomRows

    class Counted(RandomRows):
        drawn = 0

        def _draw(self, b, out):
            Counted.drawn += out.shape[0]
            super()._draw(b, out)

    rows = Counted(128256, 4096, seed=0, std=0.02)
    ids = np.array([63 * k for k in range(40)] + [5, 130, 5])  # out of order, one twice
    got = rows.read(ids)
    assert rows.block_rows == 64
    whole = RandomRows(128256, 4096, seed=0, std=0.02).read_range(0, 63 * 39 + 1)
    np.testing.assert_array_equal(got, whole[ids])
    assert Counted.drawn == sum(max(int(o) for i, o in zip(*np.divmod(ids, 64)) if i == b) + 1
                                for b in set((ids // 64).tolist()))
    assert Counted.drawn < 0.75 * 64 * len(set((ids // 64).tolist()))  # whole blocks: 64 rows each
    # rows inside the starts already drawn cost nothing; a row past one draws that block again, whole
    before = Counted.drawn
    np.testing.assert_array_equal(rows.read(np.array([1, 70])), whole[[1, 70]])
    assert Counted.drawn == before
    np.testing.assert_array_equal(rows.read(np.array([127])), whole[[127]])
    assert Counted.drawn == before + 64
    np.testing.assert_array_equal(rows.read_range(60, 130), whole[60:130])


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
