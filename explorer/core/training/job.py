"""A training run for a live view, as a generator a worker drives.

The job yields small typed values: a :class:`TrainingRun` once the corpus
and the model are built, then :class:`StepBatch` objects (the steps done
since the last one, and with some of them a
:class:`~explorer.core.training.frames.TableFrame` computed here, in the
worker), and :class:`RunHeld` when a pause takes hold. It returns a
:class:`RunEnded`. Divergence raises
:class:`~explorer.core.training.model.TrainingDiverged` (a ``FloatingPointError``),
impossible settings :class:`~explorer.core.training.config.ConfigError`.

Pause, stop and speed come from a :class:`TrainingControl` the GUI thread
sets; time comes from a :class:`Clock`, so tests can pace a run without
waiting. No Qt here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from explorer.core.runtime import WINDOW_TURNS, limit_torch_threads
from explorer.core.training.config import TrainConfig
from explorer.core.training.corpus import corpus_class_index
from explorer.core.training.frames import FrameMaker, TableFrame
from explorer.core.training.model import StepMetrics, ToyLM, train

__all__ = ["Clock", "TrainingControl", "TrainingRun", "StepBatch", "RunHeld", "RunEnded", "training_job",
           "live_training_job", "BATCH_SECONDS", "PACED_BATCH_SECONDS", "FRAME_SECONDS"]

#: the job hands its steps over about this often at full speed: each batch
#: costs the GUI thread (and, through the GIL, the worker) a little, and the
#: charts redraw a few times a second then anyway
BATCH_SECONDS = 0.2
#: ... and this often in a paced run, whose charts redraw more often
PACED_BATCH_SECONDS = 0.05
#: a batch carries a new TableFrame once this much time passed since the last
#: one (the per-row charts redraw about twice a second), and always at the end
FRAME_SECONDS = 0.25


class Clock:
    """The time a run is paced by: the real one. Tests pass a clock they move by hand."""

    def now(self) -> float:
        """Seconds from an arbitrary origin."""
        return time.perf_counter()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Wait until ``event`` is set or ``seconds`` passed; True when it was set."""
        return event.wait(max(0.0, seconds))


class TrainingControl:
    """Pause, stop and speed, set from the GUI thread and read by the job between steps.

    ``steps_per_second`` <= 0 means as fast as possible. A paused job waits
    on an event (it costs nothing while it waits); :meth:`stop` releases it.
    """

    def __init__(self, steps_per_second: float = 0.0):
        self._steps_per_second = float(steps_per_second)
        self._paused = False
        self._stopped = False
        self._running = threading.Event()  # clear while paused
        self._running.set()
        self._wake = threading.Event()  # set by any change, to cut a pacing wait short

    @property
    def steps_per_second(self) -> float:
        return self._steps_per_second

    @steps_per_second.setter
    def steps_per_second(self, value: float) -> None:
        self._steps_per_second = float(value)
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def stopped(self) -> bool:
        return self._stopped

    def pause(self) -> None:
        self._paused = True
        self._running.clear()
        self._wake.set()

    def resume(self) -> None:
        self._paused = False
        self._running.set()
        self._wake.set()

    def stop(self) -> None:
        self._stopped = True
        self._paused = False
        self._running.set()
        self._wake.set()

    def wait_while_paused(self) -> None:
        """Block until resumed or stopped (the job's thread, while paused)."""
        self._running.wait()

    def wait_for_change(self, clock: Clock, seconds: float) -> None:
        """Sleep up to ``seconds`` by ``clock``, less if pause, stop or speed change."""
        clock.wait(self._wake, seconds)

    def clear_wake(self) -> None:
        self._wake.clear()


@dataclass(frozen=True)
class TrainingRun:
    """What a live run hands over before its first step.

    ``model`` is the torch module being trained: read it only while the run
    is held (after :class:`RunHeld`) or once it has ended.
    """

    corpus: object
    cfg: TrainConfig
    model: object = field(repr=False)
    #: the corpus's classes (names sorted, as in a saved model), or None
    classes: object = field(repr=False)
    #: the table before the first step (step 0)
    frame: TableFrame = field(repr=False)


@dataclass(frozen=True)
class StepBatch:
    """Steps done since the last batch, in order, and maybe a new frame of the table."""

    steps: tuple[StepMetrics, ...]
    frame: TableFrame | None = None

    @property
    def last_step(self) -> int:
        if self.steps:
            return self.steps[-1].step
        return self.frame.step if self.frame is not None else 0


@dataclass(frozen=True)
class RunHeld:
    """The pause took hold after ``step``: the job waits and the model can be read."""

    step: int


@dataclass(frozen=True)
class RunEnded:
    """What the job returns: its last step, and whether it did every step asked for."""

    last_step: int
    completed: bool


