"""Errors: one line ``error: ...``, exit status 2 (explorer.cli.dispatch.main),
for bad files, bad arguments and failing tokenizers, in-process and in subprocesses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import model_factory as mf
from tests.support.cli import REPO, assert_one_error_line, call, cli_environment, cli_models, run


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    """Temporary cache/config folders and an HF cache holding one tiny model (tests/support/cli.py)."""
    yield from cli_environment(tmp_path_factory)


@pytest.fixture(scope="module")
def models(tmp_path_factory, cli_env):
    return cli_models(tmp_path_factory)


# --------------------------------------------------------------------------
# errors: one line, exit status 2
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(mf.BAD_FILES))
def test_bad_files_exit_2(capsys, cli_env, models, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = mf.make_bad_input(name, tmp_path, gpt2=models["gpt2"], sharded=models["sharded"], gguf_file=models["gguf"])
    rc, out, err = call(capsys, "inspect", "--model", str(path), "--text", "1")
    assert_one_error_line(rc, out, err)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (["inspect", "--model", "what is this?", "--text", "a"], "unknown model spec"),
        (["inspect", "--model", "toy:nope", "--text", "a"], "unknown toy table"),
        (["inspect", "--model", "random:0x5", "--text", "1"], "out of range"),
        (["inspect", "--model", "random:axb", "--text", "1"], "bad random spec"),
        (["inspect", "--model", "nobody/nothing", "--text", "1"], "Hugging Face cache"),
        (["inspect", "--model", "toy:robot", "--text", "robot", "--k", "0"], "--k must be at least 1"),
        (["inspect", "--model", "toy:robot"], "--text"),
        (["inspect", "--model", "", "--text", "a"], "no model given"),
        (["no-such-command"], "invalid choice"),
    ],
)
def test_bad_arguments_exit_2(capsys, cli_env, argv, pattern):
    rc, out, err = call(capsys, *argv)
    assert_one_error_line(rc, out, err)
    assert pattern in err


# --------------------------------------------------------------------------
# The real entry point, in subprocesses (few: each costs seconds of imports)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "--model", "/no/such/folder", "--text", "a"],
        ["inspect", "--model", "random:0x8", "--text", "1"],
    ],
)
def test_subprocess_errors(cli_env, argv):
    p = run(cli_env, *argv)
    assert_one_error_line(p.returncode, p.stdout, p.stderr)


_SPY_ON_NUMPY = """
import os, sys
seen = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not seen:
            seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
sys.meta_path.insert(0, Spy())
import runpy
sys.argv = ["explorer", "--help"]
try:
    runpy.run_module("explorer", run_name="__main__")
except SystemExit:
    pass
print(seen, file=sys.stderr)
"""


@pytest.mark.parametrize("own, expected", [(None, "4"), ("12", "12")])
def test_openblas_threads_stop_spinning_before_numpy_is_imported(cli_env, own, expected):
    """After each product OpenBLAS's threads spin for its next task (about 0.1 s of a core the window
    needs) unless told when to sleep before numpy loads it; a value the user set stays."""
    env = {k: v for k, v in cli_env["env"].items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if own is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = own
    p = subprocess.run([sys.executable, "-c", _SPY_ON_NUMPY], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "usage" in p.stdout  # the command line ran, and imported numpy on the way
    assert p.stderr.strip() == repr([expected])


# --------------------------------------------------------------------------
# Issue 11: texts and tables that crashed or took minutes
# --------------------------------------------------------------------------


def test_subprocess_rust_panic_is_one_line(cli_env, tmp_path):
    folder = mf.folder_with_tokenizer(
        tmp_path / "panics", mf.wordlevel_json({"[UNK]": 0, "a": 1}, pre_tokenizer=mf.BACKTRACKING_SPLIT))
    p = run(cli_env, "inspect", "--model", str(folder), "--text", "a" * 40 + "b")
    assert_one_error_line(p.returncode, p.stdout, p.stderr)
    assert "tokenizer failed on this text" in p.stderr and "panicked" not in p.stderr


def test_missing_unk_token_is_one_line(capsys, cli_env, tmp_path):
    folder = mf.folder_with_tokenizer(tmp_path / "nounk", mf.wordlevel_json({"a": 0, "b": 1}))
    rc, out, err = call(capsys, "inspect", "--model", str(folder), "--text", "a zzz")
    assert_one_error_line(rc, out, err)
    assert "Missing [UNK] token" in err
