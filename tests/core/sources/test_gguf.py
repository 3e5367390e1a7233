"""GGUF files written here with gguf.GGUFWriter (F32, F16, Q8_0; tied or
not; with or without a vocabulary), checked against gguf's own reader."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from explorer.core.sources import SourceError, open_table
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer
from tests.support import model_factory as mf
from tests.support.model_factory import GGUF_KEYS


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


def test_stored_buffer_is_the_real_address(ggufs):
    t = open_table(str(ggufs[("Q8_0", True)].path))
    buf = t.stored_buffer()
    assert "Q8_0 blocks" in buf.description
    assert isinstance(buf.keep_alive, np.ndarray) and buf.keep_alive.shape[0] == t.vocab_size
    assert buf.address == buf.keep_alive.__array_interface__["data"][0]
    f = open_table("toy:robot").stored_buffer()
    assert f.address == f.keep_alive.data_ptr() and "float32" in f.description


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


def test_a_header_read_again_is_parsed_once_and_a_rewrite_in_place_is_seen(tmp_path, monkeypatch):
    """The model list reads every GGUF header each time the picker opens: a file read before
    is not parsed again, but a header rewritten in place (same size, same inode, possibly the
    same clock tick) is, and a caller that edits its header does not edit the next one's."""
    from explorer.core.sources import ggufio
    from tests.support.gguf_files import patch_gguf_tensor_type

    path = mf.write_gguf(tmp_path / "t.gguf", np.ones((48, 64), np.float32))
    parsed = []
    real_parse = ggufio._parse
    monkeypatch.setattr(ggufio, "_parse", lambda *a: parsed.append(a[0]) or real_parse(*a))
    first = ggufio.read_header(path)
    first.metadata["edited"] = 1
    first.tensors.clear()
    again = ggufio.read_header(str(path))
    assert len(parsed) == 1 and "edited" not in again.metadata
    assert again.tensors["token_embd.weight"].type_id == 0  # F32
    size = path.stat().st_size
    patch_gguf_tensor_type(path, "token_embd.weight", 1)  # F16: the same bytes of header, half the data
    assert path.stat().st_size == size
    with pytest.raises(ggufio.GGUFError, match="after its last tensor"):  # the new header, checked
        ggufio.read_header(path)
    assert len(parsed) == 2


def test_q8_0_rows_are_ggufs_own_numbers_on_smollm2_and_on_odd_scales():
    """Q8_0 is dequantised over all the rows at once (gguf goes 16 rows at a time, holding the
    GIL for each small step): the numbers are gguf's, scales that are not numbers included."""
    import gguf

    from explorer.core.sources.readers import dequantize_q8_0

    q8 = gguf.GGMLQuantizationType.Q8_0
    raw = open_table("smollm2")._reader.raw
    assert raw.shape[1] % 34 == 0
    for rows in (raw[:700], raw[-3:], raw[[5, 40000, 5]]):
        np.testing.assert_array_equal(dequantize_q8_0(rows), gguf.quants.dequantize(np.asarray(rows), q8))
    blocks = np.random.default_rng(9).integers(0, 256, (6, 3 * 34), dtype=np.uint8)
    scales = np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8, 65504], np.float16)  # subnormal, the largest
    blocks[:, 34:36] = scales.view(np.uint8).reshape(6, 2)
    np.testing.assert_array_equal(dequantize_q8_0(blocks), gguf.quants.dequantize(blocks, q8))
