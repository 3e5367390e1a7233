"""The input layer read from the models' own files, checked against
transformers' own modules and against the formulas written out in numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.errors import ExplorerError
from explorer.core.input_layer import (
    PositionLimitError,
    input_vectors,
    read_input_layer,
    rotation_angles,
    sinusoidal_table,
)
from explorer.core.sources import open_table
from tests.support import model_factory as mf

# -- MiniLM: LayerNorm(tok + pos + type) against BertModel.embeddings -----------------


@pytest.fixture(scope="module")
def minilm_bert(minilm_dir):
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(str(minilm_dir), local_files_only=True).eval()
    torch.set_grad_enabled(False)
    yield model
    torch.set_grad_enabled(True)


def test_minilm_has_learned_positions_token_types_and_layer_norm(minilm_table):
    layer = read_input_layer(minilm_table)
    assert layer.scheme == "learned"
    assert (layer.positions.rows, layer.positions.cols) == (512, 384)
    assert (layer.token_types.rows, layer.token_types.cols) == (2, 384)
    assert layer.layer_norm is not None and layer.layer_norm.eps == pytest.approx(1e-12)
    assert layer.scale == 1.0 and layer.max_tokens == 512 and layer.rotary is None


def test_minilm_vectors_equal_bert_embeddings(minilm_table, minilm_bert):
    import torch

    text = "the bank of the river and the bank downtown"
    ids = [t.id for t in minilm_table.tokenizer.encode(text)]
    layer = read_input_layer(minilm_table)
    got = input_vectors(minilm_table, layer, ids)
    want = minilm_bert.embeddings(input_ids=torch.tensor([ids])).numpy()[0]
    assert got.vectors.shape == (len(ids), 384)
    np.testing.assert_allclose(got.vectors, want, atol=1e-5)
    # the parts are the model's own tables
    emb = minilm_bert.embeddings
    np.testing.assert_allclose(got.position_rows, emb.position_embeddings.weight[: len(ids)].numpy(), atol=1e-7)
    np.testing.assert_allclose(got.type_rows[0], emb.token_type_embeddings.weight[0].numpy(), atol=1e-7)
    # "bank" twice: one token row, two different input vectors
    bank = minilm_table.tokenizer.id_of("bank")
    a, b = [i for i, t in enumerate(ids) if t == bank]
    np.testing.assert_array_equal(got.token_rows[a], got.token_rows[b])
    assert np.linalg.norm(got.vectors[a] - got.vectors[b]) > 0.1


def test_minilm_text_longer_than_the_position_table_is_an_error(minilm_table):
    layer = read_input_layer(minilm_table)
    with pytest.raises(PositionLimitError, match="512 positions") as info:
        input_vectors(minilm_table, layer, [1010] * 513)
    assert isinstance(info.value, ExplorerError)
    assert input_vectors(minilm_table, layer, [1010] * 512).vectors.shape == (512, 384)


# -- GPT-2 built here: wte + wpe against GPT2Model --------------------------------------


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2-positions")
    mf.build_model(folder, "gpt2", "float32", tied=True, tokenizer=mf.train_bpe(160), seed=3)
    return folder


def test_gpt2_vectors_equal_wte_plus_wpe(gpt2_folder):
    import torch
    from transformers import GPT2Model

    table = open_table(str(gpt2_folder))
    layer = read_input_layer(table)
    assert layer.scheme == "learned" and layer.positions.rows == 64
    assert layer.layer_norm is None and layer.token_types is None and layer.scale == 1.0
    model = GPT2Model.from_pretrained(str(gpt2_folder), local_files_only=True).eval()
    ids = [t.id for t in table.tokenizer.encode(mf.SAMPLE_TEXT)]
    with torch.no_grad():
        ids_t = torch.tensor([ids])
        want = (model.wte(ids_t) + model.wpe(torch.arange(len(ids))[None])).numpy()[0]
    got = input_vectors(table, layer, ids)
    np.testing.assert_allclose(got.vectors, want, atol=1e-6)
    assert got.normed is None
    with pytest.raises(PositionLimitError, match="64 positions"):
        input_vectors(table, layer, ids * 10)


def test_positions_passed_for_tokens_with_gaps(gpt2_folder):
    table = open_table(str(gpt2_folder))
    layer = read_input_layer(table)
    got = input_vectors(table, layer, [5, 6], positions=[0, 3])
    np.testing.assert_array_equal(got.position_rows, layer.positions.read(0, 4)[[0, 3]])


# -- rotary: SmolLM2 (GGUF) and a Llama folder ----------------------------------------


def test_smollm2_is_rotary_with_settings_from_gguf_metadata(smollm2_table, smollm2_path):
    from explorer.core.sources import ggufio

    layer = read_input_layer(smollm2_table)
    meta = ggufio.read_header(smollm2_path).metadata
    assert layer.scheme == "rotary" and layer.positions is None and layer.layer_norm is None
    r = layer.rotary
    assert r.theta == pytest.approx(meta["llama.rope.freq_base"])
    assert r.head_dim == 576 // meta["llama.attention.head_count"] == 64
    assert r.source == "GGUF metadata" and r.context_length == meta["llama.context_length"]
    ids = [t.id for t in smollm2_table.tokenizer.encode("the bank of the bank")]
    got = input_vectors(smollm2_table, layer, ids)
    np.testing.assert_array_equal(got.vectors, smollm2_table.rows(ids))
    assert "carries no position" in " ".join(layer.notes)


def test_llama_folder_is_rotary_from_config(tmp_path):
    mf.build_model(tmp_path, "llama", "float32", tied=True, tokenizer=mf.train_bpe(120), seed=1)
    layer = read_input_layer(open_table(str(tmp_path)))
    assert layer.scheme == "rotary"
    assert layer.rotary.head_dim == 16 and layer.rotary.theta == pytest.approx(10_000.0)
    assert layer.rotary.source == "config.json" and layer.max_tokens is None


def test_rotation_angles_follow_the_formula():
    from explorer.core.input_layer import RotarySettings

    s = RotarySettings(theta=10_000.0, head_dim=64, rotary_dim=64)
    pos = np.arange(5)
    got = rotation_angles(s, pos, [0, 1, 31])
    want = pos[:, None] * np.array([1.0, 10_000.0 ** (-2 / 64), 10_000.0 ** (-62 / 64)])[None, :]
    np.testing.assert_allclose(got, want, rtol=1e-12)


# -- tables without positions -------------------------------------------------------


def test_bundled_model_has_no_position_table_and_says_how_order_enters():
    table = open_table("default")
    layer = read_input_layer(table)
    assert layer.scheme == "none" and layer.positions is None and layer.layer_norm is None
    assert "concatenates the rows of the previous 3 tokens" in " ".join(layer.notes)
    got = input_vectors(table, layer, [5, 7, 5])
    np.testing.assert_array_equal(got.vectors, table.rows([5, 7, 5]))


@pytest.mark.parametrize("spec", ["random:1000x64", "toy:cat-sat"])
def test_bare_tables_say_they_have_no_model(spec):
    table = open_table(spec)
    layer = read_input_layer(table)
    assert layer.scheme == "none" and layer.max_tokens is None
    assert "no model around it" in layer.notes[0]
    got = input_vectors(table, layer, list(range(3)) * 400)  # no limit on length
    np.testing.assert_array_equal(got.vectors, table.rows(list(range(3)) * 400))


# -- sinusoidal ------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 7, 64, 384])
def test_sinusoidal_table_matches_the_formula(d):
    n = 50
    got = sinusoidal_table(n, d)
    want = np.zeros((n, d))
    for pos in range(n):
        for col in range(d):
            i = col // 2
            angle = pos / 10_000 ** (2 * i / d)
            want[pos, col] = math.sin(angle) if col % 2 == 0 else math.cos(angle)
    assert got.shape == (n, d) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_sinusoidal_row_norm_against_sqrt_d():
    # the paper's reason for the sqrt(d) factor: a position row has norm about sqrt(d/2)
    table = sinusoidal_table(100, 512)
    assert np.linalg.norm(table[50]) == pytest.approx(math.sqrt(256), rel=0.05)


# -- GGUF files with a position table, token types and an input LayerNorm ------------


def _bert_like_gguf(path, v=40, d=16, n_pos=24):
    """A GGUF laid out like llama.cpp's BERT conversion (no blocks: only the input layer)."""
    import gguf

    rng = np.random.default_rng(4)
    arrays = {
        "token_embd.weight": rng.standard_normal((v, d)).astype(np.float32),
        "position_embd.weight": rng.standard_normal((n_pos, d)).astype(np.float32),
        "token_types.weight": rng.standard_normal((2, d)).astype(np.float32),
        "token_embd_norm.weight": rng.standard_normal(d).astype(np.float32),
        "token_embd_norm.bias": rng.standard_normal(d).astype(np.float32),
    }
    w = gguf.GGUFWriter(str(path), arch="bert")
    w.add_context_length(n_pos)
    w.add_embedding_length(d)
    w.add_block_count(0)
    w.add_layer_norm_eps(1e-5)
    for name, data in arrays.items():
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return arrays


