"""Streamed neighbour search (explorer.core.geometry.nearest.iter_search) on a bfloat16
file read through its memory map, against brute force in numpy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.core.geometry.nearest import iter_search
from explorer.core.geometry.scan import cached_row_norms
from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table


@pytest.fixture(scope="module")
def bf16_table(tmp_path_factory):
    """8,200 x 1,024 bfloat16 (8.4 M values: not preloaded, so rows come from the file),
    with a zero row, a non-finite row and a row close to row 7."""
    import torch
    from safetensors.torch import save_file

    v, d = 8200, 1024
    gen = torch.Generator().manual_seed(3)
    e = (torch.randn(v, d, generator=gen) * 0.02).to(torch.bfloat16)
    e[11] = 0
    e[12, 0] = float("inf")
    e[13] = e[7] + e[8] * 0.1
    folder = tmp_path_factory.mktemp("bf16search")
    save_file({"model.embed_tokens.weight": e}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": v, "hidden_size": d}))
    return str(folder), e.float().double().numpy()


def brute_force(e: np.ndarray, q: np.ndarray, k: int, exclude=()):
    finite = np.isfinite(e).all(axis=1)
    norms = np.linalg.norm(np.where(finite[:, None], e, 0), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (np.where(finite[:, None], e, 0) @ q) / (norms * np.linalg.norm(q))
    cos[~finite | (norms == 0)] = -np.inf
    cos[list(exclude)] = -np.inf
    top = np.argsort(-cos, kind="stable")[:k]
    return top.tolist(), cos[top]


def test_first_search_is_exact_then_later_ones_read_the_stored_dtype(bf16_table):
    folder, e = bf16_table
    table = open_table(folder)
    assert table.dtype == "bfloat16" and not table.holds_matrix and cached_row_norms(table) is None
    queries = e[[7, 500, 8000]]
    excl = [[7], [500, 501], []]
    steps = []
    first = run_to_end(iter_search(table, queries, 6, excl), steps.append)
    assert steps and steps[-1][0] == pytest.approx(1.0)
    norms = cached_row_norms(table)  # the exact pass measured every row
    assert norms is not None and np.isnan(norms[12]) and norms[11] == 0
    np.testing.assert_allclose(norms[:11], np.linalg.norm(e[:11], axis=1), rtol=1e-6)
    second = run_to_end(iter_search(table, queries, 6, excl))
    for q, ex, a, b in zip(queries, excl, first, second):
        ids, cos = brute_force(e, q, 6, ex)
        assert [n.id for n in a] == ids and [n.id for n in b] == ids
        np.testing.assert_allclose([n.cosine for n in a], cos, atol=1e-5)
        np.testing.assert_allclose([n.cosine for n in b], cos, atol=1e-9)  # scored again from the rows
    assert second[0][0].id == 13  # the planted near row
    assert not {11, 12} & {n.id for found in second for n in found}


def test_a_zero_query_finds_nothing_and_the_others_still_do(bf16_table):
    folder, e = bf16_table
    table = open_table(folder)
    found = run_to_end(iter_search(table, np.stack([np.zeros(e.shape[1]), e[42]]), 3, [[], [42]]))
    assert found[0] == [] and [n.id for n in found[1]] == brute_force(e, e[42], 3, [42])[0]
