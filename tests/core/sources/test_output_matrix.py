"""The output matrix (lm_head) and tying, read from the files and checked
against transformers' own ``get_output_embeddings()`` and the gguf package."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.core.sources import open_table
from explorer.core.sources.output import tying_word
from tests.support.model_factory import ZOO_KEYS, zoo_id

_CLASSES = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "bert": "BertForMaskedLM"}


def _transformers_output(folder, arch):
    import transformers as tf

    model = getattr(tf, _CLASSES[arch]).from_pretrained(str(folder), local_files_only=True)
    out, inp = model.get_output_embeddings().weight, model.get_input_embeddings().weight
    return out.detach().float().numpy(), out.data_ptr() == inp.data_ptr()


def _config_and_tokenizer(src, dst):
    """A new model folder holding ``src``'s files but its weights (written by the test)."""
    dst.mkdir()
    for f in src.iterdir():
        if f.suffix != ".safetensors":
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


# one model per architecture, tying and storage: enough to meet every reader
_KEYS = [k for k in ZOO_KEYS if k[1] in ("float32", "bfloat16") and (k[1] == "float32" or k[3])]


@pytest.mark.parametrize("key", _KEYS, ids=zoo_id)
def test_output_rows_equal_transformers_output_embeddings(zoo, key):
    arch, dtype, tied, sharded = key
    built = zoo[key]
    t = open_table(str(built.folder))
    expected, shares_memory = _transformers_output(built.folder, arch)
    assert t.tied is tied is shares_memory
    out = t.output_table()
    assert out is not None and out.vocab_size == expected.shape[0] and out.dim == expected.shape[1]
    assert (out is t) is tied
    ids = np.array([0, 1, 7, expected.shape[0] - 1])
    np.testing.assert_array_equal(out.rows(ids), expected[ids])  # bit for bit, bfloat16 widened
    if not tied:
        assert out.tensor_name in ("lm_head.weight", "cls.predictions.decoder.weight")
        assert not np.array_equal(out.rows(ids), t.rows(ids))
    assert tying_word(t.tied, t.kind) == ("tied" if tied else "not tied")


def test_an_encoder_has_no_output_matrix(zoo, tmp_path):
    from tests.support import model_factory as mf

    built = mf.build_model(tmp_path / "enc", "bert", headless=True, tokenizer=mf.train_wordlevel())
    t = open_table(str(built.folder))
    assert t.tied is None and t.output_table() is None and not t.has_output
    assert "encoder" in t.output_how
    assert tying_word(t.tied, t.kind) == "no output layer"


def test_minilm_has_no_output_matrix(minilm_table):
    assert minilm_table.tied is None and minilm_table.output_table() is None


def test_a_head_saved_twice_with_equal_values_is_tied(zoo, tmp_path):
    """Some checkpoints store lm_head.weight although it equals E: the same
    bytes in every row means tied, whatever the file layout."""
    from safetensors.torch import load_file, save_file

    src = zoo[("gpt2", "float32", True, False)].folder
    dst = _config_and_tokenizer(src, tmp_path / "twice")
    tensors = load_file(str(src / "model.safetensors"))
    name = next(k for k in tensors if k.endswith("wte.weight"))
    tensors["lm_head.weight"] = tensors[name].clone()
    save_file(tensors, str(dst / "model.safetensors"))
    t = open_table(str(dst))
    assert t.tied is True and t.output_table() is t and "same values" in t.output_how
    # one value changed: a second matrix
    tensors["lm_head.weight"][-1, 0] += 1.0
    save_file(tensors, str(dst / "model.safetensors"))
    t = open_table(str(dst))
    assert t.tied is False and t.output_table() is not t
    np.testing.assert_array_equal(t.output_table().row(t.vocab_size - 1), tensors["lm_head.weight"][-1].numpy())


def test_a_mis_shaped_output_tensor_is_explained_not_fatal(zoo, tmp_path):
    from safetensors.torch import load_file, save_file

    src = zoo[("llama", "float32", False, False)].folder
    dst = _config_and_tokenizer(src, tmp_path / "bad-head")
    tensors = load_file(str(src / "model.safetensors"))
    tensors["lm_head.weight"] = tensors["lm_head.weight"][:-3].clone()
    save_file(tensors, str(dst / "model.safetensors"))
    t = open_table(str(dst))
    assert t.tied is None and t.output_table() is None
    assert any("output tensor lm_head.weight has shape" in n for n in t.notes)
    t.rows([0, 1])  # the input side still opens


def test_untied_config_without_a_head_tensor_says_so(zoo, tmp_path):
    from safetensors.torch import load_file, save_file

    src = zoo[("llama", "float32", False, False)].folder
    dst = _config_and_tokenizer(src, tmp_path / "no-head")
    tensors = load_file(str(src / "model.safetensors"))
    del tensors["lm_head.weight"]
    save_file(tensors, str(dst / "model.safetensors"))
    cfg = json.loads((dst / "config.json").read_text())
    assert cfg["tie_word_embeddings"] is False
    t = open_table(str(dst))
    assert t.tied is None and t.output_table() is None
    assert any("not tied, but no lm_head tensor" in n for n in t.notes)


@pytest.mark.parametrize("qtype", ["F32", "Q8_0"])
@pytest.mark.parametrize("tied", [True, False])
def test_gguf_output_matrix_matches_the_gguf_package(ggufs, qtype, tied):
    import gguf

    built = ggufs[(qtype, tied)]
    t = open_table(str(built.path))
    assert t.tied is tied
    reader = gguf.GGUFReader(str(built.path))
    tensors = {x.name: x for x in reader.tensors}
    src = tensors["token_embd.weight" if tied else "output.weight"]
    expected = np.asarray(gguf.quants.dequantize(src.data, src.tensor_type), np.float32).reshape(t.vocab_size, -1)
    out = t.output_table()
    assert (out is t) is tied
    np.testing.assert_array_equal(out.matrix(), expected)


def test_smollm2_is_tied_as_transformers_reads_it(smollm2_path, smollm2_table, smollm2_reference):
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(str(smollm2_path.parent), gguf_file=smollm2_path.name, local_files_only=True)
    assert cfg.tie_word_embeddings is True and "output.weight" not in smollm2_reference["names"]
    t = smollm2_table
    assert t.tied is True and t.output_table() is t
    ids = [0, 1, 42, t.vocab_size - 1]
    np.testing.assert_array_equal(t.output_table().rows(ids), smollm2_reference["embedding"][ids])


def test_bundled_model_output_matrix_is_its_lm_head():
    from safetensors.torch import load_file

    t = open_table("default")
    weights = load_file(str(t.path / "model.safetensors"))
    assert t.tied is False
    np.testing.assert_array_equal(t.output_table().matrix(), weights["lm_head.weight"].to(torch.float32).numpy())


def test_the_output_matrix_does_not_wait_behind_a_worker_holding_the_tables_memo(zoo):
    """A worker computing the unit matrix holds the table's memo lock for as long as that takes
    (seconds for a big table); the window asks for the output matrix meanwhile (the matrix view, both
    ends): it has a lock of its own, and once made it is read without one."""
    import threading

    key = next(k for k in _KEYS if not k[2])  # an untied model: its output matrix is a table of its own
    t = open_table(str(zoo[key].folder))
    got = []
    with t._memo.lock:  # as iter_unit_matrix's caller holds it, in another thread
        asker = threading.Thread(target=lambda: got.extend([t.output_table(), t.output_table()]))
        asker.start()
        asker.join(timeout=30)
        finished = not asker.is_alive()
    asker.join()
    assert finished and got[0] is got[1] is not None and got[0] is not t
