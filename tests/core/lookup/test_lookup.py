"""Gather versus one-hot @ E: results, costs and offsets (explorer.core.lookup.ways).

Truth comes from FACTS.md's figures and from independent numpy / torch
computations, never from numbers the code produced.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.bench import LookupMeasurement
from explorer.core.lookup import ways as lookup
from explorer.core.sources import open_table

V_GPT2, D_GPT2 = 50_257, 768


# -- costs and offsets (FACTS.md, "Cost of the two ways to look up") ------------


def test_lookup_cost_gpt2_small_matches_facts():
    c = lookup.lookup_cost(V_GPT2, D_GPT2)
    assert c.onehot_flops == 77_194_752
    assert c.onehot_flops == 2 * V_GPT2 * D_GPT2
    assert c.zero_multiplies == 38_596_608
    assert c.zero_multiplies == (V_GPT2 - 1) * D_GPT2
    assert round(100 * c.zero_fraction, 3) == 99.998
    assert c.gather_flops == 0
    assert c.row_stride == 3_072
    assert c.gather_bytes == 3_072


def test_lookup_cost_scales_with_tokens_and_dtype():
    c = lookup.lookup_cost(V_GPT2, D_GPT2, tokens=5, dtype="float16")
    assert c.onehot_flops == 5 * 2 * V_GPT2 * D_GPT2
    assert c.zero_multiplies == 5 * (V_GPT2 - 1) * D_GPT2
    assert c.row_stride == D_GPT2 * 2
    assert c.gather_bytes == 5 * D_GPT2 * 2
    # a quantised stride overrides the dtype
    assert lookup.lookup_cost(100, 64, row_bytes=68).row_stride == 68


def test_row_address_of_token_42_in_float32():
    off = lookup.row_address(0, 42, D_GPT2, 4)
    assert off == 129_024 == 0x1F800
    assert lookup.row_address(1000, 42, D_GPT2, 4) == 1000 + 129_024
    # against numpy's own layout: the byte distance between two rows' first elements
    e = np.zeros((50, D_GPT2), np.float32)
    assert e[42].__array_interface__["data"][0] - e.__array_interface__["data"][0] == off


def test_table_byte_offset_matches_numpy_layout():
    t = open_table("random:50257x768")
    assert t.byte_offset(42) == 0x1F800
    assert t.byte_offset(42, "float16") == 42 * D_GPT2 * 2


# -- the two paths give the same rows ------------------------------------------------


def test_cat_sat_is_a_gather_without_arithmetic():
    t = open_table("toy:cat-sat")
    ids = [tok.id for tok in t.tokenizer.encode("cat sat")]
    assert ids == [1, 2]
    e = np.array(
        [[0.10, -0.20, 0.05, 0.30], [0.44, 0.12, -0.08, 0.19], [-0.15, 0.33, 0.27, -0.05],
         [0.08, -0.02, 0.41, 0.22], [0.19, 0.19, -0.19, 0.05], [0.0, 0.0, 0.0, 0.0]],
        np.float32,
    )
    np.testing.assert_array_equal(lookup.gather(t.matrix(), ids), e[[1, 2]])


def test_five_rows_token_2():
    t = open_table("toy:five-rows")
    np.testing.assert_array_equal(t.row(2), np.float32([-0.78, 0.22, 0.05]))
    np.testing.assert_array_equal(lookup.onehot_matmul(t.matrix(), [2])[0], np.float32([-0.78, 0.22, 0.05]))


def test_gradient_batch_first_and_last_rows_equal():
    e = open_table("toy:gradient").matrix()
    out = lookup.gather(e, [3, 1, 3])
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(out[0], out[2])


def test_onehot_has_a_single_one_per_row():
    oh = lookup.onehot([3, 0, 3], 6)
    assert oh.shape == (3, 6)
    np.testing.assert_array_equal(oh.sum(axis=1), 1)
    np.testing.assert_array_equal(np.argmax(oh, axis=1), [3, 0, 3])


@settings(max_examples=60, deadline=None)
@given(
    v=st.integers(1, 300),
    d=st.integers(1, 40),
    batch=st.lists(st.integers(1, 4), min_size=1, max_size=2),
    data=st.data(),
)
def test_onehot_times_e_equals_the_row_exactly(v, d, batch, data):
    rng = np.random.default_rng(v * 1000 + d)
    e = rng.standard_normal((v, d)).astype(np.float32)
    shape = tuple(batch)
    ids = np.asarray(
        data.draw(st.lists(st.integers(0, v - 1), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    ).reshape(shape)
    g = lookup.gather(e, ids)
    o = lookup.onehot_matmul(e, ids)
    assert g.shape == shape + (d,)  # output shape does not depend on V
    np.testing.assert_array_equal(g, e[ids])
    np.testing.assert_array_equal(o, e[ids])  # exact: every other term is 0 * x
    # and with torch, independently of the module
    et = torch.from_numpy(e)
    it = torch.from_numpy(ids)
    assert torch.equal(torch.nn.functional.one_hot(it, v).float() @ et, et[it])


def test_out_of_range_ids_raise():
    e = np.zeros((6, 4), np.float32)
    with pytest.raises(IndexError):
        lookup.gather(e, [6])
    with pytest.raises(IndexError):
        lookup.onehot([-1], 6)
    t = open_table("toy:cat-sat")
    with pytest.raises(IndexError):
        t.row(6)
    with pytest.raises(TypeError):
        t.check_id(1.0)


def test_embedding_and_bias_free_linear_agree_in_outputs_and_gradients():
    torch.manual_seed(0)
    v, d = 50, 8
    e = torch.randn(v, d)
    emb = torch.nn.Embedding.from_pretrained(e.clone(), freeze=False)
    lin = torch.nn.Linear(v, d, bias=False)
    with torch.no_grad():
        lin.weight.copy_(e.T)
    ids = torch.tensor([[3, 1, 3, 7], [0, 49, 7, 7]])
    upstream = torch.randn(2, 4, d)
    out_e = emb(ids)
    out_l = lin(torch.nn.functional.one_hot(ids, v).float())
    assert torch.equal(out_e, out_l)
    (out_e * upstream).sum().backward()
    (out_l * upstream).sum().backward()
    # Linear's weight is E.T, so its gradient is the transpose
    torch.testing.assert_close(emb.weight.grad, lin.weight.grad.T, rtol=0, atol=1e-6)
    # the gradient is the scatter-add of the upstream rows (FACTS.md)
    expect = torch.zeros(v, d)
    expect.index_add_(0, ids.reshape(-1), upstream.reshape(-1, d))
    torch.testing.assert_close(emb.weight.grad, expect, rtol=0, atol=1e-6)


def test_gradient_batch_3_1_3_touches_only_rows_1_and_3():
    e = torch.from_numpy(open_table("toy:gradient").matrix().copy()).requires_grad_(True)
    ids = torch.tensor([3, 1, 3])
    out = torch.nn.functional.embedding(ids, e)
    w = torch.tensor([[1.0, 2.0, -1.0, 0.5], [0.3, -0.7, 2.0, 1.0], [-2.0, 0.25, 0.5, 3.0]])
    (out * w).sum().backward()
    g = e.grad
    nonzero = torch.nonzero(g.abs().sum(dim=1)).reshape(-1).tolist()
    assert nonzero == [1, 3]
    torch.testing.assert_close(g[3], w[0] + w[2])  # two contributions summed
    torch.testing.assert_close(g[1], w[1])
    assert not torch.equal(g[3], w[0]) and not torch.equal(g[3], w[2])


# -- compare_paths -----------------------------------------------------------------------


def test_compare_paths_equal_on_a_finite_table():
    e = np.random.default_rng(1).standard_normal((30, 5)).astype(np.float32)
    r = lookup.compare_paths(e, [4, 4, 29])
    assert r.equal and r.finite
    assert r.max_abs_diff == 0.0


def test_compare_paths_explains_an_inf():
    e = np.random.default_rng(2).standard_normal((30, 5)).astype(np.float32)
    e[17, 2] = np.inf
    # independent check of the trap: 0 * inf = nan in the one-hot product
    with np.errstate(invalid="ignore"):
        prod = lookup.onehot([4], 30) @ e
    assert np.isnan(prod[0, 2]) and np.isfinite(e[4]).all()
    with np.errstate(invalid="ignore"):
        r = lookup.compare_paths(e, [4])
    assert not r.equal
    assert not r.finite
    assert "inf" in r.message.lower() or "nan" in r.message.lower()
    assert "1 column" in r.message


# -- layouts per dtype, the real base address, the measurement job -----------------------


@pytest.mark.parametrize("dtype,size", [("float32", 4), ("float16", 2), ("bfloat16", 2), ("int8", 1)])
def test_row_layout_per_dtype_matches_numpy_and_torch(dtype, size):
    lay = lookup.row_layout(V_GPT2, D_GPT2, 42, dtype)
    assert lay.stride == D_GPT2 * size
    assert lay.offset == 42 * D_GPT2 * size
    assert lay.table_bytes == V_GPT2 * D_GPT2 * size
    t = torch.zeros((50, D_GPT2), dtype=getattr(torch, dtype))
    assert t[42].data_ptr() - t.data_ptr() == lay.offset
    assert t.stride(0) * t.element_size() == lay.stride


def test_row_layout_gpt2_token_42_float32_is_0x1f800():
    lay = lookup.row_layout(V_GPT2, D_GPT2, 42, "stored", "float32", 3072)
    assert (lay.stride, lay.offset) == (3_072, 129_024) == (3_072, 0x1F800)


def test_row_layout_of_q8_0_blocks_uses_row_bytes():
    # Q8_0: 32 values -> 32 int8 + a float16 scale = 34 bytes
    d = 64
    lay = lookup.row_layout(100, d, 7, "stored", "Q8_0", d // 32 * 34)
    assert lay.quantised and lay.stride == 68 and lay.offset == 7 * 68
    assert "34 bytes" in lay.note
    assert (lay.block_values, lay.block_bytes) == (32, 34) and d // 32 * 34 == lay.stride
    assert lookup.row_layout(100, d, 7, "float16").block_values == 0
    with pytest.raises(IndexError):
        lookup.row_layout(100, d, 100)


def test_stored_base_is_the_real_data_pointer():
    t = open_table("random:1000x16")
    buf = t.stored_buffer()
    arr = t.matrix()
    assert buf.address == arr.__array_interface__["data"][0]
    assert buf.address + lookup.row_layout(1000, 16, 42).offset == arr[42].__array_interface__["data"][0]
    assert buf.keep_alive is not None and "data_ptr" in buf.description


def test_compare_table_paths_on_real_tables():
    for spec in ("toy:robot", "random:2000x32"):
        t = open_table(spec)
        r = lookup.compare_table_paths(t, 1)
        assert r is not None and r.equal and r.finite


def test_measure_job_yields_progress_and_returns_a_measurement():
    table = open_table("toy:robot")
    gen = lookup.measure_lookup_job(table, batch_sizes=(1, 4), repeats=1)
    progress = []
    try:
        while True:
            progress.append(next(gen))
    except StopIteration as stop:
        result = stop.value
    assert all(isinstance(f, float) and isinstance(m, str) for f, m in progress)
    assert progress[-1][0] == 1.0
    assert isinstance(result, LookupMeasurement)
    assert (result.vocab_size, result.dim, result.stored_dtype) == (4, 3, table.dtype)
    assert [b.batch for b in result.batches] == [1, 4]
    for b in result.batches:
        assert b.agree
        assert b.ratio == pytest.approx(b.onehot_s / b.gather_s)
        assert b.onehot_flops == 2 * 4 * 3 * b.batch  # 2·V·d per token


def test_measurement_and_layout_of_a_real_small_table_match_numpy():
    """One table, every fact the view shows: one-hot @ E is E[i] exactly, the
    product costs 2·V·d FLOPs per token, row i starts at i·row_bytes."""
    table = open_table("toy:five-rows")
    e = table.matrix()
    v, d = e.shape
    for i in range(v):
        np.testing.assert_array_equal(lookup.onehot_matmul(e, [i])[0], e[i])
        lay = lookup.row_layout(v, d, i, "stored", table.dtype, table.row_bytes)
        assert (lay.offset == i * table.row_bytes
                == e[i].__array_interface__["data"][0] - e.__array_interface__["data"][0])
    np.testing.assert_array_equal(e[2], np.float32([-0.78, 0.22, 0.05]))  # FACTS.md, table D
    from explorer.core.bench import bench_lookup

    m = bench_lookup(table, batch_sizes=(1, 3), repeats=1)
    assert m.agree and m.finite
    assert [b.onehot_flops for b in m.batches] == [2 * v * d, 2 * v * d * 3]


def test_stored_base_job_gives_the_real_address():
    t = open_table("random:1000x16")
    gen = lookup.stored_base_job(t)
    assert isinstance(next(gen)[1], str)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    base = stop.value.value
    assert isinstance(base, lookup.StoredBase)
    assert base.address == t.matrix().__array_interface__["data"][0] and base.description
