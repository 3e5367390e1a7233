"""The parser: a --text starting with a dash is the text; a forgotten --text still says so."""

from __future__ import annotations

import json

import pytest

from explorer.cli import dispatch as cli
from tests.support.cli import assert_one_error_line, call, cli_environment


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    """Temporary cache/config folders and an HF cache holding one tiny model (tests/support/cli.py)."""
    yield from cli_environment(tmp_path_factory)


# --------------------------------------------------------------------------
# Issue 11: texts and tables that crashed or took minutes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["--text", "-the cat"], ["--text=-the cat"], ["--text", "-"]])
def test_text_starting_with_a_dash(capsys, cli_env, argv):
    rc, out, err = call(capsys, "inspect", "--model", "default", *argv, "--json")
    assert rc == 0, err
    data = json.loads(out)
    text = argv[-1].split("=", 1)[-1]
    assert "".join(t["text"] for t in data["tokens"] if not t["special"]).replace(" ", "") in text.replace(" ", "")


def test_forgotten_text_still_says_so(capsys, cli_env):
    rc, out, err = call(capsys, "inspect", "--model", "default", "--text", "--json")
    assert_one_error_line(rc, out, err)
    assert "--text: expected one argument" in err
    rc, out, err = call(capsys, "inspect", "--model", "default", "--text", "--")
    assert_one_error_line(rc, out, err)
    with pytest.raises(SystemExit):
        cli.main(["inspect", "--help"])
    assert "--text -x" in " ".join(capsys.readouterr().out.split())


def _commands() -> list[str]:
    import argparse

    from explorer.cli.parser import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


@pytest.mark.parametrize("command", [None, *_commands()])
def test_every_command_has_help(capsys, command):
    """--help prints the usage and exits 0 for the window and every command (analogy's crashed)."""
    argv = ["--help"] if command is None else [command, "--help"]
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: embedding-explorer") and (command is None or command in out.splitlines()[0])
