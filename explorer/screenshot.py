"""The --screenshot mode: wait until the window shows what was asked for, save
it, quit, and never wait forever.

What it waits for, in order: the model (or the tour's step, with its words),
the training run's step (``--view training --train-steps N``), then every
background job. A generous limit bounds the whole wait: past it the window is
saved as it is, one line on stderr says what it was still waiting for, and
the exit code is :data:`EXIT_GAVE_UP`. Should even the GUI thread stop (a
deadlock would), :func:`arm_backstop` ends the process with every thread's
stack on stderr.
"""

from __future__ import annotations

import faulthandler
import sys

from PySide6.QtCore import QObject, QPoint, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from explorer.ui.tour.card import FloatingCard

__all__ = ["Screenshot", "arm_backstop", "show_page_or_say", "LIMIT_S", "BACKSTOP_S", "EXIT_ERROR", "EXIT_GAVE_UP",
           "grab_window"]

#: the longest --screenshot waits for the model, the tour's step, the training and the jobs
#: (a shot takes 3-16 s; the biggest models and 200 training steps on a busy machine stay well inside)
LIMIT_S = 120.0
#: how long after the limit faulthandler ends a process whose GUI thread never got to the shot
BACKSTOP_S = 60.0
#: the model could not be opened, or the file not written
EXIT_ERROR = 2
#: the limit passed: what was shown was saved, but not what was asked for
EXIT_GAVE_UP = 3
#: the pause before the jobs are first looked at (a view starts its work once it is shown),
#: between two looks, and between the last job ending and the shot (the last paint)
SETTLE_MS, POLL_MS, LAST_PAINT_MS = 300, 200, 300


def arm_backstop(seconds: float) -> None:
    """End the process after ``seconds`` (exit code 1), printing every Python
    thread's stack to stderr. faulthandler's own thread does it, so it works
    while the GUI thread is blocked and holds the GIL."""
    faulthandler.dump_traceback_later(seconds, exit=True)


def show_page_or_say(window, view: str) -> bool:
    """Bring ``view`` ("NAME:PAGE") to the front once the model is in; a page the view does not
    have (nor a choice of its lists) is named in one warning on stderr, with the pages it has."""
    if window.show_view(view):
        return True
    name, _, page = view.partition(":")
    pages = ", ".join(window.page_names(name)) or "none"
    print(f"warning: the {name} view has no page {page.strip()!r} (its pages: {pages}; or a choice of "
          f"its lists); showing it as it is", file=sys.stderr)
    return False


