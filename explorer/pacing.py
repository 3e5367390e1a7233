"""Jobs' results reach the window a few per pass of its event loop, the window's other work between.

A worker's signals reach the window's thread as posted events, and Qt delivers every posted event
waiting in one pass of the event loop, before the timers and the input of that pass. Jobs finishing
together (a projection, its tokens' interest and their metadata, each drawn by its view) were drawn
in one pass with the tab switch that asked for them: 139 ms of the window's own work in a walk of
the monkey (a tab switch alone takes 17-29 ms, quiet).

:class:`ResultPacer` delivers a result at once while the pass under way is short; once the pass has run
:data:`PASS_BUDGET_S`, the result waits for the next pass, where it is delivered first (a result that
waits is delivered in the next pass however long that one is: every result lands). A pass runs from
the moment the window last rested (:meth:`~explorer.core.runtime.WindowTurns.elapsed`): a click's work,
then the result and the click's paint, waiting together, in the turn after, are one pass to the user.
Results keep their order: once one waits, those after it wait behind it. Without turns reported
(:data:`explorer.core.runtime.WINDOW_TURNS`), as in a script, every result lands at once.

:class:`TurnWait` holds the window's own put-off work to the same budget: a view's next draw or the
next step of its first build (a timer's), and a paint of the window (an update request, posted), each
asked in a pass that has run its budget, wait for the next pass once. A plot that the window's paint
reaches when its pass has run :data:`~explorer.ui.common.paint_once.PLOT_BUDGET_S` waits for the next
pass too, and may wait again while other plots that waited are painted, a few passes at most
(:class:`~explorer.ui.common.paint_once.PaintOnce`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QTimer

from explorer.core.runtime import WINDOW_TURNS, WindowTurns

__all__ = ["ResultPacer", "PACER", "PASS_BUDGET_S", "TurnWait"]

#: how long a pass of the window's event loop runs before a result reaching it waits for the next pass
PASS_BUDGET_S = 0.012


class ResultPacer:
    """Hands results to their handlers in the window's thread, pacing them over passes of its event loop."""

    def __init__(self, turns: WindowTurns = WINDOW_TURNS, budget_s: float = PASS_BUDGET_S) -> None:
        self._turns = turns
        self.budget_s = budget_s
        self._waiting: deque[tuple[Callable, tuple]] = deque()
        self._timer: QTimer | None = None
        #: results that waited for a later pass (read by tests and the benchmark)
        self.deferred = 0

    @property
    def waiting(self) -> int:
        """The number of results waiting for a later pass."""
        return len(self._waiting)

    def land(self, handler: Callable, *args) -> None:
        """``handler(*args)`` now, or in a later pass if this one has run its budget or results wait."""
        if self._waiting or self.pass_is_long():
            self._waiting.append((handler, args))
            self.deferred += 1
            self._wake()
            return
        handler(*args)

    def pass_is_long(self) -> bool:
        """Whether the pass under way has run its budget (a result reaching it would wait)."""
        return self._turns.elapsed() >= self.budget_s

    def _wake(self) -> None:
        if self._timer is None or not shiboken6.isValid(self._timer):
            app = QCoreApplication.instance()
            if app is None:  # no event loop to wait for: at once
                self._deliver_all()
                return
            self._timer = QTimer(app)  # made in the window's thread: results are handed over there
            self._timer.setSingleShot(True)
            self._timer.setInterval(0)
            self._timer.timeout.connect(self._deliver)
        if not self._timer.isActive():
            self._timer.start()

    def _deliver(self) -> None:
        """The first waiting result, then more while this pass is short; the rest in the next pass."""
        try:
            first = True
            while self._waiting and (first or not self.pass_is_long()):
                first = False
                handler, args = self._waiting.popleft()
                handler(*args)
        finally:
            if self._waiting:
                self._timer.start()

    def _deliver_all(self) -> None:
        while self._waiting:
            handler, args = self._waiting.popleft()
            handler(*args)


#: the pacer of every job's results (JobRunner's handlers land through it)
PACER = ResultPacer()


class TurnWait:
    """For work the window puts off to a turn of its own by a timer (a view's next draw, the next step
    of a view's first build): when the timer fires in a pass already long, the work waits for the next
    pass, once, and then runs however long that one is.

    A timer the window starts during a click (a draw for the next turn) falls due during the click, and
    Qt fires it in the pass after the click's paint, with the other timers due: the click, its paint
    and the draw were one stall, and a timer of the window waited through all three. :meth:`put_off`
    says whether the caller should start its timer again instead of working now (True at most once in
    a row); its timer then fires after the timers already due, and the window's input and timers come between.

    With ``most`` above 1, work that has waited may wait again, up to ``most`` passes in a row, when its
    caller says so (``again``: the plots of a window's paint, once one that had waited was painted).
    """

    def __init__(self, pacer: ResultPacer | None = None, most: int = 1) -> None:
        self._pacer = pacer
        self._most = most
        self.waited = 0  # passes waited in a row

    def would_put_off(self, again: bool = False) -> bool:
        """What :meth:`put_off` would answer now, without counting it as asked."""
        return (self.waited == 0 or (again and self.waited < self._most)) and (self._pacer or PACER).pass_is_long()

    def put_off(self, again: bool = False) -> bool:
        """True if the work should wait for the next pass (the pass under way is long and it has not
        waited yet, or ``again`` and it has waited fewer than ``most`` passes in a row); False to work now."""
        if self.would_put_off(again):
            self.waited += 1
            return True
        self.waited = 0
        return False
