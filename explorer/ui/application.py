"""The QApplication as the app wants it: names, icon, theme, style sheet,
tooltips, pyqtgraph's options, Qt's messages routed through logging, and the
glyph check for pieces no font can draw; and a setting saved from any thread
(:func:`save_setting`)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

from PySide6.QtCore import QAbstractEventDispatcher, QObject, QSettings, Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication
from superqt.utils import QMessageHandler

from explorer.core.import_gate import step_aside_on_imports
from explorer.core.libraries import map_libraries_without_the_gil
from explorer.core.runtime import WINDOW_TURNS, favour_the_gui_thread, return_big_blocks_at_once
from explorer.core.sources import resources_dir
from explorer.core.tokens import pieces
from explorer.ui.common.tooltips import install_tooltip_wrapping
from explorer.ui.style import apply_theme, can_draw, configure_pyqtgraph, prepare_glyph_check

__all__ = ["ORG", "APP", "make_app", "at_each_rest", "save_setting"]

ORG, APP = "embedding-explorer", "Token Embedding Explorer"

_QT_NOISE = ("This plugin does not support propagateSizeHints",)
_message_handler: _QtMessages | None = None
#: called, in order, each time the window's event loop is about to sleep (see :func:`at_each_rest`)
_AT_REST: list[Callable[[], None]] = []


class _QtNoiseFilter(logging.Filter):
    """Drop known platform-plugin noise from Qt's messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(_QT_NOISE)


class _QtMessages(QMessageHandler):
    """superqt's handler, routing Qt's messages to a logger, without keeping
    every record for the life of the app."""

    def __call__(self, *args) -> None:
        super().__call__(*args)
        self.records.clear()


def _route_qt_messages() -> None:
    """Qt's own messages go through Python logging (to stderr), minus noise."""
    global _message_handler
    logger = logging.getLogger("explorer.qt")
    logger.addFilter(_QtNoiseFilter())
    _message_handler = _QtMessages(logger)
    _message_handler.install()


class _TurnWatch(QObject):
    """Watches the window's thread for the first event of a turn, and only for that one.

    An event filter on the application sees every event of the thread, and each call into
    Python takes the GIL: left installed, a dialog's opening (every widget of the window
    blocked, then unblocked) took it thousands of times, each a wait while workers ran.
    Here the filter is installed when the event loop is about to sleep (the turn has ended)
    and removes itself at the first event after (a turn has begun): one call a turn. The
    dispatcher's ``awake`` signal would not do: timers and input are dispatched after
    ``aboutToBlock`` with no ``awake`` before them.
    """

    def __init__(self, app: QApplication):
        super().__init__(app)
        self._app = app
        self._watching = False

    def rest(self) -> None:
        """The event loop is about to sleep: the turn has ended; watch for the next."""
        WINDOW_TURNS.turn_ended()
        for call in _AT_REST:
            call()
        if not self._watching:
            self._app.installEventFilter(self)
            self._watching = True

    def eventFilter(self, _obj, _event) -> bool:  # noqa: N802 (Qt's name)
        WINDOW_TURNS.turn_began()
        self._app.removeEventFilter(self)  # safe from inside the filter (Qt's documentation)
        self._watching = False
        return False


def report_turns(app: QApplication) -> None:
    """Tell the workers when the window's thread is in a turn of its event loop: from the first
    event it handles until its event loop is about to sleep. Once per process."""
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    if WINDOW_TURNS.reporting or dispatcher is None:
        return
    watch = _TurnWatch(app)
    dispatcher.aboutToBlock.connect(watch.rest, Qt.DirectConnection)
    watch.rest()
    WINDOW_TURNS.reporting = True


def at_each_rest(call: Callable[[], None]) -> None:
    """Call ``call`` at the end of each turn of the window's event loop (once :func:`report_turns`
    watches), in the one call into Python that a turn's end already makes; once however often asked."""
    if call not in _AT_REST:
        _AT_REST.append(call)


def save_setting(path: str, fmt: QSettings.Format, key: str, value) -> None:
    """``key = value`` in the settings file ``path``, written now, from any thread: through a
    QSettings of the calling thread's own (QSettings is reentrant, and the objects of one
    process on one file share what each wrote). A write from the window's own QSettings waits
    for the disk when it saves, in the window's next turn: 2-6 ms at each model opened."""
    mine = QSettings(path, fmt)
    mine.setValue(key, value)
    mine.sync()


def keep_fills_on_the_painting_thread() -> None:
    """Have Qt's raster engine fill on the thread that paints, not hand each fill to its pool.

    Qt splits every fill of more than about 96 rows (a scroll bar's track, a panel's
    background, a plot's image) into pieces, gives them to its own GUI thread pool and
    waits until all are done. On two cores with a worker busy on the other, the window's
    thread then waits for the pool's threads to get a core; in a real window under a
    5,000-action walk these waits came to about 0.6 s of the window's thread in 45 s,
    besides the wake-ups on each fill. Qt reads ``QT_NO_GUI_THREADPOOL`` at its first
    threaded fill, so this runs before the QApplication is made; a value the user set
    stays.
    """
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def make_app(argv=None) -> QApplication:
    keep_fills_on_the_painting_thread()
    if QApplication.instance() is None and "pytest" not in sys.modules and _message_handler is None:
        _route_qt_messages()
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setOrganizationName(ORG)
    app.setApplicationName(APP)
    app.setDesktopFileName("embedding-explorer")  # the entry --install-desktop writes (Wayland matches on it)
    app.setWindowIcon(QIcon(str(resources_dir() / "icon.svg")))
    # Fusion, whose long tooltips wrap at a readable width, whoever shows them
    at_each_rest(install_tooltip_wrapping(app).catch)
    apply_theme(app)  # (no style sheet on the application: see style_as)
    configure_pyqtgraph()
    return_big_blocks_at_once()  # a dropped model's memory goes back to the system
    favour_the_gui_thread()  # workers running Python hand the GIL back within 0.2 ms (0.02 in a turn)
    report_turns(app)  # ... and wait at their yields while the window's thread is in a turn
    step_aside_on_imports()  # ... and inside a step that imports a module
    map_libraries_without_the_gil()  # the first imports of torch and numba map their libraries with the GIL let go
    if pieces.glyph_check() is None:
        # pieces with characters no installed font has show their code point, not a box
        prepare_glyph_check()
        pieces.set_glyph_check(can_draw)
    return app
