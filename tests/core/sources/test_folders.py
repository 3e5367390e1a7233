"""Model folders and single safetensors files built here with transformers
(GPT-2, BERT, Llama; three dtypes; tied or not; sharded or not), checked
against safetensors and transformers reading the same files."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from explorer.core.sources import open_table
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer
from tests.support import model_factory as mf
from tests.support.model_factory import ZOO_KEYS, zoo_id


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
    # a second matrix of other values (an equal copy is E stored twice: tied, see test_output_matrix)
    save_file({"model.embed_tokens.weight": w, "lm_head.weight": w.flip(0).clone()},
              str(tmp_path / "model.safetensors"))
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


def test_classes_json_that_is_not_an_object_turns_colouring_off(gpt2_single, tmp_path):
    for name, text in (("list", "[1, 2, 3]"), ("deep", '{"a": ' + mf.nested_json(100_000) + "}"),
                       ("number", "42"), ("nested-values", '{"the": {"x": 1}}')):
        folder = shutil.copytree(gpt2_single.folder, tmp_path / name)
        (folder / "classes.json").write_text(text)
        t = open_table(str(folder))
        assert t.classes is None
        assert any("Colouring by class is off" in n for n in t.notes), t.notes
        np.testing.assert_array_equal(t.matrix(), gpt2_single.embedding)


def test_all_finite_sees_an_inf_in_the_file(tmp_path):
    from safetensors.torch import save_file

    w = torch.zeros(10, 4)
    w[3, 2] = float("inf")
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    t = open_table(str(tmp_path))
    assert t.all_finite() is False
    assert open_table("toy:robot").all_finite() is True
