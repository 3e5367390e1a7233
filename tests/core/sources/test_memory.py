"""Tables from objects in memory (explorer.show's source): real torch tensors,
numpy arrays, nn.Embedding, tiny transformers models and real tokenizers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.sources import SourceError, open_table
from explorer.core.sources.memory import as_tokenizer, device_note, held_in_memory, open_object
from explorer.core.sources.output import tying_word
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, NameTokenizer
from tests.support import model_factory as mf


def _rows_equal(table, reference: torch.Tensor, ids=(0, 3, 7)) -> None:
    want = reference.detach().float().numpy()
    np.testing.assert_array_equal(table.rows(list(ids)), want[list(ids)])
    np.testing.assert_array_equal(table.matrix(), want)


def test_a_contiguous_float32_tensor_is_shown_in_place():
    t = torch.randn(50, 8, generator=torch.Generator().manual_seed(0))
    table = open_object(t)
    assert (table.vocab_size, table.dim, table.dtype, table.row_bytes) == (50, 8, "float32", 32)
    assert table.name == "tensor 50×8 float32" and held_in_memory(table)
    _rows_equal(table, t)
    # no copy: the table's rows are the tensor's memory, its address the tensor's
    assert np.shares_memory(table.matrix(), t.numpy())
    assert table.stored_buffer().address == t.data_ptr()
    assert table.byte_offset(7) == 7 * 8 * 4
    # the app reads; it cannot write into the user's tensor through the table
    with pytest.raises(ValueError):
        table.matrix()[0, 0] = 1.0
    # a change to the tensor is what the rows read (the memory is shared)
    t[3, 2] = 123.0
    assert table.row(3)[2] == 123.0


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_other_dtypes_are_kept_and_read_as_float32(dtype):
    t = torch.randn(40, 6, generator=torch.Generator().manual_seed(1)).to(dtype)
    table = open_object(t)
    name = str(dtype).removeprefix("torch.")
    assert table.dtype == name and table.row_bytes == 6 * t.element_size()
    assert table.name == f"tensor 40×6 {name}"
    _rows_equal(table, t)
    # the stored tensor is the user's, not a copy
    assert table.torch_table().data_ptr() == t.data_ptr()


def test_numpy_arrays_share_memory_and_non_contiguous_ones_are_copied_with_a_note():
    a = np.random.default_rng(2).standard_normal((30, 5)).astype(np.float32)
    table = open_object(a)
    assert table.name == "array 30×5 float32"
    assert np.shares_memory(table.matrix(), a)
    np.testing.assert_array_equal(table.rows([4, 0]), a[[4, 0]])
    a.flags.writeable = False  # a read-only array (np.frombuffer, a memory map) opens too
    assert np.shares_memory(open_object(a).matrix(), a)
    strided = np.asfortranarray(a)
    t2 = open_object(strided)
    assert not np.shares_memory(t2.matrix(), strided)
    np.testing.assert_array_equal(t2.matrix(), a)
    assert any("not contiguous" in n for n in t2.notes)
    half = open_object(a.astype(np.float16))
    assert half.dtype == "float16"
    np.testing.assert_array_equal(half.matrix(), a.astype(np.float16).astype(np.float32))


def test_nn_embedding_and_its_gradient_graph():
    emb = torch.nn.Embedding(20, 4)
    table = open_object(emb)
    assert table.name == "nn.Embedding 20×4 float32" and table.tensor_name == "weight"
    _rows_equal(table, emb.weight)
    assert np.shares_memory(table.matrix(), emb.weight.detach().numpy())
    # a bare table has no model around it: tying is unknown, said as everywhere else
    assert table.tied is None and tying_word(table.tied, table.kind) == "tying unknown"


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
@pytest.mark.parametrize("tied", [True, False])
def test_a_transformers_model_brings_its_output_matrix_and_tying(arch, tied):
    tok = mf.train_bpe()
    model = mf.tiny_model(arch, tok.get_vocab_size(), tied=tied, seed=4)
    table = open_object(model, tokenizer=tok)
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings().weight
    assert (out is emb) == tied  # what transformers built
    assert table.kind == "model" and table.name == type(model).__name__
    assert table.model_params == sum(p.numel() for p in model.parameters())
    _rows_equal(table, emb)
    assert table.tied is tied and tying_word(table.tied, table.kind) == ("tied" if tied else "not tied")
    w_out = table.output_table()
    if tied:
        assert w_out is table
    else:
        np.testing.assert_array_equal(w_out.matrix(), out.detach().numpy())
        assert np.shares_memory(w_out.matrix(), out.detach().numpy())
        assert w_out.tokenizer is table.tokenizer
    assert isinstance(table.tokenizer, HFTokenizer)
    assert [t.id for t in table.tokenizer.encode(mf.SAMPLE_TEXT)] == tok.encode(mf.SAMPLE_TEXT).ids


def test_an_encoder_has_no_output_layer_and_a_view_of_the_same_memory_is_tied():
    model = mf.tiny_model("bert", 90, headless=True)
    table = open_object(model)
    assert table.tied is None and tying_word(table.tied, table.kind) == "no output layer"
    assert isinstance(table.tokenizer, IdTokenizer)
    # tied by memory, not by object: an output layer viewing E's storage
    lm = mf.tiny_model("gpt2", 90, tied=False, seed=5)
    lm.lm_head.weight = torch.nn.Parameter(lm.transformer.wte.weight.data)
    assert lm.lm_head.weight is not lm.transformer.wte.weight
    assert open_object(lm).tied is True


def test_a_model_loaded_from_a_folder_brings_the_folders_tokenizer(tmp_path):
    from transformers import AutoModelForCausalLM

    built = mf.build_model(tmp_path / "m", "gpt2", tied=True)
    model = AutoModelForCausalLM.from_pretrained(str(built.folder))
    table = open_object(model)
    assert isinstance(table.tokenizer, HFTokenizer)
    assert any(str(built.folder) in n for n in table.notes)
    _rows_equal(table, torch.from_numpy(built.embedding))


def test_a_model_named_after_a_cached_repo_brings_the_caches_tokenizer(tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    snap = hub / "models--tiny--gpt" / "snapshots" / ("c" * 40)
    tok = mf.train_bpe(150)
    mf.build_model(snap, "gpt2", tied=True, tokenizer=tok)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    model = mf.tiny_model("gpt2", tok.get_vocab_size(), seed=7)
    model.config._name_or_path = "tiny/gpt"  # what from_pretrained("tiny/gpt") records
    table = open_object(model)
    assert table.name == "GPT2LMHeadModel (tiny/gpt)"
    assert [t.id for t in table.tokenizer.encode(mf.SAMPLE_TEXT)] == tok.encode(mf.SAMPLE_TEXT).ids
    model.config._name_or_path = "not/cached"
    assert isinstance(open_object(model).tokenizer, IdTokenizer)


def test_a_spec_string_opens_like_the_command_line_and_can_take_another_tokenizer():
    table = open_object("toy:robot")
    ref = open_table("toy:robot")
    np.testing.assert_array_equal(table.matrix(), ref.matrix())
    assert table.spec == "toy:robot" and not held_in_memory(table)
    words = ["a", "b", "c", "d"]
    named = open_object("toy:robot", tokenizer=words)
    assert isinstance(named.tokenizer, NameTokenizer) and named.piece(2) == "c"
    np.testing.assert_array_equal(named.matrix(), ref.matrix())
    with pytest.raises(SourceError, match="unknown model spec"):
        open_object("no such model anywhere")


def test_tokenizers_of_every_kind():
    from transformers import PreTrainedTokenizerFast

    plain = mf.train_bpe()
    want = plain.encode("the cat sat").ids
    tok = mf.train_bpe()
    tok.enable_padding(pad_id=plain.token_to_id("<pad>"), pad_token="<pad>", length=64)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>")
    for given in (tok, fast):
        got = as_tokenizer(given)
        assert got.vocab_size == plain.get_vocab_size()
        assert [t.id for t in got.encode("the cat sat")] == want  # every piece, no padding
    assert len(tok.encode("the cat sat").ids) == 64  # the user's own tokenizer keeps its settings
    assert as_tokenizer("minilm").vocab_size == 30522  # a spec's tokenizer
    with pytest.raises(SourceError, match="not a tokenizer"):
        as_tokenizer(3.5)
    with pytest.raises(SourceError, match="tokenizer 'nope nope'"):
        as_tokenizer("nope nope")


@pytest.mark.parametrize("bad, words", [
    (torch.zeros(10), "1-D, shape (10,)"),
    (torch.zeros(2, 3, 4), "reshape(-1, 4)"),
    (torch.zeros(0, 4), "empty table"),
    (torch.zeros(5, 4, dtype=torch.int64), "int64 values"),
    (torch.zeros(5, 4, dtype=torch.complex64), "complex64 values"),
    (torch.zeros(5, 4).to_sparse(), "sparse"),
    (torch.empty(5, 4, device="meta"), "meta device"),
    (np.zeros((5, 4), np.int32), "int32 values"),
    ([[1.0, 2.0]], "show takes a (V, d) torch tensor"),
])
def test_what_cannot_be_shown_says_why(bad, words):
    with pytest.raises(SourceError) as info:
        open_object(bad)
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_nan_values_open_with_a_note_counting_them():
    t = torch.randn(12, 3)
    t[4, 1] = float("nan")
    t[9] = float("inf")
    table = open_object(t)
    note = next(n for n in table.notes if "NaN" in n)
    assert note.startswith("4 values are NaN or infinite, in 2 rows (the first is row 4)")
    assert not table.all_finite()
    assert np.isnan(table.unit_matrix()[4]).all() and not np.isnan(table.unit_matrix()[5]).any()


def test_a_tokenizer_bigger_than_the_table_is_said_and_the_rest_is_shown():
    tok = mf.train_bpe()
    v = tok.get_vocab_size()
    table = open_object(torch.randn(v - 20, 8), tokenizer=tok)
    assert any(f"knows {v:,} ids but the table has only {v - 20:,} rows" in n for n in table.notes)
    assert table.vocab_size == v - 20 and table.trained_rows == v - 20


def test_a_gpu_tensor_is_copied_with_a_note():
    # no GPU here: the copy is one line (tensor.to("cpu")); the sentence is what a user reads
    note = device_note("the nn.Embedding's weight", torch.device("cuda", 0), 1000 * 64 * 4)
    assert note.startswith("The nn.Embedding's weight was on cuda:0; the explorer copied it to the CPU (0.3 MB)")


class _NoEmbedding(torch.nn.Module):
    """A model that names no input embedding, as transformers' base class does by default."""

    def get_input_embeddings(self):
        raise NotImplementedError("no input embedding")


def test_a_model_without_an_input_embedding_says_so():
    with pytest.raises(SourceError, match=r"_NoEmbedding.get_input_embeddings\(\) gives no table"):
        open_object(_NoEmbedding())
