"""The backward pass of a lookup: dL/dE = one_hot(x)ᵀ G against torch autograd."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.lookup.backward import IdsOutsideTable, lookup_backward, text_ids, upstream_gradient
from explorer.core.sources import open_table


def autograd_grad(table: np.ndarray, ids, upstream: np.ndarray) -> np.ndarray:
    """dL/dE for L = Σ_t ⟨G_t, E[ids_t]⟩, by torch autograd through nn.functional.embedding."""
    e = torch.tensor(table, dtype=torch.float64, requires_grad=True)
    looked_up = torch.nn.functional.embedding(torch.as_tensor(ids, dtype=torch.long), e)
    (looked_up * torch.as_tensor(upstream, dtype=torch.float64)).sum().backward()
    return e.grad.numpy()


def test_toy_b_batch_3_1_3_gives_rows_1_and_3_only():
    """FACTS.md, toy table B: ids [3, 1, 3] -> rows 1 and 3; row 3 is the sum of two contributions."""
    table = open_table("toy:gradient")
    g = upstream_gradient(3, table.dim, seed=0)
    back = lookup_backward([3, 1, 3], g, table.vocab_size)
    assert back.rows.tolist() == [1, 3] and back.positions == ((1,), (0, 2))
    np.testing.assert_allclose(back.row_grad(3), g[0].astype(float) + g[2])
    np.testing.assert_array_equal(back.row_grad(1), g[1].astype(float))
    assert back.repeated() == [1] and back.zero_rows == 4 == table.vocab_size - back.distinct_ids
    dense = back.dense()
    assert not dense[[0, 2, 4, 5]].any()  # exactly zero, not small
    np.testing.assert_allclose(dense, autograd_grad(table.matrix(), [3, 1, 3], g), atol=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(ids=st.lists(st.integers(0, 11), min_size=1, max_size=30), seed=st.integers(0, 2**32 - 1))
def test_scatter_add_matches_autograd(ids, seed):
    table = np.random.default_rng(1).standard_normal((12, 5)).astype(np.float32)
    g = upstream_gradient(len(ids), 5, seed)
    back = lookup_backward(ids, g, 12)
    ref = autograd_grad(table, ids, g)
    np.testing.assert_allclose(back.dense(), ref, rtol=1e-6, atol=1e-6)
    # rows with gradient = the distinct ids; every other row exactly zero
    assert back.rows.tolist() == sorted(set(ids)) == np.flatnonzero(ref.any(axis=1)).tolist()
    assert back.zero_rows == 12 - len(set(ids))
    for row, where in zip(back.rows, back.positions):
        assert [ids[t] for t in where] == [row] * len(where)
        assert len(where) == ids.count(int(row))


def test_the_bundled_model_on_a_sentence_with_a_repeated_word():
    table = open_table("default")
    ids = text_ids(table, "the king and the queen sat on the mat")
    g = upstream_gradient(ids.size, table.dim, seed=7)
    back = lookup_backward(ids, g, table.vocab_size)
    the = table.tokenizer.id_of("the")
    k = back.rows.tolist().index(the)
    assert len(back.positions[k]) == 3
    np.testing.assert_allclose(back.grad[k], g[list(back.positions[k])].astype(float).sum(axis=0))
    np.testing.assert_allclose(back.dense(), autograd_grad(table.matrix(), ids, g), atol=1e-6)
    assert back.rows.size == len(set(ids.tolist())) < ids.size


def test_the_upstream_gradient_is_seeded():
    a, b, c = upstream_gradient(4, 3, 0), upstream_gradient(4, 3, 0), upstream_gradient(4, 3, 1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 3) and a.dtype == np.float32 and not np.array_equal(a, c)


def test_ids_outside_the_table_are_refused():
    with pytest.raises(IdsOutsideTable, match="9"):
        lookup_backward([1, 9], np.ones((2, 3)), 6)
    with pytest.raises(IdsOutsideTable):
        lookup_backward([-1], np.ones((1, 3)), 6)
    with pytest.raises(ValueError):
        lookup_backward([1, 2], np.ones((3, 3)), 6)
    with pytest.raises(IdsOutsideTable, match="past the last row"):
        text_ids(open_table("random:10x4"), "3 1 99")


def test_partial_sums_grow_position_by_position():
    ids = [4, 2, 4, 4, 0]
    g = upstream_gradient(len(ids), 3, seed=5)
    back = lookup_backward(ids, g, 6)
    assert not back.partial(0).any()
    np.testing.assert_allclose(back.partial(len(ids)), back.grad)
    four = back.rows.tolist().index(4)
    np.testing.assert_allclose(back.partial(3)[four], g[0].astype(float) + g[2])
    assert [back.row_of_position(t) for t in range(len(ids))] == [back.rows.tolist().index(i) for i in ids]


def test_partial_sums_of_the_first_columns():
    g = upstream_gradient(3, 5, seed=2)
    back = lookup_backward([1, 1, 0], g, 4)
    np.testing.assert_allclose(back.partial(3, columns=2), back.grad[:, :2])
    assert back.partial(2, columns=99).shape == (2, 5)
