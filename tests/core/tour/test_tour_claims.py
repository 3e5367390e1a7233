"""Every claim of the guided tour (explorer.core.tour.steps) against the table its step opens:
numpy, torch and sklearn recompute each figure the step's words quote."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from explorer.cli import dispatch as cli
from explorer.core.lookup.backward import upstream_gradient
from explorer.core.sources import open_table
from explorer.core.tokens.text import tokenize_text
from explorer.core.tokens.words import resolve_word
from explorer.core.tour.steps import (
    ANALOGIES,
    STEPS,
    TOUR_TRAINING_STEPS,
    analogy_words,
    claim_for,
)
from explorer.core.training.charts import TrainingHistory
from explorer.core.training.corpus import synthetic_corpus
from explorer.core.training.model import train

pytestmark = pytest.mark.usefixtures("one_torch_thread")

STEP = {s.key: s for s in STEPS}


@pytest.fixture(scope="module")
def tables():
    cache = {}

    def get(spec):
        if spec not in cache:
            cache[spec] = open_table(spec)
        return cache[spec]

    return get


def _claim(tables, key):
    step = STEP[key]
    table = tables(step.spec)
    text = step.text if step.text is not None else table.example_text
    tokenized = tokenize_text(table.tokenizer, text, table.vocab_size)
    return table, tokenized, claim_for(step, table, tokenized)


def _cos(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_about_ten_steps_each_opening_a_view_and_pointing_at_something():
    assert 9 <= len(STEPS) <= 12 and len({s.key for s in STEPS}) == len(STEPS)
    assert all(s.view and s.target and s.title for s in STEPS)
    assert STEPS[0].spec == "toy:cat-sat" and STEPS[0].text == "cat sat"


def test_step_rows_cat_sat(tables):
    table, _tok, claim = _claim(tables, "rows")
    assert claim.fact("ids") == (1, 2)
    np.testing.assert_array_equal(claim.fact("rows"), table.matrix()[[1, 2]])
    assert "[0.44, 0.12, -0.08, 0.19]" in claim.text and "rows 1 and 2" in claim.text


def test_step_onehot_counts_flops(tables):
    table, _tok, claim = _claim(tables, "onehot")
    v, d = table.vocab_size, table.dim
    assert claim.fact("flops") == 2 * v * d == 48 and claim.fact("zero_multiplies") == (v - 1) * d
    assert claim.fact("offset") == 1 * d * table.matrix().itemsize == 16
    assert "48 FLOPs" in claim.text


def test_step_address_of_token_42_in_a_gpt2_shaped_table(tables):
    table, _tok, claim = _claim(tables, "address")
    assert (table.vocab_size, table.dim) == (50257, 768)
    assert claim.fact("id") == 42
    assert claim.fact("offset") == 42 * 768 * 4 == 129_024 and claim.fact("stride") == 3_072
    assert "129,024 = 0x1F800" in claim.text and "77,194,752 FLOPs" in claim.text


def test_step_cost_card(tables):
    table, _tok, claim = _claim(tables, "cost")
    n = table.vocab_size * table.dim
    assert claim.fact("params") == n == 38_597_376
    assert claim.fact("bytes32") == 4 * n and claim.fact("bytes16") == 2 * n
    assert "154.39 MB" in claim.text and "77.19 MB" in claim.text


def test_step_why_vectors_quotes_the_tables_ids_and_cosines(tables):
    table, _tok, claim = _claim(tables, "why")
    words, ids = claim.fact("words"), claim.fact("ids")
    assert ids == tuple(resolve_word(table.tokenizer, w) for w in words)
    rows = table.matrix()[list(ids)]
    assert claim.fact("cos_ab") == pytest.approx(_cos(rows[0], rows[1]), abs=1e-6)
    assert claim.fact("cos_ac") == pytest.approx(_cos(rows[0], rows[2]), abs=1e-6)
    assert f"|{words[1]} − {words[0]}| = {abs(ids[1] - ids[0])}" in claim.text and "√2 = 1.414" in claim.text


def test_step_random_cosines_follow_n_0_1_over_d(tables):
    table, _tok, claim = _claim(tables, "random")
    d = table.dim
    assert claim.fact("theory_std") == pytest.approx(1 / np.sqrt(d))
    # an independent sample of random pairs agrees with the quoted spread
    rng = np.random.default_rng(12345)
    a, b = rng.standard_normal((2, 4000, d))
    cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert claim.fact("random_std") == pytest.approx(cos.std(), rel=0.06)
    assert claim.fact("within_bound") == pytest.approx(0.997, abs=0.004)
    assert f"{1 / np.sqrt(d):.4f}" in claim.text


def test_step_projection_silhouette_and_analogy_from_the_table(tables):
    from sklearn.metrics import silhouette_score

    from explorer.core.sources.loading import ClassIndex

    table, _tok, claim = _claim(tables, "projection")
    classes = ClassIndex.from_table(table)
    keep = classes.of >= 0
    expected = silhouette_score(table.matrix()[keep].astype(np.float64), classes.of[keep], metric="cosine")
    assert claim.fact("silhouette") == pytest.approx(expected, abs=1e-6)
    assert f"{expected:+.2f}" in claim.text
    words = analogy_words(table)
    if words is None:  # the words are not rows: the step says so and points at the clusters instead
        assert claim.fact("analogy") is None and "cannot run here" in claim.text
        assert any(resolve_word(table.tokenizer, w) is None for w in ANALOGIES[0])
        return
    a, b, c, want = (resolve_word(table.tokenizer, w) for w in words)
    m = table.matrix().astype(np.float64)
    u = m / np.linalg.norm(m, axis=1, keepdims=True)
    target = u[a] - u[b] + u[c]
    scores = u @ target / np.linalg.norm(target)
    scores[[a, b, c]] = -np.inf
    assert claim.fact("answers")[0] == int(np.argmax(scores))


def test_step_backward_is_a_scatter_add_checked_with_torch(tables):
    table, tok, claim = _claim(tables, "backward")
    ids = claim.fact("ids")
    assert ids == (3, 1, 3)
    g = upstream_gradient(len(ids), table.dim)
    np.testing.assert_array_equal(claim.fact("upstream"), g)
    e = torch.tensor(table.matrix(), dtype=torch.float64, requires_grad=True)
    (torch.nn.functional.embedding(torch.tensor(ids), e) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(claim.fact("grad"), e.grad.numpy(), atol=1e-12)
    assert claim.fact("rows_with_gradient") == (1, 3) and claim.fact("repeated") == 3
    np.testing.assert_allclose(claim.fact("grad")[3], g[0].astype(np.float64) + g[2])
    assert "only rows 1 and 3 get a gradient" in claim.text


def test_step_backward_sums_unrounded_terms_as_grad_json_does(tables, capsys):
    """Issue 25, item 2: the sum is taken before rounding, and it is the
    gradient ``grad --json`` prints for the same batch (the heatmap's)."""
    table, tok, claim = _claim(tables, "backward")
    assert cli.main(["grad", "--model", table.spec, "--text", "3 1 3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ids"] == list(claim.fact("ids"))
    np.testing.assert_allclose(claim.fact("upstream"), data["upstream"], atol=1e-7)
    truth = np.asarray(data["grad"]["3"])
    np.testing.assert_allclose(claim.fact("grad")[3], truth, atol=1e-7)
    shown = claim.text.rsplit(" = ", 1)[1]
    numbers = [float(x) for x in shown.strip(" .[]…").replace("…", "").split(",") if x.strip()]
    assert numbers == [round(float(x), 3) for x in truth[:len(numbers)]]
    up = np.asarray(data["upstream"])
    rounded_sum = np.round(up[0], 2) + np.round(up[2], 2)  # what adding two printed terms would give
    assert not np.allclose(np.round(rounded_sum[:4], 3), np.round(truth[:4], 3))


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_sentences=2000)


@pytest.mark.parametrize("key", ["untied", "tied"])
def test_training_steps_speak_from_the_runs_history(corpus, key):
    step = STEP[key]
    assert step.training.steps == TOUR_TRAINING_STEPS
    cfg = dataclasses.replace(step.training, steps=40, dim=16, batch_size=32)
    h = TrainingHistory(corpus.counts())
    h.extend(train(corpus.ids, corpus.vocab_size, cfg))
    claim = claim_for(dataclasses.replace(step, training=cfg), history=h)
    v = corpus.vocab_size
    mean = 100 * h.series("input_grad_rows").mean() / v
    assert claim.fact("mean_grad_pct") == pytest.approx(mean) and f"{mean:.1f} %" in claim.text
    if cfg.tied:
        assert claim.fact("grad_rows_min") == v and claim.fact("changed_rows_min") == v
        assert f"all {v:,} of the {v:,} rows had a gradient" in claim.text and "every row at every step" in claim.text
    else:
        assert claim.fact("grad_rows_min") < v and "only" in claim.text


def test_step_context_one_row_then_the_first_layer(tables):
    table, _tok, claim = _claim(tables, "context")
    word = claim.fact("word")
    tid = resolve_word(table.tokenizer, word)
    assert claim.fact("id") == tid and claim.fact("same_id") and claim.fact("rows_equal")
    assert f"“{word}” is id {tid} in both" in claim.text
    if word != "bank":
        assert "no “bank”" in claim.text
    assert claim.fact("cosine_after") < 0.999 and f"{claim.fact('cosine_after'):.3f}" in claim.text