class Screenshot(QObject):
    """Saves ``explorer``'s window to ``path`` once it shows what was asked, then quits.

    ``view`` "NAME:PAGE" picks its page once the model is in; ``train_steps``
    (with the training view) trains that many steps first; ``tour`` opens that
    step of the tour and waits for its words. :meth:`start` before the model is
    asked for. ``waiting_for`` says in words what it still waits for.

    Signals
    -------
    finished(int)
        The exit code: 0, :data:`EXIT_ERROR` or :data:`EXIT_GAVE_UP`.
    """

    finished = Signal(int)

    def __init__(self, explorer, path: str, view: str | None = None, train_steps: int = 0,
                 tour: int | None = None, limit_s: float = LIMIT_S, parent: QObject | None = None):
        super().__init__(parent)
        self._ex = explorer
        self._path = path
        self._view = view or ""
        self._train_steps = int(train_steps) if self._view.partition(":")[0] == "training" else 0
        self._tour = tour
        self._limit_s = float(limit_s)
        self.code: int | None = None
        self.waiting_for = "the model to open"
        self._settling = False
        self._deadline = QTimer(self)
        self._deadline.setSingleShot(True)
        # a coarse timer may fire up to 5 % early, and the warning says the limit passed
        self._deadline.setTimerType(Qt.TimerType.PreciseTimer)
        self._deadline.setInterval(int(self._limit_s * 1000))
        self._deadline.timeout.connect(self._on_deadline_timeout)
        self._poll = QTimer(self)
        self._poll.setSingleShot(True)
        self._poll.timeout.connect(self._on_poll_timeout)

    def start(self) -> None:
        """Start waiting (and the clock of the limit)."""
        ex = self._ex
        ex.load_finished.connect(self._on_explorer_load_finished)
        if self._tour:  # shoot the tour's step once it is on screen with its words
            ex.tour.step_ready.connect(self._on_tour_step_ready)
            ex.tour.start(self._tour)
        self._deadline.start()

    @property
    def done(self) -> bool:
        return self.code is not None

    # -- the stages ------------------------------------------------------------------------
    def _on_explorer_load_finished(self, ok: bool) -> None:
        """The model is in (or could not be opened: an error, no picture)."""
        if self.done:
            return
        if not ok:
            print(f"error: {self._ex.last_error or 'loading was cancelled'}", file=sys.stderr)
            self._finish(EXIT_ERROR)
            return
        if self._tour:
            self.waiting_for = f"step {self._tour} of the tour"
            return
        if ":" in self._view:  # a choice that needs the model (matrix:w_out) is made once it is open
            show_page_or_say(self._ex.window, self._view)
        if self._train_steps:
            self.waiting_for = f"the training to reach step {self._train_steps}"
            self._ex.training_view.run_steps_then(self._train_steps, self._on_training_reached)
        else:
            self._settle()

    def _on_tour_step_ready(self, _number: int) -> None:
        """The tour's step shows its words."""
        if not self.done:
            self._settle()

    def _on_training_reached(self) -> None:
        """The training view reached its step (or its run ended)."""
        if not self.done:
            self._settle()

    def _settle(self) -> None:
        """Wait for the background jobs the views started (PCA, first-layer runs)."""
        if self._settling:
            return
        self._settling = True
        self.waiting_for = "the background jobs to finish"
        self._poll.start(SETTLE_MS)

    def _on_poll_timeout(self) -> None:
        """Look at the jobs again: shoot once none runs."""
        if self.done:
            return
        jobs = self._ex.running_jobs()
        if jobs:
            self.waiting_for = f"the background jobs to finish ({', '.join(jobs)} still running)"
            self._poll.start(POLL_MS)
            return
        self.waiting_for = "the last paint"
        QTimer.singleShot(LAST_PAINT_MS, self._shoot)

    def _on_deadline_timeout(self) -> None:
        """The limit passed: save what is shown, say what never came."""
        if self.done:
            return
        print(f"warning: --screenshot gave up after {self._limit_s:g} s waiting for {self.waiting_for}; "
              f"saved the window as it was", file=sys.stderr)
        self._shoot(gave_up=True)

    def _shoot(self, gave_up: bool = False) -> None:
        if self.done:
            return
        app = QApplication.instance()
        app.processEvents()
        if not grab_window(self._ex.window).save(self._path):
            print(f"error: cannot write {self._path}", file=sys.stderr)
            self._finish(EXIT_ERROR)
        else:
            self._finish(EXIT_GAVE_UP if gave_up else 0)

    def _finish(self, code: int) -> None:
        self.code = code
        self._deadline.stop()
        self._poll.stop()
        self.finished.emit(code)


def grab_window(window: QWidget) -> QPixmap:
    """The window as shown, with what its OpenGL windows drew (the 3D view draws in a
    native child window, which ``QWidget.grab`` leaves out) painted in their places."""
    shot = window.grab()
    frames = [w for w in window.findChildren(QWidget) if hasattr(w, "grab_frame") and w.isVisible()]
    if frames:
        painter = QPainter(shot)
        for w in frames:
            image = w.grab_frame()
            if not image.isNull():
                painter.drawImage(QRect(w.mapTo(window, QPoint(0, 0)), w.size()), image)
        # what floats over the window's content (the tour's card, the hint) stays on top
        for card in window.findChildren(FloatingCard):
            if card.isVisible():
                card.render(painter, card.mapTo(window, QPoint(0, 0)))
        painter.end()
    return shot
