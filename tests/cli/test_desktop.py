"""--install-desktop writes a valid desktop entry for the user; --version
reads the installed package's metadata."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import explorer
from explorer.core.sources import resources_dir
from tests.support.paths import REPO


def _read_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive in desktop entries
    parser.read_string(path.read_text(encoding="utf-8"))
    assert parser.sections() == ["Desktop Entry"]
    return dict(parser["Desktop Entry"])


def test_install_desktop_writes_an_entry_that_runs_this_installation(tmp_path):
    data = tmp_path / "xdg-data"
    env = dict(os.environ, XDG_DATA_HOME=str(data), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "explorer", "--install-desktop"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    desktop = data / "applications" / "embedding-explorer.desktop"
    assert f"wrote {desktop}" in out.stdout
    entry = _read_entry(desktop)
    for key in ("Type", "Name", "Exec", "Icon", "Terminal", "Categories"):
        assert entry.get(key), key
    assert entry["Type"] == "Application" and entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")
    validator = shutil.which("desktop-file-validate")  # desktop-file-utils, where installed
    if validator:
        checked = subprocess.run([validator, str(desktop)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and not checked.stdout.strip(), checked.stdout + checked.stderr
    # Exec names the installed command of this environment (or this interpreter with -m explorer)
    argv = shlex.split(entry["Exec"])
    command = Path(sys.executable).parent / "embedding-explorer"
    assert argv == [str(command)] if command.is_file() else argv[:1] == [sys.executable]
    run = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0 and run.stdout.split()[-1] == explorer.__version__
    # Icon is a file of the user's icon folder: the app's own icon
    icon = Path(entry["Icon"])
    assert icon.is_absolute() and icon.is_relative_to(data)
    assert icon.read_bytes() == (resources_dir() / "icon.svg").read_bytes()
    # a second run replaces the entry, leaving no temporary file behind
    again = subprocess.run([sys.executable, "-m", "explorer", "--install-desktop"], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path, env=env)
    assert again.returncode == 0 and sorted(p.name for p in desktop.parent.iterdir()) == [desktop.name]


def test_install_desktop_into_a_folder_that_cannot_be_written_is_one_error_line(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    env = dict(os.environ, XDG_DATA_HOME=str(blocker), PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-m", "explorer", "--install-desktop"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env=env)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: cannot write the desktop entry under") and out.stderr.count("\n") == 1


def test_version_comes_from_the_package_metadata(capsys):
    from explorer.cli import dispatch

    assert explorer.__version__ == version("embedding-explorer")
    try:
        dispatch.main(["--version"])
    except SystemExit as done:
        assert done.code == 0
    assert capsys.readouterr().out.strip() == f"embedding-explorer {explorer.__version__}"


def test_the_window_has_the_apps_icon(qtbot):
    from explorer.app import make_app

    app = make_app()
    assert not app.windowIcon().isNull()
    assert app.windowIcon().pixmap(64, 64).width() == 64