def test_gguf_input_layer_is_read_from_its_tensors(tmp_path):
    import torch

    arrays = _bert_like_gguf(tmp_path / "bert.gguf")
    table = open_table(str(tmp_path / "bert.gguf"))
    layer = read_input_layer(table)
    assert layer.scheme == "learned" and layer.max_tokens == 24 and layer.model == "bert"
    assert layer.layer_norm.eps == pytest.approx(1e-5)
    ids = [3, 9, 3, 30]
    got = input_vectors(table, layer, ids)
    x = torch.from_numpy(arrays["token_embd.weight"][ids] + arrays["position_embd.weight"][:4]
                         + arrays["token_types.weight"][0])
    want = torch.nn.functional.layer_norm(x, (16,), torch.from_numpy(arrays["token_embd_norm.weight"]),
                                          torch.from_numpy(arrays["token_embd_norm.bias"]), eps=1e-5).numpy()
    np.testing.assert_allclose(got.vectors, want, atol=1e-5)


# -- what the Positions view draws ---------------------------------------------------


def test_positions_report_against_numpy(gpt2_folder):
    from safetensors.numpy import load_file

    from explorer.core.input_layer import positions_report

    wpe = load_file(str(gpt2_folder / "model.safetensors"))["transformer.wpe.weight"]
    r = positions_report(open_table(str(gpt2_folder)))
    np.testing.assert_array_equal(r.learned, wpe)
    unit = wpe / np.linalg.norm(wpe, axis=1, keepdims=True)
    np.testing.assert_allclose(r.learned_cosine, unit @ unit.T, atol=1e-5)
    np.testing.assert_allclose(r.learned_norms, np.linalg.norm(wpe, axis=1), rtol=1e-5)
    # the PCA path: the centred rows on their first two components (a column's squared norm is its
    # eigenvalue) and their share of the variance
    c = wpe - wpe.mean(axis=0)
    eig = np.sort(np.linalg.eigvalsh(c.T @ c))[::-1]
    np.testing.assert_allclose(r.learned_path.explained, eig[:2] / eig.sum(), rtol=1e-4)
    np.testing.assert_allclose(np.sum(r.learned_path.points.astype(np.float64) ** 2, axis=0), eig[:2], rtol=1e-3)
    np.testing.assert_array_equal(r.sinusoidal, sinusoidal_table(64, 32))
    assert r.rotary_angles is None and r.total_positions == 64
    # the heatmaps' colour ranges, worked out in the job: +-the 99.5th percentile of |values|
    for levels, rows in ((r.learned_levels, wpe), (r.sinusoidal_levels, r.sinusoidal)):
        m = np.percentile(np.abs(rows.astype(np.float64)), 99.5)
        assert levels[0] == -levels[1] and levels[1] == pytest.approx(m, rel=1e-6)


