"""Run core generators off the GUI thread and hand back plain data.

A :class:`JobRunner` runs one kind of job at a time (loading a model, the
neighbours of a big table, ...). Starting a new job asks the old one to stop
and bumps a generation counter, so a stale result never overwrites a fresh
one. Workers never touch widgets or AppState; only the GUI-thread slots
connected to the runner's signals do.

Jobs are generator functions: they ``yield (fraction, message)`` for
progress and ``return`` their result. The worker can stop at any yield.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, Signal
from superqt.utils import GeneratorWorker, WorkerBase

from .core.runtime import limit_torch_threads
from .core.overview import MatrixOverview, iter_matrix_overview
from .core.sources import EmbeddingTable, SourceError, open_table

__all__ = ["JobRunner", "LoadedModel", "load_model_job", "await_all_workers"]


@dataclass
class LoadedModel:
    """What the loader hands to the GUI thread."""

    table: EmbeddingTable
    overview: MatrixOverview
    seconds: float


def load_model_job(spec: str) -> Iterator[tuple[float, str]]:
    """Open ``spec``, read it into memory when it fits, build the overview."""
    import time

    t0 = time.perf_counter()
    yield 0.02, f"Opening {spec}…"
    table = open_table(spec)
    limit_torch_threads(import_torch=False)
    yield 0.3, f"Reading {table.vocab_size:,} × {table.dim:,} table…"
    if table.fits_in_memory:
        blocks = max(1, table.vocab_size // 16384 + 1)
        for k, (start, _blk) in enumerate(table.iter_blocks()):
            yield 0.3 + 0.5 * k / blocks, "Reading rows…"
        table.matrix()
        yield 0.8, "Normalising rows for neighbour search…"
        table.unit_matrix()
    table.completion_pieces()  # for the search boxes; here, not on the GUI thread
    yield 0.85, "Drawing the overview…"
    gen = iter_matrix_overview(table)
    while True:
        try:
            fraction = next(gen)
        except StopIteration as stop:
            overview = stop.value
            break
        yield 0.85 + 0.14 * fraction, "Drawing the overview…"
    yield 1.0, "Done"
    return LoadedModel(table, overview, time.perf_counter() - t0)


def warm_up_job():
    """Import torch off the GUI thread once the window is up: the lookup view
    and the training need it, and importing it takes over a second."""
    yield 0.0, "Preparing torch…"
    limit_torch_threads()
    return True


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
    failed(str)
        A message for the user (only for the newest job).
    cancelled()
    running_changed(bool)
    """

    progressed = Signal(float, str)
    produced = Signal(object)
    succeeded = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    running_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._generation = 0
        self._worker: GeneratorWorker | None = None

    @property
    def running(self) -> bool:
        return self._worker is not None

    @property
    def generation(self) -> int:
        return self._generation

    def start(self, job: Callable[..., Iterator], *args, **kwargs) -> int:
        """Start ``job(*args, **kwargs)``; an older job is cancelled. Returns its generation."""
        self.cancel(emit=False)
        self._generation += 1
        gen = self._generation
        worker = GeneratorWorker(job, *args, **kwargs)
        worker.yielded.connect(lambda v, g=gen: self._on_worker_yielded(g, v))
        worker.returned.connect(lambda v, g=gen: self._on_worker_returned(g, v))
        worker.errored.connect(lambda e, g=gen: self._on_worker_errored(g, e))
        worker.aborted.connect(lambda g=gen: self._on_worker_aborted(g))
        self._worker = worker
        self.running_changed.emit(True)
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
        self._worker.quit()
        self._worker = None
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

    def _on_worker_errored(self, gen: int, exc: Exception) -> None:
        if not self._alive(gen):
            return
        self._worker = None
        self.running_changed.emit(False)
        self.failed.emit(user_message(exc))

    def _on_worker_aborted(self, gen: int) -> None:
        if self._alive(gen) and self._worker is not None:
            self._worker = None
            self.running_changed.emit(False)


def user_message(exc: BaseException) -> str:
    """A one-line message for the user from an exception raised by a job."""
    if isinstance(exc, SourceError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "Not enough memory for this table; try a smaller one."
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, (ValueError, OSError)) else text


def await_all_workers(msecs: int = 10000) -> bool:
    """Ask every running worker to stop and wait for the thread pool (on close)."""
    try:
        WorkerBase.await_workers(msecs)
        return True
    except RuntimeError:
        return False


def neighbors_job(table: EmbeddingTable, query: np.ndarray, k: int, exclude: list[int]):
    """Neighbours of ``query`` over a table too big for memory.

    Streams the table in blocks of about 32 MB, keeps each block's top k with
    the core search, and merges them; stops at any yield when cancelled.
    """
    from .core.geometry import Neighbor, nearest_neighbors

    block = max(256, 8 * 1024 * 1024 // max(1, table.dim))
    total = table.trained_rows
    best: list[Neighbor] = []
    for start, rows in table.iter_blocks(block, stop=total):
        local_excl = [i - start for i in exclude if start <= i < start + len(rows)]
        for nb in nearest_neighbors(rows, query, k=k, exclude=local_excl):
            best.append(Neighbor(nb.id + start, nb.cosine))
        best = sorted(best, key=lambda n: -n.cosine)[:k]
        yield (start + len(rows)) / total, f"Searching neighbours… {start + len(rows):,} of {total:,} rows"
    return best
