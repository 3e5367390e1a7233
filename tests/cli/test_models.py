"""`models`: the models this machine can open, in-process and through the real entry point."""

from __future__ import annotations

import json

import pytest

from explorer.core import sources
from explorer.core.sources import open_table
from tests.support.cli import call, cli_environment, cli_models, run


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    """Temporary cache/config folders and an HF cache holding one tiny model (tests/support/cli.py)."""
    yield from cli_environment(tmp_path_factory)


@pytest.fixture(scope="module")
def models(tmp_path_factory, cli_env):
    return cli_models(tmp_path_factory)


# --------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------


def test_models_json_in_process(capsys, cli_env, models):
    recent = cli_env["config"] / "recent.json"
    recent.write_text(json.dumps([str(models["sharded"].folder), "/no/such/model"]))
    try:
        rc, out, err = call(capsys, "models", "--json")
        rc2, readable, _ = call(capsys, "models")
    finally:
        recent.unlink()
    assert rc == 0 and err == ""
    infos = {i["spec"]: i for i in json.loads(out)}
    for spec in ["default"] + [f"toy:{n}" for n in sources.TOY_NAMES]:
        t = open_table(spec)
        assert (infos[spec]["vocab_size"], infos[spec]["dim"], infos[spec]["dtype"]) == (t.vocab_size, t.dim, t.dtype)
        assert infos[spec]["error"] is None
    assert (infos["minilm"]["vocab_size"], infos["minilm"]["dim"]) == (30_522, 384)
    assert (infos["smollm2"]["vocab_size"], infos["smollm2"]["dim"], infos["smollm2"]["tied"]) == (49_152, 576, True)
    assert infos["tiny/gpt"]["origin"] == "cache" and infos["tiny/gpt"]["dtype"] == "float16"
    assert infos["random:50257x768"]["origin"] == "random"
    sharded = infos[str(models["sharded"].folder)]
    assert sharded["origin"] == "recent" and sharded["tied"] is False
    assert infos["/no/such/model"]["error"]
    assert rc2 == 0 and "minilm" in readable and "30,522" in readable and "cannot open" in readable


# --------------------------------------------------------------------------
# The real entry point, in subprocesses (few: each costs seconds of imports)
# --------------------------------------------------------------------------


def test_subprocess_models_json(cli_env):
    p = run(cli_env, "models", "--json")
    assert p.returncode == 0, p.stderr
    infos = {i["spec"]: i for i in json.loads(p.stdout)}
    assert {"default", "toy:cat-sat", "minilm", "smollm2", "tiny/gpt"} <= set(infos)
    assert infos["tiny/gpt"]["origin"] == "cache"  # found through HF_HUB_CACHE
    assert infos["smollm2"]["dtype"] == "Q8_0"
