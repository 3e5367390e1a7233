"""`inspect --json --output-layer`: each token's row of the output matrix,
checked against transformers' own get_output_embeddings()."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support import model_factory as mf
from tests.support.cli import call, cli_environment


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    yield from cli_environment(tmp_path_factory)


def _inspect(capsys, spec, text):
    rc, out, err = call(capsys, "inspect", "--model", spec, "--text", text, "--json", "--output-layer")
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("tied", [False, True])
def test_output_rows_are_the_models_own(capsys, tmp_path, tied):
    from transformers import LlamaForCausalLM

    built = mf.build_model(tmp_path / "m", "llama", tied=tied, tokenizer=mf.train_bpe(120), seed=3)
    data = _inspect(capsys, str(built.folder), "cat sat")
    w_out = LlamaForCausalLM.from_pretrained(str(built.folder)).get_output_embeddings().weight.detach().numpy()
    assert data["tied"] is tied and data["output_layer"]["tying"] == ("tied" if tied else "not tied")
    assert data["tokens"]
    for tok in data["tokens"]:
        assert np.array_equal(np.asarray(tok["output_row"], np.float32), w_out[tok["id"]])
        assert (tok["output_row"] == tok["row"]) is tied


def test_smollm2_output_rows_are_its_input_rows(capsys):
    data = _inspect(capsys, "smollm2", "Hello world")
    assert data["tied"] is True and data["output_layer"]["tensor"] == "token_embd.weight"
    assert all(t["output_row"] == t["row"] for t in data["tokens"])


def test_an_encoder_has_no_output_rows(capsys):
    data = _inspect(capsys, "minilm", "hello")
    assert data["tied"] is None and data["output_layer"]["tying"] == "no output layer"
    assert all(t["output_row"] is None for t in data["tokens"])
    assert any("No output matrix" in n for n in data["notes"])
