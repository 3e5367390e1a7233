"""Paths given on the command line, checked before any work starts: a folder
to write (build-default --out, train --save) and a text file to read
(train --corpus). A device, a folder where a file is wanted, a path whose
bytes are not UTF-8 (from invalid bytes in argv) or a read-only place gives
one ``error:`` line at once, not after minutes of training, and never a read
of /dev/zero that does not end."""

from __future__ import annotations

import os
import stat

from explorer.cli.errors import CliError

__all__ = ["writable_folder", "read_text_file"]


def _shown(path: str) -> str:
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _utf8(path: str, option: str) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise CliError(f"{option} {_shown(path)}: the path has bytes that are not UTF-8; "
                       "choose a folder whose name is plain text") from None


def writable_folder(path: str, option: str) -> str:
    """``path`` as a folder that exists (made if missing) and can be written; raises CliError."""
    if not path.strip():
        raise CliError(f"{option} needs a folder name")
    _utf8(path, option)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise CliError(f"{option} {_shown(path)}: a file is already there; choose a folder") from None
    except OSError as exc:
        raise CliError(f"{option} {_shown(path)}: cannot make this folder ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CliError(f"{option} {_shown(path)}: this folder cannot be written; choose another")
    return path


def read_text_file(path: str, option: str, max_bytes: int) -> str:
    """The first ``max_bytes`` of a regular file, decoded as UTF-8 (bad bytes
    replaced); a folder, a device or a pipe is refused. Raises CliError."""
    if not path.strip():
        raise CliError(f"{option} needs a file name")
    try:
        mode = os.stat(path).st_mode  # before open: opening a pipe would wait for a writer
        if stat.S_ISDIR(mode):
            raise CliError(f"{option} {_shown(path)}: is a folder; give a text file")
        if not stat.S_ISREG(mode):
            raise CliError(f"{option} {_shown(path)}: not a regular file (a device or a pipe); give a text file")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes)
    except OSError as exc:
        raise CliError(f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
    return data.decode("utf-8", errors="replace")
