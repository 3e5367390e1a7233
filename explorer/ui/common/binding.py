"""How a view follows the state without doing work nobody sees.

* :class:`ShownGate`: a view's state handlers pass their redraws through
  ``gate.update(fn)``. On screen, ``fn`` runs at once; hidden (a tab not
  shown), the view is only marked stale, and the next time it is shown its
  ``synchronize()`` redraws everything from the state, once.
* :class:`JobBinding`: binds a view to one :class:`~explorer.workers.Computation`
  of the state. A lazy computation is wanted only while the view is shown;
  its reset, result and error reach the view through the gate; a progress
  bar, a status label and a Cancel button, when given, follow the job.

One helper for every view, instead of a copy of this logic in each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QAbstractButton, QLabel, QProgressBar, QWidget

from explorer.core.errors import user_message
from explorer.pacing import TurnWait
from explorer.ui.common.progress import ProgressBar
from explorer.ui.style import style_as

if TYPE_CHECKING:  # views know the state's computations, never the worker machinery
    from explorer.workers import Computation

__all__ = ["ShownGate", "JobBinding", "NewestOnly", "OneATurn", "MadeInParts", "PlotsInParts", "job_progress",
           "job_status"]


class ShownGate(QObject):
    """Runs a view's updates while it is on screen; otherwise remembers that it is stale.

    Parameters
    ----------
    view : QWidget
        The view; its show and hide events are watched.
    synchronize : callable
        Redraws the whole view from the state; called on the first show
        and on every show after an update was skipped.

    Signals
    -------
    shown(), hidden()
    """

    shown = Signal()
    hidden = Signal()

    def __init__(self, view: QWidget, synchronize: Callable[[], None]):
        super().__init__(view)
        self._view = view
        self._synchronize = synchronize
        self._stale = True
        view.installEventFilter(self)

    @property
    def visible(self) -> bool:
        return self._view.isVisible()

    @property
    def stale(self) -> bool:
        return self._stale

    def update(self, fn: Callable | None = None, *args) -> None:
        """Run ``fn(*args)`` now if the view is on screen, else mark it stale."""
        if self._view.isVisible():
            if fn is not None:
                fn(*args)
        else:
            self._stale = True

    def mark_stale(self) -> None:
        """Redraw everything at the next show (or now, when on screen)."""
        self._stale = True
        if self._view.isVisible():
            self.sync_now()

    def sync_now(self) -> None:
        self._stale = False
        self._synchronize()

    def eventFilter(self, obj, event) -> bool:
        # a collection that tears down a window's objects in its own order may clear this gate's
        # attributes while Qt still delivers its view's last events (a build left half done)
        if obj is getattr(self, "_view", None):
            kind = event.type()
            if kind == QEvent.Show:
                if self._stale:
                    self.sync_now()
                self.shown.emit()
            elif kind == QEvent.Hide:
                self.hidden.emit()
        return False


class JobBinding(QObject):
    """A view's binding to one Computation of the state.

    Parameters
    ----------
    gate : ShownGate
        The view's gate: callbacks run through it.
    comp : Computation
    on_reset : callable(), optional
        The value was dropped: clear the readout.
    on_result : callable(value), optional
        A new value arrived.
    on_error : callable(exception), optional
        The job failed; without it the status label says why.
    progress, status, cancel : widgets, optional
        Shown while the job runs; Cancel stops it.
    """

    def __init__(self, gate: ShownGate, comp: Computation, *,
                 on_reset: Callable[[], None] | None = None,
                 on_result: Callable[[object], None] | None = None,
                 on_error: Callable[[BaseException], None] | None = None,
                 progress: QProgressBar | None = None,
                 status: QLabel | None = None,
                 cancel: QAbstractButton | None = None):
        super().__init__(gate)
        self._gate, self._comp = gate, comp
        self._on_reset, self._on_result, self._on_error = on_reset, on_result, on_error
        self._progress, self._status, self._cancel = progress, status, cancel
        comp.reset.connect(self._on_comp_reset)
        comp.finished.connect(self._on_comp_finished)
        comp.failed.connect(self._on_comp_failed)
        comp.progressed.connect(self._on_comp_progressed)
        comp.running_changed.connect(self._on_comp_running_changed)
        gate.shown.connect(self._on_gate_shown)
        gate.hidden.connect(self._on_gate_hidden)
        if cancel is not None:
            cancel.clicked.connect(self._on_cancel_clicked)
        comp.want(self, gate.visible)
        self._on_comp_running_changed(comp.running)

    @property
    def computation(self) -> Computation:
        return self._comp

    def redraw(self) -> None:
        """Draw the computation's current value (``on_result``), or clear the
        readout (``on_reset``) when it has none: for a view's synchronize."""
        value = self._comp.value
        if value is not None:
            if self._on_result is not None:
                self._on_result(value)
        elif self._on_reset is not None:
            self._on_reset()

    def release(self) -> None:
        """Stop wanting the computation (the view goes away)."""
        self._comp.want(self, False)

    # -- the computation ---------------------------------------------------------------
    def _on_comp_reset(self) -> None:
        if self._on_reset is not None:
            self._gate.update(self._on_reset)

    def _on_comp_finished(self, value) -> None:
        if self._on_result is not None:
            self._gate.update(self._on_result, value)

    def _on_comp_failed(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._gate.update(self._on_error, exc)
        elif self._status is not None:
            self._status.setText(user_message(exc))

    def _on_comp_progressed(self, fraction: float, message: str) -> None:
        if self._progress is not None:
            self._progress.setValue(int(round(fraction * self._progress.maximum())))
        if self._status is not None and message:
            self._status.setText(message)

    def _on_comp_running_changed(self, running: bool) -> None:
        if self._progress is not None:
            self._progress.setVisible(running)
            if running:
                self._progress.setValue(0)
        if self._cancel is not None:
            self._cancel.setVisible(running)
            self._cancel.setEnabled(running)

    def _on_cancel_clicked(self) -> None:
        self._comp.cancel()

    # -- the view's visibility ---------------------------------------------------------
    def _on_gate_shown(self) -> None:
        self._comp.want(self, True)

    def _on_gate_hidden(self) -> None:
        self._comp.want(self, False)


def job_status() -> QLabel:
    """The quiet one-line label a JobBinding writes its messages to."""
    status = QLabel("")
    style_as(status, "ChipId")
    return status


def job_progress() -> QProgressBar:
    """A narrow, hidden progress bar for a JobBinding (it shows it while the job runs).

    Hidden, it keeps its room: a bar taller than its row's label that came and went with
    every job made the row, and every plot under it, change height twice per job (each
    plot's axes drawn anew and repainted: four relayouts in one switch to Positions)."""
    bar = ProgressBar()
    bar.setMaximumWidth(160)
    bar.setTextVisible(False)
    policy = bar.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    bar.setSizePolicy(policy)
    bar.hide()
    return bar


class NewestOnly(QObject):
    """Hands ``draw`` the newest of the values pushed, once the values queued behind it have
    arrived: one draw per turn of the event loop, however many came.

    A job's intermediate frames cross threads as queued signals, and Qt delivers all those
    waiting in one pass: a UMAP of 100 rows (an epoch in well under a millisecond) queued
    hundreds, and drawing each stalled the window 750 ms in a real window. ``still()`` is asked
    before drawing (the job is still running: a frame that lost to its final result is not drawn).
    """

    def __init__(self, draw: Callable[[object], None], still: Callable[[], bool] = lambda: True,
                 parent: QObject | None = None):
        super().__init__(parent)
        self._draw, self._still = draw, still
        self._value: object | None = None
        self._due = False

    def push(self, value) -> None:
        self._value = value
        if not self._due:
            self._due = True
            QTimer.singleShot(0, self, self._flush)

    def drop(self) -> None:
        """Forget the value waiting (a new run, or none)."""
        self._value = None

    def _flush(self) -> None:
        self._due = False
        value, self._value = self._value, None
        if value is not None and self._still():
            self._draw(value)


#: between the draws of :class:`OneATurn` (ms): a timer, not a queued call, so that the window paints
#: each draw (and takes input) before the next
TURN_MS = 1


class OneATurn(QObject):
    """Runs a view's draws one per turn of the event loop, so each is painted in its own turn.

    A page whose plots all take new data in one turn paints them all in that turn: the
    Positions page's two heatmaps and the table beside them stalled a real window 100-165 ms
    when the tab came back after a model switch. :meth:`run` draws the first now and the rest in
    the turns after; a new run (or :meth:`cancel`) drops the draws still waiting, and
    :meth:`finish` draws them now. A draw whose turn comes in a pass already long waits for the
    next (:class:`~explorer.pacing.TurnWait`).
    """

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._waiting: list[Callable[[], object]] = []
        self._wait = TurnWait()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(TURN_MS)
        self._timer.timeout.connect(self._on_turn)

    @property
    def pending(self) -> int:
        """Draws still waiting for their turn."""
        return len(self._waiting)

    def run(self, draws: Sequence[Callable[[], object]], now: bool = True) -> None:
        """``draws`` in order, the first now (``now``) or in the next turn."""
        self._waiting = list(draws)
        self._timer.stop()
        if now:
            self._next()
        elif self._waiting:
            self._timer.start()

    def cancel(self) -> None:
        self._waiting = []
        self._timer.stop()

    def finish(self) -> None:
        """Every draw waiting, now (whoever reads the page next needs it whole)."""
        while self._waiting:
            self._next()

    def _on_turn(self) -> None:
        if self._waiting and self._wait.put_off():
            self._timer.start()
            return
        self._next()

    def _next(self) -> None:
        if not self._waiting:
            return
        draw = self._waiting.pop(0)
        if self._waiting:
            self._timer.start()
        draw()


class MadeInParts(QObject):
    """What a page makes once, in ``parts`` (callables, in order): a part a turn once
    :meth:`start` ed (its first show), the next part at an idle moment (:meth:`make_next`), or
    every part still to make now (:meth:`finish`, for whoever needs it whole). The last part
    usually draws what the page holds."""

    def __init__(self, parts: Sequence[Callable[[], object]], parent: QObject | None = None):
        super().__init__(parent)
        self._parts = tuple(parts)
        self._made = 0
        self._turns = OneATurn(self)

    @property
    def count(self) -> int:
        """How many parts there are."""
        return len(self._parts)

    @property
    def done(self) -> bool:
        return self._made == len(self._parts)

    def make_next(self) -> None:
        """The next part, if any is left."""
        if self._made < len(self._parts):
            part = self._parts[self._made]
            self._made += 1
            part()

    def start(self, now: bool = False) -> None:
        """Make the parts left a turn each, from this turn (``now``) or the next (no-op if done or
        under way: a page shown again goes on where it was)."""
        if not self.done and not self._turns.pending:
            self._turns.run([self.make_next] * (len(self._parts) - self._made), now=now)

    def finish(self) -> None:
        """Every part left, now."""
        self._turns.cancel()
        while not self.done:
            self.make_next()


class PlotsInParts:
    """For a page whose plots are made in parts by ``self._plot_parts`` (a :class:`MadeInParts`, its
    last part drawing what the page holds): the names the app, the idle builder and the tests use."""

    _plot_parts: MadeInParts

    @property
    def plots_built(self) -> bool:
        return self._plot_parts.done

    @property
    def plot_parts(self) -> int:
        """How many parts :meth:`make_plot_part` makes the plots in."""
        return self._plot_parts.count

    def ensure_plots(self) -> None:
        """Every part still to make, now (whoever needs the plots whole: an export, a test)."""
        self._plot_parts.finish()

    def make_plot_part(self) -> None:
        """The next part, if any is left."""
        self._plot_parts.make_next()

    def idle_parts(self) -> list:
        """The parts, one per idle look of the idle builder."""
        return [self.make_plot_part] * self.plot_parts
