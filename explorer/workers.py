"""Qt glue that runs core generators off the GUI thread and hands back plain data.

Two pieces:

* :class:`JobRunner` runs one generator job at a time in superqt's thread pool. Starting a job asks
  the older one to stop and bumps a generation counter, so a stale result never overwrites a fresh one.
* :class:`Computation` is one derived result of the state (the neighbours of the selection, a
  projection, ...): it keeps the latest value, drops it the moment its inputs change, and recomputes
  in a worker, now or, for a *lazy* one, once some view wants it.

Jobs are generator functions in ``core``: they ``yield (fraction, message)`` for progress (anything
else they yield is passed on as a partial result) and ``return`` their result. A worker can stop only
at a yield. Nothing here touches widgets; only the GUI-thread slots connected to these signals do.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Hashable, Iterator

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QThreadPool, Signal
from superqt.utils import GeneratorWorker, WorkerBase

from explorer.core import runtime
from explorer.core.import_gate import import_step
from explorer.core.jobs import run_to_end
from explorer.core.runtime import lower_this_thread, settle_collector
from explorer.pacing import PACER
from explorer.warm_up import warm_up_job

__all__ = ["JobRunner", "Computation", "JobView", "JobViews", "await_all_workers", "warm_up_job",
           "settle_collector_between_jobs"]


class JobRunner(QObject):
    """Runs one generator job at a time with progress, cancel and generations.

    Signals
    -------
    progressed(float, str)
        Fraction done and a message (a job yielded ``(fraction, message)``).
    produced(object)
        Anything else the job yielded (e.g. training metrics), in order.
    succeeded(object)
        The job's return value (only for the newest job).
    failed(object)
        The exception the newest job raised (format it with :func:`explorer.core.errors.user_message`).
    cancelled()
    running_changed(bool)

    An ``urgent`` runner (the app's model loads) starts its jobs on a thread of their own at
    once, never queued behind the pool's jobs: a cancelled job stops only at its next yield,
    and opening a toy model from 128,256 x 4,096 with its jobs running waited 5-13.5 s for them.
    """

    progressed = Signal(float, str)
    produced = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    running_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, urgent: bool = False):
        super().__init__(parent)
        self._generation = 0
        self._urgent = urgent
        self._worker: _Worker | None = None
        self._job_name = ""

    @property
    def running(self) -> bool:
        return self._worker is not None

    @property
    def job_name(self) -> str:
        """The name of the running job's function (``training_job``), or "" when none runs."""
        return self._job_name if self._worker is not None else ""

    @property
    def last_job_name(self) -> str:
        """The name of the last job started, still there when its result lands (for the monkey's record)."""
        return self._job_name

    @property
    def generation(self) -> int:
        return self._generation

    def start(self, job: Callable[..., Iterator], *args, **kwargs) -> int:
        """Start ``job(*args, **kwargs)``; an older job is cancelled. Returns its generation."""
        self.cancel(emit=False)
        self._generation += 1
        gen = self._generation
        self._job_name = getattr(job, "__name__", type(job).__name__)
        steps = job(*args, **kwargs)
        worker = _Worker(_run_steps, steps, getattr(job, "gives_way", True), getattr(job, "always_gated", False))
        worker.steps = steps  # closed in the worker's thread when it is done (see _Worker.run)
        # the lambdas hold the generation, not self: a runner deleted while its
        # job runs is detected in _alive()
        # each lands in its turn (explorer.pacing): results that came together are drawn over passes
        worker.yielded.connect(lambda v, g=gen: PACER.land(self._on_worker_yielded, g, v))
        worker.returned.connect(lambda v, g=gen: PACER.land(self._on_worker_returned, g, v))
        worker.errored.connect(lambda e, g=gen: PACER.land(self._on_worker_errored, g, e))
        worker.aborted.connect(lambda g=gen: PACER.land(self._on_worker_aborted, g))
        self._worker = worker
        self.running_changed.emit(True)
        if self._urgent:
            _start_now(worker)
        else:
            worker.start()
        return gen

    def pause(self) -> None:
        """Hold the job at its next yield (resume() continues it)."""
        if self._worker is not None:
            self._worker.pause()

    def resume(self) -> None:
        if self._worker is not None:
            self._worker.resume()

    @property
    def paused(self) -> bool:
        return self._worker is not None and self._worker.is_paused

    def cancel(self, emit: bool = True) -> None:
        """Ask the current job to stop at its next yield; its result is dropped."""
        if self._worker is None:
            return
        worker, self._worker = self._worker, None
        worker.quit()  # a paused worker sees the request too (superqt checks it first)
        self._generation += 1
        self.running_changed.emit(False)
        if emit:
            self.cancelled.emit()

    # handlers: ignore anything from an older generation, or for a runner
    # whose Qt object is gone (its owner was deleted while the job ran)
    def _alive(self, gen: int) -> bool:
        if not shiboken6.isValid(self):
            worker, self._worker = self._worker, None
            if worker is not None:
                worker.quit()
            return False
        return gen == self._generation

    def _on_worker_yielded(self, gen: int, value) -> None:
        if not self._alive(gen):
            return
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
            self.progressed.emit(float(value[0]), value[1])
        else:
            self.produced.emit(value)

    def _on_worker_returned(self, gen: int, value) -> None:
        if not self._alive(gen):
            return
        self._worker = None
        self.running_changed.emit(False)
        self.succeeded.emit(value)

    def _on_worker_errored(self, gen: int, exc: BaseException) -> None:
        if not self._alive(gen):
            return
        self._worker = None
        self.running_changed.emit(False)
        self.failed.emit(exc)

    def _on_worker_aborted(self, gen: int) -> None:
        if self._alive(gen) and self._worker is not None:
            self._worker = None
            self.running_changed.emit(False)


class _Worker(GeneratorWorker):
    """superqt's generator worker, run without two habits of its ``run()``.

    * It wrapped the job in ``warnings.catch_warnings`` and sent every warning of the process, from any
      thread, to the worker's ``warned`` signal: warnings vanished while any job ran, and two
      overlapping jobs left one handler in place for good.
    * Its ``work()`` returns a ``RuntimeError`` the job raised instead of raising it (superqt takes it
      for a deleted worker), and ``run()`` then only warned: torch reports most failures as
      RuntimeError (a shape, an allocation), and the job never said it had failed nor finished.
    """

    steps = None  # the job's generator (set by JobRunner.start)

    def run(self) -> None:
        lower_this_thread()  # the window's thread first when the cores are short
        self.started.emit()
        self._running = True
        try:
            result = self.work()
            if isinstance(result, RuntimeError):
                if not self._heard():
                    return  # the worker itself is gone: nobody to tell
                raise result
            if not self.abort_requested:
                self.returned.emit(result)
        except Exception as exc:  # noqa: BLE001 (the job's failure, handed to the GUI thread)
            if self._heard():
                self.errored.emit(exc)
        finally:
            sys.setprofile(None)  # the pool's thread goes back unprofiled (_run_steps gates the job's steps)
            _close_steps(self.steps)  # a stopped job's frame (a table, its strings) freed here, not in the window's
            self.steps = None
        self._running = False
        if self._heard():
            self.finished.emit()
            self._finished.emit(self)

    def _heard(self) -> bool:
        """The worker and its signals' object still exist: a job running past the window's close found them
        deleted as the interpreter ended, and its emit raised into Qt's runnable, which printed it."""
        return shiboken6.isValid(self) and shiboken6.isValid(self.signals)


def _run_steps(steps: Iterator, gives_way: bool = True, always_gated: bool = False):
    """superqt's generator around a job's: each step begins once the window's turn has ended and steps
    aside for the turns (:class:`~explorer.core.runtime.WindowTurns`), unless ``job.gives_way`` is False;
    with ``job.always_gated``, each step runs under the gate whether or not the window is lively."""
    gate = runtime.WINDOW_TURNS.gate() if gives_way else runtime.WINDOW_TURNS.no_gate()
    while True:
        if gives_way:
            runtime.WINDOW_TURNS.before_step(gate, always_gated)
        try:
            with import_step():  # a module imported in the step: gated, and no collection, to the step's end
                value = next(steps)
        except StopIteration as stop:
            return stop.value
        yield value


#: the urgent runners' own pool (made when first needed): the global one has a thread per core, all of
#: them may be running cancelled jobs to their next yield (Qt's reserved threads count against its maximum)
_URGENT_POOLS: list[QThreadPool] = []


def _start_now(worker: _Worker) -> None:
    """What superqt's ``start()`` does, in the urgent runners' pool."""
    record = getattr(worker, "_worker_set", None)  # superqt's record of the workers running (private: may go)
    if record is not None and hasattr(worker, "_set_discard"):
        record.add(worker)
        worker._finished.connect(worker._set_discard)
    if not _URGENT_POOLS:
        _URGENT_POOLS.append(QThreadPool(QCoreApplication.instance()))
        _URGENT_POOLS[0].setMaxThreadCount(2)
    _URGENT_POOLS[0].start(worker)


def _pools() -> list[QThreadPool]:
    return [QThreadPool.globalInstance(), *_URGENT_POOLS]


def _close_steps(steps) -> None:
    if steps is not None:
        with contextlib.suppress(ValueError):  # still executing: it ends by itself and frees its frame then
            steps.close()


class Computation(QObject):
    """One derived result, kept current off the GUI thread.

    :meth:`request` says the inputs changed: the current value is dropped at once (``reset``), an older
    run is cancelled so its result never lands, and the job runs in a worker. A *lazy* computation runs
    only while some consumer wants it (:meth:`want`, driven by the views' visibility); a request nobody
    wants waits, and starts when first wanted. Cheap results are set on the spot with :meth:`publish`,
    through the same signals.

    Signals
    -------
    reset()
        The value was dropped (new inputs, or none).
    started()
    progressed(float, str)
    produced(object)
        A partial result the job yielded.
    finished(object)
        The new value.
    failed(object)
        The exception the job raised.
    cancelled()
        The user cancelled the run (no value).
    running_changed(bool)
    """

    reset = Signal()
    started = Signal()
    progressed = Signal(float, str)
    produced = Signal(object)
    finished = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    running_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None, lazy: bool = False):
        super().__init__(parent)
        self.lazy = lazy
        self._runner = JobRunner(self)
        self._runner.progressed.connect(self.progressed)
        self._runner.produced.connect(self.produced)
        self._runner.succeeded.connect(self._on_runner_succeeded)
        self._runner.failed.connect(self._on_runner_failed)
        self._runner.cancelled.connect(self.cancelled)
        self._runner.running_changed.connect(self.running_changed)
        self._value = None
        self._error: BaseException | None = None
        self._key: Hashable = None
        self._pending: tuple | None = None
        self._wanted: set[int] = set()

    # -- read --------------------------------------------------------------------------
    @property
    def value(self):
        """The latest result for the current inputs, or None."""
        return self._value

    @property
    def error(self) -> BaseException | None:
        return self._error

    @property
    def key(self) -> Hashable:
        """The key of the inputs the value (or the running job) is for."""
        return self._key

    @property
    def running(self) -> bool:
        return self._runner.running

    @property
    def pending(self) -> bool:
        """A request waits for somebody to want it."""
        return self._pending is not None

    @property
    def wanted(self) -> bool:
        return not self.lazy or bool(self._wanted)

    # -- write -------------------------------------------------------------------------
    def request(self, job: Callable[..., Iterator], *args, key: Hashable = None, **kwargs) -> None:
        """New inputs: drop the value and compute ``job(*args, **kwargs)`` in a worker.

        With a ``key`` equal to the current one (and a value, a run or a
        request under way) nothing happens: the inputs did not change.
        """
        if key is not None and key == self._key and (self._value is not None or self.running or self.pending):
            return
        self._drop(key)
        if self.wanted:
            self._start(job, args, kwargs)
        else:
            self._pending = (job, args, kwargs)

    def follow(self, key: Hashable, inline: bool, job: Callable[..., Iterator], *args) -> None:
        """Keep the value for inputs ``key``: nothing when it already is (a value,
        or a run for it); otherwise ``job(*args)`` run to the end here when
        ``inline`` (it costs microseconds), else :meth:`request`-ed in a worker."""
        if key == self._key and (self._value is not None or self.running or self.pending):
            return
        if inline:
            self.publish(run_to_end(job(*args)), key=key)
        else:
            self.request(job, *args, key=key)

    def publish(self, value, key: Hashable = None) -> None:
        """Set a value computed on the spot (for inputs cheap to handle here)."""
        self._drop(key)
        self._value = value
        self.finished.emit(value)

    def clear(self) -> None:
        """No inputs any more (no model, nothing selected): drop everything."""
        self._drop(None)

    def cancel(self) -> None:
        """Stop the running job at its next yield (the user asked); no value."""
        self._pending = None
        self._runner.cancel()

    def want(self, consumer: object, wanted: bool = True) -> None:
        """Say whether ``consumer`` needs the value now (a view on screen)."""
        if wanted:
            self._wanted.add(id(consumer))
        else:
            self._wanted.discard(id(consumer))
        if self.wanted and self._pending is not None:
            job, args, kwargs = self._pending
            self._pending = None
            self._start(job, args, kwargs)

    # -- helpers -----------------------------------------------------------------------
    def _drop(self, key: Hashable) -> None:
        self._runner.cancel(emit=False)
        self._pending = None
        self._value = None
        self._error = None
        self._key = key
        self.reset.emit()

    def _start(self, job, args, kwargs) -> None:
        self._runner.start(job, *args, **kwargs)
        self.started.emit()

    def _on_runner_succeeded(self, value) -> None:
        self._value = value
        self.finished.emit(value)

    def _on_runner_failed(self, exc: BaseException) -> None:
        self._error = exc
        self.failed.emit(exc)


