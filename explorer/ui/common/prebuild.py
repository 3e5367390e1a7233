"""Build the tabs' views while the user is idle, one at a time.

First, what the app asked to start at the first idle moment (``start``'s
``first``: the imports left out of the warm-up), one per idle moment.
Each tab builds its view the first time it is shown (start-up makes only
what is on screen). That first show then cost 200-500 ms in a real window
(Lookup 300, Positions 325, Projection 400 with its charts): the first
click on every tab stalled. Once the app is warmed up, :class:`IdleBuilder`
builds the views not built yet, one per idle moment: no state change, no
pointer movement and no background job running for :data:`IDLE_S`, no mouse
button down, no popup or dialog open. A hidden view does no work after it is
built (its gate defers every update until it is shown), so a built view
costs memory, not time. Then the parts views make on demand, one per idle
moment too: a view lists them in ``idle_parts()`` (the Lookup's backward
plots, the Positions' inner pages, the Projection's charts). Last, its
``chores`` (the app's: :func:`explorer.workers.settle_collector_between_jobs`) run
once in each idle moment that follows the user's activity.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QApplication

__all__ = ["IdleBuilder", "IDLE_S", "POLL_MS"]

#: how long the user must have done nothing before a view is built
IDLE_S = 1.5
#: how often the builder looks
POLL_MS = 250
#: what a user's hands send a window: each is activity, whether or not it changes the state. A resize
#: too: the window manager's frame, its buttons and its keys resize the window without a press the app
#: sees, and the pointer may not move after (a view built in the next idle look, with a full collection,
#: made an 82 ms stall in a run of resizes)
INPUT_EVENTS = frozenset({QEvent.KeyPress, QEvent.MouseButtonPress, QEvent.MouseButtonDblClick, QEvent.Wheel,
                          QEvent.Resize})


class IdleBuilder(QObject):
    """Calls ``view()`` on each of ``pages`` not ``built`` yet, one per idle moment.

    ``ready()`` says whether the app may build now (no background job);
    :meth:`touch` marks user activity (connect it to the state's changes);
    ``clock`` is injectable for tests. With ``window``, every key press, click and wheel turn in it
    is activity too (:meth:`start` watches its native window): a user working the keyboard, or
    clicking through pages and settings that leave the state as it was, moves no pointer, and a
    build or the collector's chore (30-100 ms) came between their keys. ``chores`` (here or given to
    :meth:`start`) run once everything is built, all of them in the first idle
    moment after each stretch of activity; with none, the timer stops then.
    """

    def __init__(self, pages: Sequence, ready: Callable[[], bool] = lambda: True,
                 clock: Callable[[], float] = time.monotonic, parent=None,
                 chores: Sequence[Callable[[], object]] = (), window=None):
        super().__init__(parent)
        self._window = window
        self._watched = None  # the native window whose input is watched
        self._pages = list(pages)
        self.chores: list[Callable[[], object]] = list(chores)
        self._chores_done_for: float | None = None  # the activity the chores last ran after
        self._parts: list[Callable[[], object]] | None = None  # asked of the views once all are built
        self._first: list[Callable[[], object]] = []  # before anything else (start's first)
        self._ready, self._clock = ready, clock
        self._preferred = None  # a page to build before the others (the tour's next step)
        self._last_activity = clock()
        self._cursor = QCursor.pos()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.poll)

    def start(self, chores: Sequence[Callable[[], object]] = (), first: Sequence[Callable[[], object]] = ()) -> None:
        """Look every POLL_MS until every view and part is built (then the timer stops, unless
        there are chores); ``chores`` are added to those given at construction. ``first`` run
        before anything else, one per idle moment: each starts a background job (the app's
        imports left for an idle moment), and the builder then waits for the job to end."""
        self.chores += [c for c in chores if c not in self.chores]
        self._first += list(first)
        self.touch()
        self._watch_input()
        self._timer.start()

    def _watch_input(self) -> None:
        handle = self._window.windowHandle() if self._window is not None else None
        if handle is not None and handle is not self._watched:
            handle.installEventFilter(self)  # the native window: every input event of the window passes it
            self._watched = handle

    def eventFilter(self, _obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() in INPUT_EVENTS:
            self.touch()
        return False

    def stop(self) -> None:
        self._timer.stop()

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def pending(self) -> list:
        """The pages whose view is not built yet, in order."""
        return [p for p in self._pages if not p.built]

    def prefer(self, page) -> None:
        """Build ``page``'s view at the next idle moment, before the others: the view the
        user is about to open (the tour's next step, while its current one is read)."""
        self._preferred = None if page.built else page

    def touch(self, *_args) -> None:
        """The user did something: wait for the next idle moment."""
        self._last_activity = self._clock()

    @staticmethod
    def _user_busy() -> bool:
        return bool(QApplication.mouseButtons() or QApplication.activePopupWidget()
                    or QApplication.activeModalWidget())

    def _pointer_moved(self) -> bool:
        """Whether the pointer moved since the last look. A look is an X round trip
        (10-25 ms while the X server is busy painting, seen inside the window's
        stalls when it ran at every poll): taken only when the rest says idle."""
        pos = QCursor.pos()
        moved, self._cursor = pos != self._cursor, pos
        return moved

    def poll(self) -> bool:
        """Build the next view, or run the chores, if the user is idle; True when it did."""
        if self._user_busy():
            self.touch()
            return False
        if not self._ready():
            # the app's own work counts as activity: when it ends, its results change the screen
            # and the user looks at them (a build at once collided with the first clicks after a load)
            self.touch()
            return False
        if self._clock() - self._last_activity < IDLE_S:
            return False
        if self._parts == [] and not self._first and self._chores_done_for == self._last_activity:
            return False  # all built, chores run since the last activity: the pointer is not looked at
        if self._pointer_moved():  # moved since the last look: idle from now on
            self.touch()
            return False
        if self._first:
            self._first.pop(0)()  # starts a job: the next looks wait for it to end (the app is not ready)
            return True
        pending = self.pending()
        if pending:
            first = self._preferred if any(p is self._preferred for p in pending) else pending[0]
            if not first.build_step():
                # a view made in steps (LazyPage): one step a look while the user stays away, so a
                # user who comes back meets one step, not the whole build
                self._preferred = first
                return True
            self._preferred = None
            first.view()
        else:
            if self._parts is None:
                self._parts = [part for p in self._pages for part in getattr(p.view(), "idle_parts", list)()]
            if not self._parts:
                return self._do_chores()
            self._parts.pop(0)()
            # parts are small (a chart, an inner page: 10-50 ms): the next at the next look while the
            # user stays away (one idle moment each put off the chores, the collector's parking, by
            # seconds once the Projection's charts became five parts)
            return True
        # the next view waits for another idle moment: a user who comes back meets at most one build
        self.touch()
        return True

    def _do_chores(self) -> bool:
        """Everything is built: the chores (poll() comes here once per idle moment after activity)."""
        if not self.chores:
            self.stop()
            return False
        self._chores_done_for = self._last_activity
        for chore in list(self.chores):
            chore()
        return True
