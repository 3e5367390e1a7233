"""The Similarity view's matrices (explorer.core.similarity.regimes) against numpy/torch and FACTS.md."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.torch import save_file

from explorer.core.matrix.cell_format import MAX_DECIMALS, cell_format
from explorer.core.similarity import regimes as similarity
from explorer.core.sources import open_table


@pytest.fixture(scope="module")
def robot():
    return open_table("toy:robot")


def test_robot_cosines_dots_and_distances_from_facts(robot):
    ids = [robot.tokenizer.id_of(w) for w in ("robot", "arm", "box", "tool")]
    m = similarity.similarity_matrices(robot, ids, "cosine")
    assert m.ids == tuple(ids) and m.labels == ("robot", "arm", "box", "tool") and m.n == 4
    # FACTS.md: cos = 0.995, 0, -0.316
    assert round(m.learned[0, 1], 3) == 0.995 and abs(m.learned[0, 2]) < 1e-12 and round(m.learned[0, 3], 3) == -0.316
    x = torch.from_numpy(robot.rows(ids)).double()
    cos = torch.nn.functional.cosine_similarity(x[:, None], x[None], dim=-1).numpy()
    np.testing.assert_allclose(m.learned, cos, atol=1e-12)
    assert m.levels == (-1.0, 1.0) and m.signed and m.zeroed == ()
    dot = similarity.similarity_matrices(robot, ids, "dot")
    assert dot.learned[0, 1] == pytest.approx(1.7) and dot.learned[0, 3] == pytest.approx(-0.5)
    assert dot.levels == pytest.approx((-2.0, 2.0))  # robot·robot = 2 is the largest
    euc = similarity.similarity_matrices(robot, ids, "euclidean")
    np.testing.assert_allclose(euc.learned, torch.cdist(x, x).numpy(), atol=1e-9)
    assert not euc.signed and euc.levels == (0.0, pytest.approx(torch.cdist(x, x).max().item()))


def test_ids_and_one_hot_regimes(robot):
    ids = [3, 0, 2]
    m = similarity.similarity_matrices(robot, ids)
    a = np.array(ids, float)
    np.testing.assert_array_equal(m.id_distance, np.abs(a[:, None] - a[None]))
    oh = np.eye(robot.vocab_size)[ids]
    np.testing.assert_allclose(m.one_hot, np.linalg.norm(oh[:, None] - oh[None], axis=-1))
    assert m.id_levels == (0.0, 3.0) and m.one_hot_levels == (0.0, 2.0)
    assert m.index(2) == 2 and m.index(1) == -1


def test_nonfinite_rows_are_counted_as_zero(tmp_path):
    w = torch.tensor([[1.0, 0.0], [float("inf"), 1.0], [0.0, 1.0]])
    save_file({"embed_tokens.weight": w}, str(tmp_path / "inf.safetensors"))
    t = open_table(str(tmp_path / "inf.safetensors"))
    for metric in similarity.METRICS:
        m = similarity.similarity_matrices(t, [0, 1, 2], metric)
        assert np.isfinite(m.learned).all() and m.zeroed == (1,)
    m = similarity.similarity_matrices(t, [0, 1, 2], "dot")
    assert m.learned[1, 2] == pytest.approx(1.0)  # [0, 1] · [0, 1]: the inf counted as 0


def test_empty_and_unknown_metric(robot):
    m = similarity.similarity_matrices(robot, [])
    assert m.n == 0 and m.learned.shape == (0, 0) and m.levels == (-1.0, 1.0)
    with pytest.raises(ValueError, match="unknown metric"):
        similarity.similarity_matrices(robot, [0], "manhattan")


def test_matrix_token_ids_text_then_added_tokens():
    t = open_table("default")
    toks = t.tokenizer.encode("the cat the dog")
    dog, cat, the = (t.tokenizer.id_of(w) for w in ("dog", "cat", "the"))
    ids = similarity.matrix_token_ids(toks, [dog, 5, t.vocab_size, -1], t.vocab_size)
    assert ids[:3] == (the, cat, dog) and ids[3] == 5 and len(ids) == 4  # distinct, in range, in order
    assert all(not tok.special or tok.id not in ids for tok in toks)
    capped = similarity.matrix_token_ids(toks, range(t.vocab_size), t.vocab_size, limit=7)
    assert len(capped) == 7 and capped[:3] == (the, cat, dog) and len(set(capped)) == 7


def test_the_job_returns_the_same_matrices_and_says_what_is_cheap(robot):
    gen = similarity.similarity_job(robot, [0, 1, 2], "dot")
    fraction, message = next(gen)
    assert fraction == 0.0 and "3 tokens" in message
    with pytest.raises(StopIteration) as stop:
        next(gen)
    np.testing.assert_array_equal(stop.value.value.learned,
                                  similarity.similarity_matrices(robot, [0, 1, 2], "dot").learned)
    assert similarity.is_cheap(200, 200) and similarity.is_cheap(44, 4096)
    assert not similarity.is_cheap(200, 4096) and not similarity.is_cheap(150, 768)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 12), st.integers(1, 16), st.sampled_from(similarity.METRICS), st.integers(0, 10_000))
def test_matrices_are_symmetric_and_within_their_levels(n, d, metric, seed):
    t = open_table(f"random:{n}x{d}:{seed}")
    m = similarity.similarity_matrices(t, list(range(n)), metric)
    x = t.rows(list(range(n))).astype(np.float64)
    expected = {"cosine": x @ x.T / np.outer(np.linalg.norm(x, axis=1), np.linalg.norm(x, axis=1)),
                "dot": x @ x.T, "euclidean": np.linalg.norm(x[:, None] - x[None], axis=-1)}[metric]
    np.testing.assert_allclose(m.learned, expected, atol=1e-6)
    np.testing.assert_allclose(m.learned, m.learned.T, atol=1e-9)
    lo, hi = m.levels
    assert (m.learned >= lo - 1e-9).all() and (m.learned <= hi + 1e-9).all()
    if metric == "euclidean":
        np.testing.assert_allclose(np.diag(m.learned), 0, atol=1e-6)
    fmt = cell_format(m.learned, metric, n)
    assert 0 <= fmt.decimals <= MAX_DECIMALS
    # every cell written at the same precision
    assert len({len(fmt(v).split(".")[-1]) for v in m.learned.ravel()}) == 1 or fmt.decimals == 0
