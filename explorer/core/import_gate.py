"""A worker importing a module in the middle of a job's step: it steps aside for the window's turns
until the step ends, and no garbage collection runs until the import returns.

A job's first step often imports what it needs the first time it runs: torch._dynamo (with sympy) when
the first optimiser is made, openTSNE (with scikit-learn and SciPy) for the first layout. That is one
long step of Python, 0.7-1.5 s, which allocates hundreds of thousands of objects, run unprofiled when
the window rested as it began (:meth:`explorer.core.runtime.WindowTurns.before_step`): it took its
share of the GIL through every turn of the window, and the collections it set off walked its objects.
Measured in a real window (the bundled model, the app's parking on, the first training started while
the views were switched every 80 ms): the window's longest gap 46, 47, 87 and 69 ms; with this module's
step aside and pause, 27, 31, 29 and 29 (24-30 ms with no training). A process that does not park its
older objects (the app parks them once warm) had two full collections of 148-149 ms inside the import.

Inside :func:`import_step` (explorer.workers wraps each step of a job in it), the first module imported
puts the worker's gate on (:meth:`~explorer.core.runtime.WindowTurns.gate`: it stops the worker at its
next call while a turn of the window is under way, at most ``GIVE_WAY_MAX_S`` a turn) to the step's end,
and pauses the collector (:func:`~explorer.core.runtime.collector_paused`) until that import returns
(a step may go on long after: a training paused by the user waits inside its step). Then, when the app
parks what survives its collections (:func:`~explorer.core.runtime.park_after_full_collections`), what
exists is parked (``gc.freeze``) before the collector is on again: the first collection after the pause
walked all the import had made, a young generation of hundreds of thousands of objects, 69-78 ms
holding the GIL (the probe above without the parking: the longest gap 72-83 ms). Unlike the app's other
parking, no collection comes first: a reference cycle that the step made and dropped stays.

The finder that does this, :class:`StepAsideOnImport`, first on ``sys.meta_path``, finds nothing
itself, and is asked only for modules not imported yet: an import of one already in ``sys.modules``
costs nothing more.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Callable, Iterator

from explorer.core.runtime import WINDOW_TURNS, collector_paused, parking

__all__ = ["StepAsideOnImport", "import_step", "step_aside_on_imports"]

_STEP = threading.local()  # .armed: inside a job's step; .pause: the collector's pause; .outer: the import's frame


def _end_pause() -> None:
    pause, _STEP.pause, _STEP.outer = getattr(_STEP, "pause", None), None, None
    if pause is not None:
        if parking():  # what it made is mostly the modules': never walked (the next collection, 69-78 ms)
            gc.freeze()
        pause.__exit__(None, None, None)


@contextlib.contextmanager
def import_step() -> Iterator[None]:
    """Around one step of a job, in its worker: an import inside it gates the worker to the step's end
    and pauses the collector until the import returns (with :func:`step_aside_on_imports` installed)."""
    _STEP.armed, _STEP.pause, _STEP.outer = True, None, None
    try:
        yield
    finally:
        _STEP.armed = False
        _end_pause()


def _outermost_import_frame():
    """The frame of importlib's ``_find_and_load`` for the import under way (its outermost one)."""
    frame, outer = sys._getframe(1), None
    while frame is not None:
        if frame.f_code.co_name == "_find_and_load" and "importlib" in frame.f_code.co_filename:
            outer = frame
        frame = frame.f_back
    return outer


def _watching(gate: Callable) -> Callable:
    """``gate`` as the thread's profile function, ending the collector's pause as the import returns:
    a step that goes on for long after it (a training paused by the user waits inside its step) must
    not keep the collector off meanwhile."""

    def watch(frame, event, arg) -> None:
        if event == "return" and frame is _STEP.outer:
            _end_pause()
        gate(frame, event, arg)

    return watch


class StepAsideOnImport:
    """A meta path finder that finds nothing: inside :func:`import_step` of a job that gives way, it
    gates the worker that asks and pauses the collector (see the module's docstring)."""

    @staticmethod
    def find_spec(_name, _path=None, _target=None):
        if not getattr(_STEP, "armed", False) or _STEP.pause is not None:
            return None
        gate = WINDOW_TURNS.job_gate()
        if gate is None:  # a job that does not give way (the warm-up's views' code: it pauses the collector)
            return None
        outer = _outermost_import_frame()
        if outer is None:
            return None
        _STEP.outer, _STEP.pause = outer, collector_paused()
        _STEP.pause.__enter__()
        sys.setprofile(_watching(gate))
        return None


def step_aside_on_imports() -> bool:
    """Put :class:`StepAsideOnImport` first on ``sys.meta_path`` (one of it), back in front when a finder
    was put before it since (a finder before it that finds the module is asked alone); True when it is
    first."""
    mine = [f for f in sys.meta_path if isinstance(f, StepAsideOnImport)]
    if not mine or sys.meta_path[0] is not mine[0]:
        finder = mine[0] if mine else StepAsideOnImport()
        sys.meta_path[:] = [finder, *(f for f in sys.meta_path if not isinstance(f, StepAsideOnImport))]
    return isinstance(sys.meta_path[0], StepAsideOnImport)
