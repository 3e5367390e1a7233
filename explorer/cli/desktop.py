"""``embedding-explorer --install-desktop``: a desktop entry for this user, so
the app appears in the desktop's menu and launcher with its icon.

It writes ``$XDG_DATA_HOME/applications/embedding-explorer.desktop`` (by
default ~/.local/share) following the freedesktop.org Desktop Entry
Specification, and copies the icon beside the user's other icons
(``icons/hicolor/scalable/apps``). ``Exec`` is the installed command of the
environment this runs in, so the entry starts this installation.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from explorer.cli.errors import CliError

__all__ = ["add_desktop_arguments", "cmd_install_desktop", "DesktopEntry", "install_desktop_entry", "exec_line"]

APP_ID = "embedding-explorer"
COMMAND = "embedding-explorer"
#: characters that make an Exec argument need quoting (Desktop Entry Specification, "The Exec key")
_RESERVED = set(' \t\n"\'\\><~|&;$*?#()`')


def add_desktop_arguments(p) -> None:
    p.add_argument("--install-desktop", action="store_true",
                   help="write a desktop entry (menu and launcher, with the icon) for this user, then exit")


@dataclass(frozen=True)
class DesktopEntry:
    """What :func:`install_desktop_entry` wrote."""

    entry: Path
    icon: Path
    exec_line: str


def _quoted(arg: str) -> str:
    arg = arg.replace("%", "%%")  # a lone % starts a field code
    if not any(ch in _RESERVED for ch in arg):
        return arg
    escaped = "".join("\\" + ch if ch in '"`$\\' else ch for ch in arg)
    return f'"{escaped}"'


def exec_line() -> str:
    """The Exec value that starts this installation: its console command
    beside the running interpreter, the one on PATH, or ``python -m explorer``."""
    beside = Path(sys.executable).parent / COMMAND
    if beside.is_file() and os.access(beside, os.X_OK):
        argv = [str(beside)]
    elif shutil.which(COMMAND):
        argv = [shutil.which(COMMAND)]
    else:
        argv = [sys.executable, "-m", "explorer"]
    return " ".join(_quoted(a) for a in argv)


def _data_home() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir())


def install_desktop_entry(data_home: Path | None = None) -> DesktopEntry:
    """Write the desktop entry and its icon under ``data_home`` (the user's
    XDG data folder by default); an entry already there is replaced.

    Raises
    ------
    CliError
        Off Linux and the BSDs (desktop entries are a freedesktop.org
        convention), or when the folder cannot be written.
    """
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        raise CliError(f"--install-desktop writes a freedesktop.org desktop entry (Linux, BSD); this is "
                       f"{sys.platform}, so start the app with `{COMMAND}`")
    from explorer.core.sources.common import resources_dir

    home = Path(data_home) if data_home is not None else _data_home()
    source_icon = resources_dir() / "icon.svg"
    icon = home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    entry = home / "applications" / f"{APP_ID}.desktop"
    line = exec_line()
    text = "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",
        "Name=Token Embedding Explorer",
        "GenericName=Embedding matrix explorer",
        "Comment=See and understand token embedding matrices",
        f"Exec={line}",
        f"Icon={icon}",
        "Terminal=false",
        "Categories=Science;ArtificialIntelligence;DataVisualization;",
        "Keywords=embedding;token;transformer;tokenizer;matrix;",
        "",
    ])
    try:
        icon.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_icon, icon)
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, entry)
    except OSError as exc:
        raise CliError(f"cannot write the desktop entry under {home}: {exc.strerror or exc}") from None
    return DesktopEntry(entry, icon, line)


def cmd_install_desktop(_args) -> int:
    done = install_desktop_entry()
    print(f"wrote {done.entry}")
    print(f"icon  {done.icon}")
    print(f"runs  {done.exec_line}")
    return 0
