"""A fatal fault (a crash inside a library's C code, which no Python handler can catch) leaves where
every thread of the window's process was, in a file, and the next start of the window says so.

The window arms :class:`CrashLog` as it starts: :mod:`faulthandler` writes into ``crash-<pid>.log``
only if the process dies of a fatal signal, and a clean exit removes the empty file. At the next
start, :meth:`CrashLog.left_behind` finds the files of processes that crashed, renames them
``crashed-<date>-<pid>.log`` (so each is reported once) and returns them. The folder is the user's
log folder (:func:`crash_folder`). No Qt here.
"""

from __future__ import annotations

import faulthandler
import os
import time
from pathlib import Path

__all__ = ["CrashLog", "crash_folder", "first_line"]

#: the file a running process's fatal faults go to: ``crash-<pid>.log``
ARMED_PREFIX = "crash-"
#: a crash reported: ``crashed-<YYYYmmdd-HHMMSS>-<pid>.log`` (its time is the file's last write)
REPORTED_PREFIX = "crashed-"


def crash_folder() -> Path:
    """Where the window's crash reports go: ``EXPLORER_LOG_DIR``, else the user's log folder
    (platformdirs; Linux: ``~/.local/state/embedding-explorer/log``)."""
    override = os.environ.get("EXPLORER_LOG_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_log_dir("embedding-explorer"))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (POSIX); elsewhere, assumed to (its empty file stays)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or not ours to ask: it exists
        pass
    return True


def first_line(path: Path) -> str:
    """The report's first line ("Fatal Python error: Segmentation fault"), or "" if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    return line.strip()
    except OSError:
        pass
    return ""


class CrashLog:
    """The crash reports of the window's processes in ``folder``."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        self._file = None

    @property
    def path(self) -> Path:
        """This process's file (written only if it crashes)."""
        return self.folder / f"{ARMED_PREFIX}{os.getpid()}.log"

    @property
    def armed(self) -> bool:
        return self._file is not None

    def left_behind(self) -> list[Path]:
        """The reports of crashed processes not reported yet, renamed as reported, newest first.

        A process's file is non-empty only if it died of a fatal fault; the empty file of a process
        that is gone (killed, or ended without :meth:`disarm`) is removed, a running one's is left."""
        found = []
        try:
            armed = list(self.folder.glob(f"{ARMED_PREFIX}*.log"))
        except OSError:
            return []
        for path in armed:
            try:
                pid = int(path.stem[len(ARMED_PREFIX):])
                stat = path.stat()
            except (ValueError, OSError):
                continue
            if pid == os.getpid():
                continue
            written = stat.st_mtime
            try:
                if stat.st_size == 0:
                    if not _alive(pid):
                        path.unlink()
                    continue
                stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(written))
                reported = path.with_name(f"{REPORTED_PREFIX}{stamp}-{pid}.log")
                path.replace(reported)
            except OSError:
                continue
            found.append((written, reported))
        return [p for _, p in sorted(found, reverse=True)]

    def arm(self) -> bool:
        """Send this process's fatal faults to :attr:`path`; False (nothing done) if faulthandler is
        already on (``python -X faulthandler``: where the user sent it stays) or the folder cannot
        be written."""
        if self._file is not None:
            return True
        if faulthandler.is_enabled():
            return False
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 (open until disarm)
        except OSError:
            return False
        faulthandler.enable(self._file, all_threads=True)
        return True

    def disarm(self) -> None:
        """A clean end: faulthandler off, and this process's (empty) file removed."""
        if self._file is None:
            return
        faulthandler.disable()
        self._file.close()
        self._file = None
        try:
            if self.path.stat().st_size == 0:
                self.path.unlink()
        except OSError:
            pass

    def __repr__(self) -> str:
        return f"CrashLog({str(self.folder)!r}, armed={self.armed})"