def training_job(corpus_ids: np.ndarray, vocab_size: int, cfg: TrainConfig, model=None,
                 control: TrainingControl | None = None, clock: Clock | None = None,
                 batch_seconds: float = BATCH_SECONDS, frames: FrameMaker | None = None,
                 frame_seconds: float = FRAME_SECONDS) -> Iterator[StepBatch | RunHeld]:
    """Run :func:`~explorer.core.training.model.train` for a live view: batches, pause, stop, pace.

    Yields
    ------
    StepBatch
        The steps done since the last yield, once ``batch_seconds`` have
        passed (so a view gets the same few batches a second however fast
        the steps are; at most PACED_BATCH_SECONDS in a paced run), before a pause, at the end and before a divergence
        is raised. With ``frames``, a batch also carries a TableFrame of the
        table after its last step, computed here, once ``frame_seconds``
        passed since the last frame, and always on the last batch.
    RunHeld
        After the batch that precedes a pause; the job then waits, without
        stepping, until resumed or stopped.

    Returns
    -------
    int
        The last step done.

    A slow ``control.steps_per_second`` spaces the steps out by ``clock``;
    a change of speed, a pause or a stop cuts the wait short.
    """
    control = control or TrainingControl()
    clock = clock or Clock()
    limit_torch_threads()
    if model is None:
        import torch

        torch.manual_seed(cfg.seed)  # what train() does before building: the same initial table
        model = ToyLM.build(vocab_size, cfg)
    weight = model.embed_tokens.weight
    pending: list[StepMetrics] = []
    last_yield = clock.now()
    frame_step, frame_time = 0, last_yield
    pace, pace_t0, pace_n = 0.0, 0.0, 0  # step n of the current pace is due at pace_t0 + n / pace
    last_step = 0

    def batch(final: bool) -> StepBatch | None:
        nonlocal pending, frame_step, frame_time
        now = clock.now()
        frame = None
        moved = last_step > frame_step
        if frames is not None and moved and (final or now - frame_time >= frame_seconds):
            frame = frames.frame(weight.detach().numpy(), last_step)
            frame_step, frame_time = last_step, now
        if not pending and frame is None:
            return None
        out = StepBatch(tuple(pending), frame)
        pending = []
        return out

    steps = train(corpus_ids, vocab_size, cfg, model=model)
    try:
        while not control.stopped:
            if control.paused:
                out = batch(final=True)
                if out is not None:
                    yield out
                yield RunHeld(last_step)
                control.wait_while_paused()
                pace = 0.0  # restart the pacing clock after a pause
                last_yield = clock.now()
                continue
            WINDOW_TURNS.between_steps()  # each step after the window's turn; none profiled
            try:
                m = next(steps)
            except StopIteration:
                break
            pending.append(m)
            last_step = m.step
            now = clock.now()
            sps = control.steps_per_second
            if sps > 0:
                if pace != sps:
                    pace, pace_t0, pace_n = sps, now, 0
                pace_n += 1
                due = pace_t0 + pace_n / sps
                while now < due:
                    control.clear_wake()
                    if control.stopped or control.paused or control.steps_per_second != sps:
                        break
                    control.wait_for_change(clock, due - now)
                    now = clock.now()
            else:
                pace = 0.0
            if now - last_yield >= (batch_seconds if sps <= 0 else min(batch_seconds, PACED_BATCH_SECONDS)):
                out = batch(final=False)
                if out is not None:
                    yield out
                last_yield = now
    except FloatingPointError:
        out = batch(final=True)  # the steps before the bad one still reach the charts
        if out is not None:
            yield out
        raise
    finally:
        steps.close()
    out = batch(final=True)
    if out is not None:
        yield out
    return last_step


def live_training_job(corpus_factory: Callable[[], object], cfg: TrainConfig,
                      control: TrainingControl | None = None, clock: Clock | None = None,
                      batch_seconds: float = BATCH_SECONDS):
    """Build the corpus and the model, then train with :func:`training_job`.

    Yields ``(fraction, message)`` while preparing, then one
    :class:`TrainingRun`, then what :func:`training_job` yields. Returns a
    :class:`RunEnded`. ``corpus_factory()`` returns a Corpus (called here,
    off the GUI thread: tokenizing can take seconds).

    Raises
    ------
    ConfigError
        Impossible settings (before any work), or a corpus that cannot train.
    TrainingDiverged
        The loss diverged; the steps before it were yielded.
    """
    cfg.validate()
    control = control or TrainingControl()
    yield 0.0, "Preparing the corpus…"
    corpus = corpus_factory()
    if control.stopped:
        return RunEnded(0, False)
    yield 0.5, "Building the model…"
    import torch

    limit_torch_threads()
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    classes = corpus_class_index(corpus)
    init = model.embed_tokens.weight.detach().numpy()
    frames = FrameMaker(init, classes.of if classes is not None else None,
                        n_classes=len(classes.names) if classes is not None else 0)
    yield TrainingRun(corpus, cfg, model, classes, frames.frame(init, 0))
    last = yield from training_job(corpus.ids, corpus.vocab_size, cfg, model=model, control=control, clock=clock,
                                   batch_seconds=batch_seconds, frames=frames)
    return RunEnded(last, last >= cfg.steps)