def test_text_inputs_mark_tokens_past_the_limit(gpt2_folder):
    from explorer.core.input_layer import text_inputs

    table = open_table(str(gpt2_folder))
    tokens = table.tokenizer.encode(" ".join(["the cat"] * 40))
    got = text_inputs(table, tokens)
    assert got.n_tokens == len(tokens) > 64
    assert got.past_limit == tuple(range(64, len(tokens))) and len(got.vectors.ids) == 64
    assert "64 positions" in got.limit_message


def test_the_svd_runs_on_one_blas_thread_with_the_controller_made_once():
    """threadpoolctl's threadpool_limits walks every loaded library each time (3-14 ms holding the
    GIL in the window's process): the position report's limit comes from one controller."""
    from threadpoolctl import threadpool_info

    from explorer.core.input_layer import report

    def blas_threads():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    with report.one_blas_thread():
        assert blas_threads() and set(blas_threads()) == {1}
        first = report._BLAS
    assert blas_threads() == before
    with report.one_blas_thread():
        assert report._BLAS is first


@pytest.mark.parametrize("shape", [(40, 12), (30, 2000)])
def test_the_path_of_positions_is_scikit_learns_first_two_principal_components(shape):
    """Tall tables by SVD, wide ones (a few positions of a wide model) by the Gram matrix:
    both give scikit-learn's components (up to sign) and explained variance."""
    from sklearn.decomposition import PCA

    from explorer.core.input_layer.report import pca_path

    rows = np.random.default_rng(3).standard_normal(shape) * np.linspace(3, 0.5, shape[1])
    got = pca_path(rows)
    ref = PCA(n_components=2, svd_solver="full").fit(rows)
    want = ref.transform(rows)
    want *= np.where(want[0] > 0, -1.0, 1.0)  # the path's sign: position 0 left of (and below) the mean
    np.testing.assert_allclose(got.points, want, atol=1e-4 * np.abs(want).max())
    np.testing.assert_allclose(got.explained, ref.explained_variance_ratio_, rtol=1e-6)


def test_the_positions_job_stops_between_the_sinusoidal_steps():
    from explorer.core.input_layer.report import positions_job

    job = positions_job(open_table("random:300x2048"))
    messages = []
    for _, message in job:
        messages.append(message)
        if message.startswith("Tracing the sinusoidal path"):
            break
    job.close()
    assert messages[-3:] == ["Computing the sinusoidal table…", "Comparing sinusoidal positions…",
                             "Tracing the sinusoidal path…"]
