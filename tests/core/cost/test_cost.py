"""Parameters and memory of a table (explorer.core.cost.parameters) against FACTS.md."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core import units
from explorer.core.cost import parameters as cost


def test_gpt2_small_parameters_and_bytes():
    v, d = 50_257, 768
    assert cost.params(v, d) == 38_597_376
    assert cost.table_bytes(v, d, "float32") == 154_389_504
    assert cost.table_bytes(v, d, "float16") == 77_194_752
    assert cost.table_bytes(v, d, "bfloat16") == 77_194_752
    # against what torch allocates for the same tensor
    assert torch.empty(v, d, dtype=torch.float32).nbytes == 154_389_504
    assert torch.empty(v, d, dtype=torch.bfloat16).nbytes == 77_194_752
    assert np.empty((v, d), np.float16).nbytes == 77_194_752


def test_gpt2_small_share_of_the_model():
    c = cost.table_cost(50_257, 768, model_params=124_000_000)
    assert round(100 * c.model_share) == 31
    ref = dict((n, (v, d, p)) for n, v, d, p in cost.REFERENCE_MODELS)
    v, d, p = ref["GPT-2 small"]
    assert round(100 * cost.table_cost(v, d, p).model_share) == 31
    assert c.params == 38_597_376
    assert c.row_bytes_float32 == 3_072
    assert c.bytes_by_dtype["float32"] == 154_389_504
    assert c.bytes_by_dtype["float16"] == 77_194_752
    assert c.tying_saves == 38_597_376


@pytest.mark.parametrize(
    "name,millions",
    [("GPT-2 XL", 80.4), ("BERT-base", 23.4), ("Llama 3 8B", 525.3)],
)
def test_reference_models_table_sizes(name, millions):
    ref = {n: (v, d, p) for n, v, d, p in cost.REFERENCE_MODELS}
    v, d, _ = ref[name]
    assert round(cost.params(v, d) / 1e6, 1) == millions


def test_llama_shares():
    ref = {n: (v, d, p) for n, v, d, p in cost.REFERENCE_MODELS}
    v, d, p = ref["Llama 3 8B"]
    assert round(100 * cost.table_cost(v, d, p).model_share, 1) == 6.5
    v, d, p = ref["Llama 3 70B"]
    assert round(cost.params(v, d) / 1e9, 2) == 1.05
    assert round(100 * cost.table_cost(v, d, p).model_share, 1) == 1.5
    assert ref["Gemma 2B"][0] == 256_000


def test_other_sizes_from_facts():
    assert cost.params(32_000, 512) == 16_384_000
    assert cost.params(50_000, 1_024) == 51_200_000
    assert cost.table_bytes(50_000, 1_024, "float16") == 102_400_000


def test_adam_keeps_four_copies():
    v, d = 1000, 64
    assert cost.adam_training_bytes(v, d) == 4 * v * d * 4
    # what torch's Adam actually allocates: weights, grad, exp_avg, exp_avg_sq
    w = torch.nn.Parameter(torch.zeros(v, d))
    opt = torch.optim.Adam([w])
    w.grad = torch.ones(v, d)
    opt.step()
    st = opt.state[w]
    total = w.nbytes + w.grad.nbytes + st["exp_avg"].nbytes + st["exp_avg_sq"].nbytes
    assert cost.adam_training_bytes(v, d) == total


def test_factorised_params():
    assert cost.factorised_params(50_257, 768, 128) == 50_257 * 128 + 128 * 768
    a, b = torch.empty(50_257, 128), torch.empty(128, 768)
    assert cost.factorised_params(50_257, 768, 128) == a.numel() + b.numel()


def test_dtype_bytes_against_torch_and_errors():
    for name, tdt in (("float32", torch.float32), ("float16", torch.float16), ("bfloat16", torch.bfloat16),
                      ("float64", torch.float64), ("int8", torch.int8)):
        assert cost.dtype_bytes(name) == torch.empty(0, dtype=tdt).element_size()
    with pytest.raises(ValueError):
        cost.dtype_bytes("float8")


def test_sqrt_d_model_scale():
    assert round(float(np.sqrt(512)), 1) == 22.6


# -- the cost card and the comparison (issue #7) ------------------------------------


def test_bytes_per_dtype_gpt2_small_mb_and_mib():
    got = {b.dtype: b for b in cost.bytes_per_dtype(50_257, 768)}
    assert list(got) == ["float32", "float16", "bfloat16", "int8"]
    assert got["float32"].bytes == 154_389_504 == torch.empty(50_257, 768).nbytes
    assert got["int8"].bytes == torch.empty(50_257, 768, dtype=torch.int8).nbytes
    assert f"{got['float32'].mb:.2f}" == "154.39" and f"{got['float32'].mib:.2f}" == "147.24"
    assert f"{got['float16'].mb:.2f}" == "77.19" and f"{got['float16'].mib:.2f}" == "73.62"
    assert units.format_mb(154_389_504) == "154.39 MB"
    assert units.format_mib(154_389_504) == "147.24 MiB"


def test_reference_totals_give_the_facts_shares():
    ref = {n: (v, d, p) for n, v, d, p in cost.REFERENCE_MODELS}
    assert set(cost.REFERENCE_TIED) == set(ref)
    v, d, p = ref["GPT-2 small"]
    assert round(p / 1e6) == 124
    assert round(100 * cost.params(v, d) / p) == 31
    assert ref["Transformer (2017)"][:2] == (37_000, 512)
    assert ref["GPT-2 XL"][:2] == (50_257, 1_600)


def test_comparison_includes_the_loaded_table_sorted():
    rows = cost.comparison(("mine", 30_522, 384, 22_713_728, None))
    assert [r.cost.params for r in rows] == sorted(r.cost.params for r in rows)
    mine = [r for r in rows if r.loaded]
    assert len(mine) == 1 and mine[0].cost.params == 30_522 * 384
    assert mine[0].cost.model_share == pytest.approx(30_522 * 384 / 22_713_728)
    assert len(rows) == len(cost.REFERENCE_MODELS) + 1
    assert len(cost.comparison()) == len(cost.REFERENCE_MODELS)


def test_factorised_break_even_against_brute_force():
    for v, d in ((50_257, 768), (4, 3), (30_522, 384)):
        k_star = cost.factorised_break_even(v, d)
        smaller = [k for k in range(1, d + 1) if cost.factorised_params(v, d, k) < v * d]
        assert smaller == [k for k in range(1, d + 1) if k < k_star]


@pytest.mark.parametrize("v, d, k", [(30_522, 384, 379), (49_152, 576, 569), (50_257, 768, 756),
                                     (128_256, 4_096, 3_969)])
def test_largest_saving_rank_of_real_tables(v, d, k):
    """Issue 12, item 5: the break-even V·d/(V+d) is 379.2 for MiniLM, so k = 379 still saves."""
    assert int(cost.factorised_break_even(v, d)) == k
    assert cost.largest_saving_rank(v, d) == k
    assert cost.factorised_params(v, d, k) < v * d <= cost.factorised_params(v, d, k + 1)
    f = cost.factorisation(v, d, k)
    assert f.saves and f.largest_saving_k == k and f.ratio < 1
    assert not cost.factorisation(v, d, k + 1).saves


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.integers(0, 300_000), st.integers(0, 20_000))
def test_largest_saving_rank_is_exact(v, d):
    k = cost.largest_saving_rank(v, d)
    assert k >= 0
    if k:
        assert cost.factorised_params(v, d, k) < cost.params(v, d)
    assert cost.factorised_params(v, d, k + 1) >= cost.params(v, d)


def test_break_even_that_is_a_whole_number_does_not_save():
    # 2 x 2: k = 1 gives 2 + 2 = 4 = V·d parameters, no saving
    assert cost.factorised_break_even(2, 2) == 1.0 and cost.largest_saving_rank(2, 2) == 0
    assert not cost.factorisation(2, 2, 1).saves


def test_row_layout_plain_and_quantised():
    q = cost.row_layout("Q8_0", 576, 612)  # SmolLM2's token embedding
    assert (q.blocks, q.block_values, q.block_bytes, q.float32_row_bytes) == (18, 32, 34, 2304)
    assert q.quantised and q.bytes_per_value == pytest.approx(612 / 576)
    f = cost.row_layout("float32", 768, 3072)
    assert not f.quantised and f.blocks == 768 and f.block_bytes == torch.empty(1).element_size()
    h = cost.row_layout("bfloat16", 384, 768)
    assert h.block_bytes == torch.empty(1, dtype=torch.bfloat16).element_size() and h.float32_row_bytes == 1536
    g = cost.row_layout("F16", 576, 1152)  # a GGUF plain type
    assert (g.block_values, g.block_bytes, g.blocks) == (1, 2, 576)
    odd = cost.row_layout("mystery", 10, 17)  # cannot be told: one block of the whole row
    assert (odd.blocks, odd.block_bytes) == (1, 17)


def test_embedding_scale_and_counts():
    assert round(cost.embedding_scale(512), 1) == 22.6
    assert cost.embedding_scale(384) == pytest.approx(np.sqrt(384))
    assert units.format_count(38_597_376) == "38.6 M"
    assert units.format_count(1_050_673_152) == "1.05 B"
    assert units.format_count(12) == "12"


def test_tying_text_names_the_saving():
    assert "38,597,376" in cost.tying_text(50_257, 768, True)
    assert "would save" in cost.tying_text(50_257, 768, False)
