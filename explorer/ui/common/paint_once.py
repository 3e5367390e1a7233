"""Plots painted once when something changes, not twice.

pyqtgraph puts off a plot's auto-range and view transform until the plot paints
(``GraphicsScene.prepareForPaint``, from ``GraphicsView.paintEvent``). What they change
(the view's range, its axes, the curves clipped to it) marks the plot's items dirty
while it paints, and Qt paints the plot again in the next turn: every plot of a resized
window, of a tab coming up, of a new model was painted twice (the Positions tab: each
of its four plots twice per resize, 33 ms of plot painting where 21 do).

:class:`PaintOnce`, on a window, prepares every shown plot of that window just before
the window paints, and hands the plots' dirty regions to that paint: the preparation
in the paint finds nothing left to do.

A paint of the window requested in a pass that has already run its budget (a click's work, a
job's result, an earlier paint) waits for the next pass, once (:class:`~explorer.pacing.TurnWait`):
Qt sends the window's update requests with the pass's other posted events, so the work and its
paint were one stall, and what a paint left dirty (a label that grew, a plot whose items moved
after it) was painted again in the same pass (a tour step's model, installed, four times in one
gap of 66-76 ms). Put off, the paint comes after the window's timers due, and the paints asked
meanwhile are one. :func:`paint_now` is for whoever paints synchronously and needs it done (the
benchmarks' ``repaint()``).

A plot the window's paint reaches when its pass has run :data:`PLOT_BUDGET_S` waits for the next
pass: its area keeps its background meanwhile, and it is not prepared in the pass it waits in. Each
later paint of the window paints at least one plot that waited, and the others that waited wait
again while their pass is long, at most :data:`PLOT_WAITS` passes in a row. A resized window, a tab
coming up or a new model repaints every plot shown, and pyqtgraph paints in Python (axes, curves,
labels): in a walk of the monkey the window's paint was where 15 of 45 stalls over 100 ms were spent,
and a third of the time of its passes over 60 ms. The plots are then painted over the next passes,
the window's timers and input between them. A paint of the window into an image (``grab``,
``render``) is not a paint of the window on screen and paints every plot.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer

from explorer.pacing import ResultPacer, TurnWait

__all__ = ["install", "PaintOnce", "prepare_shown_plots", "paint_now", "PLOT_BUDGET_S"]

#: > 0 while :func:`paint_now` runs: paints are not put off
_NOW = [0]
#: between a paint put off and the paint (ms): a timer, after the window's other timers due
LATER_MS = 1
#: how long a pass of the window has run (s) when a plot its paint reaches waits for the next pass
PLOT_BUDGET_S = 0.03
#: the most passes in a row a plot waits (each paint of the window paints one that waited, at least)
PLOT_WAITS = 3
#: the window's passes read against the plots' budget (only its clock and budget: no result goes through it)
_PLOT_PASSES = ResultPacer(budget_s=PLOT_BUDGET_S)


@contextmanager
def paint_now() -> Iterator[None]:
    """Within it, a window's paint is never put off to the next pass (a synchronous ``repaint()`` that
    must have painted when it returns)."""
    _NOW[0] += 1
    try:
        yield
    finally:
        _NOW[0] -= 1

#: every pyqtgraph scene made since :func:`install`, while it lives
_SCENES: weakref.WeakSet = weakref.WeakSet()
_original_scene_init = pg.GraphicsScene.__init__
#: preparing a plot can queue its auto-range once more (its items' bounds follow the new
#: transform); a second pass finds the range unchanged
_PASSES = 2


def _scene_init(self, *args, **kwargs) -> None:
    _original_scene_init(self, *args, **kwargs)
    _SCENES.add(self)


def install() -> None:
    """Every ``pg.GraphicsScene`` made from now on is known to :func:`prepare_shown_plots`."""
    pg.GraphicsScene.__init__ = _scene_init


def _shown_scenes(window) -> Iterator[tuple]:
    """Every known scene shown in ``window``, with its views shown there (scenes gone are forgotten)."""
    for scene in list(_SCENES):
        if not shiboken6.isValid(scene):
            _SCENES.discard(scene)
            continue
        views = [v for v in scene.views() if v.isVisible() and v.window() is window]
        if views:
            yield scene, views


def prepare_shown_plots(window, plots: _PlotsInTurn | None = None, platform: bool = False) -> int:
    """Run the paint preparation of every scene shown in ``window`` now, and mark what it
    changed for repainting in the paint to come; ``plots`` watches their views from now on,
    and a scene whose every view will wait for the next pass (``plots.will_wait``) is prepared
    then, in the pass that paints it. Returns the number of scenes prepared."""
    prepared = 0
    for scene, views in _shown_scenes(window):
        if plots is not None:
            plots.watch(views)
            if plots.will_wait(views, platform):
                continue
        for _ in range(_PASSES):
            scene.prepareForPaint()
        # the scene marks its views' regions from a queued call: in this paint, not the next
        QCoreApplication.sendPostedEvents(scene, QEvent.MetaCall)
        prepared += 1
    return prepared


def _waits_on(wait: TurnWait) -> bool:
    """In a paint the window system asked for: whether a plot that is waiting for the window's next
    paint of its own waits on (its pass is still long)."""
    return wait.waited > 0 and _PLOT_PASSES.pass_is_long()


class _PlotsInTurn(QObject):
    """Watches the plots' viewports of a window: one reached by the window's paint late in a long
    pass waits for the next pass (a :class:`~explorer.pacing.TurnWait` of its own, on the plots'
    budget, :data:`PLOT_BUDGET_S`). Each paint of the window paints at least one plot that waited;
    the others wait again, at most :data:`PLOT_WAITS` passes in a row."""

    def __init__(self, parent):
        super().__init__(parent)
        self._painting = False  # while the window paints on screen (PaintOnce's sync)
        self._platform = False  # ... in a paint the window system asked for (not put off, not counted)
        self._painted_waiting = False  # a plot that had waited was painted in this paint of the window
        self.put_off = 0  # plots that waited (read by tests)
        self.paints = 0  # the window's paints on screen (read by tests)
        self._waits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # each watched viewport's

    @contextmanager
    def painting(self, platform: bool = False) -> Iterator[None]:
        """Within it, the window paints on screen (PaintOnce's sync): its plots may wait. ``platform``:
        a paint the window system asked for, in the pass of the window's own paint or of a paint put
        off: a plot that is waiting waits on (it is painted by the window's next paint of its own)."""
        outer = self._painting, self._painted_waiting, self._platform  # (a paint inside a paint: Qt's own)
        self._painting, self._painted_waiting, self._platform = True, False, platform
        self.paints += 1
        try:
            yield
        finally:
            self._painting, self._painted_waiting, self._platform = outer

    @property
    def waiting(self) -> int:
        """The number of watched plots waiting for a later paint of the window."""
        return sum(1 for wait in list(self._waits.values()) if wait.waited)

    def watch(self, views) -> None:
        for view in views:
            port = view.viewport()
            if port not in self._waits:
                self._waits[port] = TurnWait(_PLOT_PASSES, most=PLOT_WAITS)
                port.installEventFilter(self)

    def will_wait(self, views, platform: bool = False) -> bool:
        """Whether each of ``views`` (watched) would wait if the window's paint reached it now: the
        pass is long and none has just waited (or, in a paint the window system asked for, is waiting).
        Its preparation would be work for a paint not made."""
        return not _NOW[0] and all(self._would_wait(self._waits[view.viewport()], platform) for view in views)

    @staticmethod
    def _would_wait(wait: TurnWait, platform: bool) -> bool:
        return wait.would_put_off() or (platform and _waits_on(wait))

    def eventFilter(self, port, event) -> bool:  # noqa: N802 (Qt's name)
        # every event of a plot's viewport comes here (a mouse's moves too): the cheapest test first
        if not self._painting or _NOW[0] or event.type() != QEvent.Paint:
            return False
        wait = self._waits.get(port)
        if wait is None:
            return False
        had_waited = wait.waited
        if self._platform and _waits_on(wait):
            port.update()  # waiting already (this paint of the window system's is not one of the window's)
            return True
        if not wait.put_off(again=self._painted_waiting):
            if had_waited:
                self._painted_waiting = True
            return False
        self.put_off += 1
        port.update()  # painted in the window's next paint, a pass of its own
        return True


class PaintOnce(QObject):
    """Installed on a top-level window: its plots are prepared before each of its paints, and
    painted in the passes after a long one.

    The window system has the window painted too, at once, when it has resized it or uncovered part of
    it (an expose event of its platform window, in which Qt paints every widget left to paint): the
    window's own paint, put off in a long pass, came after it, and every plot was painted there
    unprepared, then again in the next pass (a resize in a real window: 6 paints of three plots where 3
    do). Those paints are prepared the same way; they are not put off (the window system waits for
    them), and a plot already waiting for the window's next paint waits on."""

    def __init__(self, window):
        super().__init__(window)
        self._window = window
        self._preparing = False
        self._handle = None  # the window's platform window, watched for the window system's paints
        self.plots = _PlotsInTurn(self)
        self._wait = TurnWait()
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.setInterval(LATER_MS)
        self._later.timeout.connect(self._paint_later)
        window.installEventFilter(self)
        self._watch_platform_window()

    def _watch_platform_window(self) -> None:
        """Watch the window's platform window (made when it is first shown, made again when its surface
        changes, e.g. for the first OpenGL view)."""
        handle = self._window.windowHandle()
        if handle is not None and handle is not self._handle:
            handle.installEventFilter(self)
            self._handle = handle

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if obj is self._window:
            if kind in (QEvent.Show, QEvent.WinIdChange):
                self._watch_platform_window()
            # not again inside a preparation: a synchronous repaint (QWidget.repaint, which the app
            # does not use; the benchmarks do) sends a request of its own for what the preparation dirtied
            elif kind == QEvent.UpdateRequest and not self._preparing:
                if not _NOW[0] and self._wait.put_off():
                    self._later.start()  # Qt waits for this request's sync: nothing is posted meanwhile
                    return True
                self._paint(obj, event)
                return True
        elif kind == QEvent.Expose and obj is self._handle and not self._preparing:
            self._paint(obj, event, platform=True)
            return True
        return False

    def _paint(self, target, event, platform: bool = False) -> None:
        """The window's plots prepared, then ``event`` handled by ``target`` (the window or, for a paint
        the window system asked for, its platform window), which paints the window, the plots watched."""
        self._preparing = True
        try:
            prepare_shown_plots(self._window, self.plots, platform)
        finally:
            self._preparing = False
        with self.plots.painting(platform):  # the window's paint on screen (its sync), with the plots watched
            target.event(event)

    def _paint_later(self) -> None:
        QCoreApplication.sendEvent(self._window, QEvent(QEvent.UpdateRequest))
