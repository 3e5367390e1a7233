"""What the monkey (``monkey.py``) listens to while it walks: exceptions that reach
``sys.excepthook``, Qt's warnings, RuntimeWarnings from any thread, and the RSS.

Module-level lists and functions, not methods: Qt keeps the installed message handler for the
life of the process, and modules imported during a walk (pyqtgraph's) keep the excepthook they
found, so a bound method there would keep the walk, and the window, alive.
"""

from __future__ import annotations

import os
import threading
import traceback
from pathlib import Path

__all__ = ["QT_SEEN", "EXCEPTIONS_SEEN", "WARNINGS_SEEN", "collect_qt_message", "collect_exception",
           "collect_warning", "rss_mb"]

#: what a platform says about itself, not about the app (pytest's qt_log_ignore has the same)
QT_NOISE = ("This plugin does not support propagateSizeHints",)
#: Qt warnings seen while a walk runs
QT_SEEN: list[str] = []
#: exceptions that reached sys.excepthook while a walk runs, formatted
EXCEPTIONS_SEEN: list[str] = []
#: RuntimeWarnings shown while a walk runs, from any thread: (the warning, where it was raised from:
#: the innermost frames of the stack that raised it, innermost first, on one line)
WARNINGS_SEEN: list[tuple[str, str]] = []
#: how many frames of a warning's stack its place keeps (a paint's: pyqtgraph's item and method)
STACK_FRAMES = 6


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError):
        return 0.0


def collect_qt_message(mode, context, message) -> None:
    from PySide6.QtCore import QtMsgType

    if mode in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg) \
            and not message.startswith(QT_NOISE):
        QT_SEEN.append(message)


def collect_exception(kind, value, tb) -> None:
    EXCEPTIONS_SEEN.append("".join(traceback.format_exception(kind, value, tb)))


def warning_place(frames: list[traceback.FrameSummary]) -> str:
    """The innermost ``STACK_FRAMES`` frames that raised a warning, innermost first, as
    ``file:line function`` (the warnings module's own frames and this hook left out), and
    whether the window's thread raised it. A warning numpy raises in a paint names only
    numpy's line; the frames say which item painted."""
    mine = [f for f in frames if Path(f.filename).name not in ("warnings.py", "listeners.py")]
    where = " < ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in reversed(mine[-STACK_FRAMES:]))
    thread = "window thread" if threading.current_thread() is threading.main_thread() else "other thread"
    return f"{where} [{thread}]"


def collect_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, RuntimeWarning):
        WARNINGS_SEEN.append((f"{category.__name__}: {message} ({filename}:{lineno})",
                              warning_place(traceback.extract_stack())))
