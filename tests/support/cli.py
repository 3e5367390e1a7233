"""What the command-line tests share (tests/cli): a temporary environment
holding one tiny model in an HF cache, a few model folders, and running the
command in-process or in a subprocess.

The environment and the models are generators/builders for fixtures: each
test module declares its own module-scoped fixtures from them, as in
tests/cli/test_inspect.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer.cli import dispatch as cli
from tests.support import model_factory as mf
from tests.support.paths import REPO


def cli_environment(tmp_path_factory):
    """Temporary cache/config folders (shared with tests/core, so the GGUF
    tokenizer of smollm2 is built once per session) and an HF cache holding
    one tiny model. Yields the environment for subprocesses."""
    cache, config = mf.explorer_dirs(tmp_path_factory)
    hub = tmp_path_factory.mktemp("cli-hub")
    snap = hub / "models--tiny--gpt" / "snapshots" / ("c" * 40)
    mf.build_model(snap, "gpt2", "float16", tied=False, tokenizer=mf.train_bpe(150), seed=3)
    (hub / "models--tiny--gpt" / "refs").mkdir()
    (hub / "models--tiny--gpt" / "refs" / "main").write_text("c" * 40)
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_CACHE_DIR", str(cache))
    mp.setenv("EXPLORER_CONFIG_DIR", str(config))
    mp.setenv("HF_HUB_CACHE", str(hub))
    env = dict(os.environ, HF_HUB_CACHE=str(hub), HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    env.pop("PYTHONWARNINGS", None)
    yield {"env": env, "hub": hub, "config": config, "snap": snap}
    mp.undo()


def cli_models(tmp_path_factory):
    """Model folders and a GGUF file, built once per module (after :func:`cli_environment`)."""
    base = tmp_path_factory.mktemp("cli-models")
    tok = mf.train_wordlevel(extra_words=60)
    mismatch = base / "mismatch"
    mf.build_model(mismatch, "llama", "float32", tied=True, tokenizer=tok, vocab=tok.get_vocab_size() - 40)
    return {
        "gpt2": mf.build_model(base / "gpt2", "gpt2", "float32", tied=True, seed=1),
        "sharded": mf.build_model(base / "sharded", "llama", "float32", tied=False, sharded=True, seed=2),
        "gguf": mf.build_gguf(base / "q8.gguf", "Q8_0", tied=True).path,
        "mismatch": mismatch,
        "mismatch_word": tok.id_to_token(tok.get_vocab_size() - 1),
    }


def call(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def run(cli_env, *argv, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv],
        cwd=REPO, env=cli_env["env"], capture_output=True, text=True, timeout=timeout,
    )


def assert_one_error_line(rc, out, err):
    assert rc == 2
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and len(lines[0]) > len("error: ") + 10
    assert out == ""
