"""Every command, any arguments (issue 23): argument vectors for every
subcommand, run in this process through the real ``main``. Each ends with
exit status 0, or with one ``error: ...`` line and status 2; never a
traceback, never past its deadline. The window (no subcommand) is left out:
it would open a window.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.cli.parser import build_parser
from tests.support.cli_fuzz import COMMANDS, CommandHung, argv_for, make_paths, run_cli
from tests.support.fuzzing import fuzz_settings

#: seconds one command may take (the slowest valid ones here: a few training steps, a t-SNE of 40 rows)
DEADLINE_S = 60.0


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    """The fuzz's files, and its current folder: a stray word taken as a path writes there."""
    base = tmp_path_factory.mktemp("cli-fuzz")
    mp = pytest.MonkeyPatch()
    mp.chdir(base)
    yield make_paths(base / "files")
    mp.undo()


def check_outcome(argv):
    try:
        got = run_cli(argv, DEADLINE_S)
    except CommandHung:
        pytest.fail(f"{argv!r} ran past {DEADLINE_S:g} s")
    assert got.code in (0, 2), (argv, got)
    assert "Traceback" not in got.err, (argv, got.err)
    if got.code == 2:
        lines = got.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and len(lines[0]) > len("error: "), (argv, got.err)
    return got


def test_every_subcommand_is_covered():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_of_every_command_exits_0(command):
    got = check_outcome([command, "--help"])
    assert got.code == 0 and "usage:" in got.out


@pytest.mark.parametrize("command", sorted(COMMANDS))
@fuzz_settings(6, long_share=0.2)
@given(data=st.data())
def test_any_arguments(paths, command, data):
    argv = data.draw(argv_for(command, paths), label="argv")
    check_outcome(argv)


@pytest.mark.parametrize("argv", [
    ["train", "--steps", "2", "--corpus", "/dev/zero"],
    ["inspect", "--model", "/dev/zero", "--text", "cat"],
    ["bench", "--lookup", "/dev/zero"],
    ["train", "--steps", "1", "--corpus", "/dev/null"],
    ["inspect", "--model", "default", "--text", "\udcff\udcfe caf\u00e9"],
])
def test_devices_and_surrogates_end_quickly(paths, argv):
    assert check_outcome(argv).code == 2 or argv[-1].startswith("\udcff")
