"""`inspect --json --input-layer`: position ids, the input layer's facts and
the model's own input vectors, checked against the raw tensors with torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from explorer.cli import dispatch as cli
from tests.support import model_factory as mf  # noqa: E402
from tests.support.paths import REPO  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    cache, config = mf.explorer_dirs(tmp_path_factory)
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_CACHE_DIR", str(cache))
    mp.setenv("EXPLORER_CONFIG_DIR", str(config))
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONWARNINGS", None)
    yield env
    mp.undo()


def inspect_json(capsys, model: str, text: str) -> dict:
    rc = cli.main(["inspect", "--model", model, "--text", text, "--json", "--input-layer", "--k", "1"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_minilm_vectors_are_layer_norm_of_the_three_rows(capsys):
    import torch
    from safetensors.torch import load_file

    from explorer.core.sources import package_path

    data = inspect_json(capsys, "minilm", "the bank and the bank")
    info = data["input_layer"]
    assert (info["positions"], info["token_types"], info["layer_norm"], info["scale"]) == ("learned", True, True, 1.0)
    assert info["max_tokens"] == 512
    ids = [t["id"] for t in data["tokens"]]
    assert [t["position_id"] for t in data["tokens"]] == list(range(len(ids))) \
        == [t["position"] for t in data["tokens"]]
    w = load_file(str(package_path("minilm") / "model.safetensors"))
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
         + w["embeddings.token_type_embeddings.weight"][0])
    want = torch.nn.functional.layer_norm(x, (384,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"],
                                          eps=1e-12).numpy()
    np.testing.assert_allclose(np.array(info["vectors"]), want, atol=1e-5)
    # the two "bank"s: one token row, two input vectors
    first, second = [i for i, t in enumerate(data["tokens"]) if t["piece"] == "bank"]
    assert info["norms"]["token"][first] == info["norms"]["token"][second]
    assert info["vectors"][first] != info["vectors"][second]


def test_smollm2_vectors_are_its_token_rows(capsys):
    from explorer.core.sources import open_table

    data = inspect_json(capsys, "smollm2", "the bank")
    info = data["input_layer"]
    assert (info["positions"], info["token_types"], info["layer_norm"], info["scale"]) == ("rotary", False, False, 1.0)
    assert info["rotary"]["head_dim"] == 64 and info["rotary"]["source"] == "GGUF metadata"
    ids = [t["id"] for t in data["tokens"]]
    np.testing.assert_allclose(np.array(info["vectors"]), open_table("smollm2").rows(ids), atol=0)


@pytest.mark.parametrize("spec", ["default", "random:1000x64"])
def test_tables_without_positions(capsys, spec):
    text = "the cat sat" if spec == "default" else "42 7 42"
    data = inspect_json(capsys, spec, text)
    info = data["input_layer"]
    assert (info["positions"], info["token_types"], info["layer_norm"]) == ("none", False, False)
    assert np.array(info["vectors"]).shape == (3, data["dim"])
    assert [t["position_id"] for t in data["tokens"]] == [0, 1, 2]


def test_tokens_without_a_row_keep_their_position_and_get_no_vector(capsys):
    data = inspect_json(capsys, "random:100x8", "5 abc 7")
    info = data["input_layer"]
    assert [t["position_id"] for t in data["tokens"]] == [0, 1, 2]
    assert info["vectors"][1] is None and info["vectors"][0] is not None and info["vectors"][2] is not None


def test_readable_form_lists_norms(capsys):
    rc = cli.main(["inspect", "--model", "minilm", "--text", "bank", "--input-layer", "--k", "1"])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert "input vector = LayerNorm(token row + position row + token-type row 0)" in out
    assert "|layer_norm|" in out


def test_text_longer_than_the_position_table_is_one_error_line(cli_env):
    text = "word " * 600
    proc = subprocess.run([sys.executable, "-m", "explorer", "inspect", "--model", "minilm", "--text", text,
                           "--json", "--input-layer"], cwd=REPO, env=cli_env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "512 positions" in lines[0]
    assert "Traceback" not in proc.stderr