class JobView:
    """What a view sees of one of the state's computations (``state.jobs.<name>``).

    Its value and its signals (reset, started, progressed, produced, finished, failed, cancelled,
    running_changed), whether the view wants it (:meth:`want`, driven by the view being on screen) and
    the user's Cancel. It cannot request, publish or clear a result: inputs are the state's business,
    so a view asks the state for an intent instead.
    """

    __slots__ = ("_comp",)

    def __init__(self, comp: Computation):
        self._comp = comp

    @property
    def value(self):
        return self._comp.value

    @property
    def error(self) -> BaseException | None:
        return self._comp.error

    @property
    def running(self) -> bool:
        return self._comp.running

    @property
    def pending(self) -> bool:
        return self._comp.pending

    @property
    def key(self):
        """The key of the inputs the value (or the run) is for: a view tells its own result from an older one."""
        return self._comp.key

    def want(self, consumer: object, wanted: bool = True) -> None:
        """Say whether ``consumer`` needs the value now (a view on screen)."""
        self._comp.want(consumer, wanted)

    def cancel(self) -> None:
        """The user's Cancel: stop the run at its next yield; no value."""
        self._comp.cancel()

    # the computation's signals, to connect to
    reset = property(lambda self: self._comp.reset)
    started = property(lambda self: self._comp.started)
    progressed = property(lambda self: self._comp.progressed)
    produced = property(lambda self: self._comp.produced)
    finished = property(lambda self: self._comp.finished)
    failed = property(lambda self: self._comp.failed)
    cancelled = property(lambda self: self._comp.cancelled)
    running_changed = property(lambda self: self._comp.running_changed)


class JobViews:
    """``state.jobs``: one :class:`JobView` per computation of the state, by name."""

    def __init__(self, **comps: Computation):
        for name, comp in comps.items():
            setattr(self, name, JobView(comp))


def await_all_workers(msecs: int = 10000) -> bool:
    """Ask every running worker to stop and wait for the thread pool (on close). superqt counts a worker
    done once its job has returned, a moment before its pool thread is free: the pool is waited for too."""
    start = time.monotonic()
    try:
        WorkerBase.await_workers(msecs)
    except RuntimeError:
        return False
    done = True
    for pool in _pools():
        done = pool.waitForDone(max(0, msecs - int((time.monotonic() - start) * 1000))) and done
    return done


def settle_collector_between_jobs() -> int:
    """:func:`~explorer.core.runtime.settle_collector` when no worker thread runs (0 otherwise).

    A cancelled job's thread runs on to its next yield after its runner has let it go (the app is no
    longer busy): its frame and half-built objects must not be parked, where a cycle they later join
    would never be collected."""
    if any(pool.activeThreadCount() for pool in _pools()):
        return 0
    return settle_collector()
