"""One training run as the window sees it: its control, its run and its history.

:class:`TrainingSession` holds no thread and no Qt. The GUI thread calls
its intents (:meth:`~TrainingSession.start`, pause, resume, stop, reset,
set_speed); ``start`` returns the job a worker runs; whatever the job
yields is handed to :meth:`~TrainingSession.apply` (cheap: it appends to
the history), and its end to :meth:`~TrainingSession.finish` or
:meth:`~TrainingSession.fail` with the exception itself. Charts read
:attr:`~TrainingSession.history` whenever they redraw.
"""

from __future__ import annotations

import enum
import functools
import math
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.training.charts import TrainingHistory
from explorer.core.training.config import TrainConfig
from explorer.core.training.job import (
    BATCH_SECONDS,
    Clock,
    RunEnded,
    RunHeld,
    StepBatch,
    TrainingControl,
    TrainingRun,
    live_training_job,
)

__all__ = ["Phase", "StopReason", "Readout", "TrainingSession", "NothingToSave", "RASTER_STEPS", "LOSS_WINDOW"]

#: the raster keeps the last this many steps
RASTER_STEPS = 400
#: the loss in the readout is the mean over this many last steps
LOSS_WINDOW = 50
#: the speed readout looks at this many recent batches
RATE_WINDOW = 64


class Phase(enum.Enum):
    """Where the session is."""

    IDLE = "idle"  #: no run: nothing to show
    PREPARING = "preparing"  #: the job builds the corpus and the model
    RUNNING = "running"
    PAUSED = "paused"  #: asked to hold; ``held`` once the job has stopped stepping
    STOPPING = "stopping"  #: asked to stop; the job ends after its current step
    FINISHED = "finished"  #: every step done
    STOPPED = "stopped"  #: ended early (the user, or the model its corpus came from changed)
    FAILED = "failed"  #: diverged, or the corpus could not train; ``error`` says why


ACTIVE = frozenset({Phase.PREPARING, Phase.RUNNING, Phase.PAUSED, Phase.STOPPING})
ENDED = frozenset({Phase.FINISHED, Phase.STOPPED, Phase.FAILED})


class StopReason(enum.Enum):
    USER = "user"
    MODEL_CHANGED = "model changed"


class NothingToSave(ExplorerError):
    """Saving was asked for while there is no model that can be read."""


@dataclass(frozen=True)
class Readout:
    """The figures beside the charts, for the latest step.

    ``loss`` is the mean cross-entropy of the last LOSS_WINDOW steps (nats);
    ``ln_v`` the loss of a uniform guess; rows are counts of rows of E.
    """

    step: int
    steps: int
    steps_per_second: float | None
    loss: float
    ln_v: float
    vocab_size: int
    dim: int
    grad_rows: int
    tied_rows: int | None
    changed_rows: int


class TrainingSession:
    """One run at a time, with its control, its TrainingRun and its TrainingHistory.

    Parameters
    ----------
    clock : Clock, optional
        Paces slow runs (in the job) and times the speed readout.
    raster_steps : int
        Steps the raster of the history keeps.
    """

    def __init__(self, clock: Clock | None = None, raster_steps: int = RASTER_STEPS):
        self.clock = clock or Clock()
        self._raster_steps = raster_steps
        self._phase = Phase.IDLE
        self._control: TrainingControl | None = None
        self._cfg: TrainConfig | None = None
        self._run: TrainingRun | None = None
        self._history: TrainingHistory | None = None
        self._error: BaseException | None = None
        self._held = False
        self._stop_reason: StopReason | None = None
        self._rate: deque[tuple[float, int]] = deque(maxlen=RATE_WINDOW)
        self._speed = 0.0

    # -- read ----------------------------------------------------------------------------
    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def active(self) -> bool:
        """A job is under way (stopping included)."""
        return self._phase in ACTIVE

    @property
    def running(self) -> bool:
        """A run the user can pause or stop (preparing, running or paused)."""
        return self._phase in (Phase.PREPARING, Phase.RUNNING, Phase.PAUSED)

    @property
    def paused(self) -> bool:
        return self._phase is Phase.PAUSED

    @property
    def held(self) -> bool:
        """Paused, and the job confirmed it stopped stepping."""
        return self._phase is Phase.PAUSED and self._held

    @property
    def cfg(self) -> TrainConfig | None:
        return self._cfg

    @property
    def run(self) -> TrainingRun | None:
        return self._run

    @property
    def history(self) -> TrainingHistory | None:
        return self._history

    @property
    def error(self) -> BaseException | None:
        """Why the run failed (phase FAILED), as raised."""
        return self._error

    @property
    def stop_reason(self) -> StopReason | None:
        return self._stop_reason

    @property
    def speed(self) -> float:
        """The pace asked for, in steps per second (0: as fast as possible)."""
        return self._speed

    @property
    def last_step(self) -> int:
        return self._history.last_step if self._history is not None else 0

    @property
    def can_save(self) -> bool:
        """The model may be read: the run is held or has ended, after at least one step."""
        return (self._run is not None and self.last_step > 0
                and (self._phase in ENDED or self.held))

    @property
    def silhouette_init(self) -> float | None:
        """The class silhouette of the table before the first step."""
        return self._run.frame.silhouette if self._run is not None else None

    def steps_per_second(self) -> float | None:
        """Recent speed, from the batches' arrival times (None: not enough yet)."""
        if len(self._rate) < 2:
            return None
        (t0, s0), (t1, s1) = self._rate[0], self._rate[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 else None

    def readout(self) -> Readout | None:
        """The figures of the latest step, or None before the first."""
        h, run = self._history, self._run
        if h is None or h.n == 0 or run is None:
            return None
        cfg = run.cfg
        return Readout(
            step=h.last_step, steps=cfg.steps, steps_per_second=self.steps_per_second(),
            loss=float(np.mean(h.series("loss")[-LOSS_WINDOW:])), ln_v=math.log(max(h.vocab_size, 2)),
            vocab_size=h.vocab_size, dim=cfg.dim, grad_rows=int(h.series("input_grad_rows")[-1]),
            tied_rows=int(h.series("grad_rows")[-1]) if cfg.tied else None,
            changed_rows=int(h.series("changed_rows")[-1]),
        )

    # -- intents ---------------------------------------------------------------------------
    def start(self, cfg: TrainConfig, corpus_factory: Callable[[], object], steps_per_second: float | None = None,
              batch_seconds: float = BATCH_SECONDS) -> Callable[[], Iterator]:
        """Begin a new run; the history restarts. An older job is told to stop.

        Returns
        -------
        callable
            The job for a worker: calling it returns the generator of
            :func:`~explorer.core.training.job.live_training_job`.

        Raises
        ------
        ConfigError
            The settings cannot train (nothing changes).
        """
        cfg.validate()
        if self._control is not None:
            self._control.stop()
        if steps_per_second is not None:
            self._speed = float(steps_per_second)
        self._clear()
        self._cfg = cfg
        self._control = TrainingControl(self._speed)
        self._phase = Phase.PREPARING
        job = functools.partial(live_training_job, corpus_factory, cfg, self._control, self.clock, batch_seconds)
        return functools.update_wrapper(job, live_training_job)  # named as its job (the runner's, a walk's reports)

    def pause(self) -> bool:
        """Hold the run between two steps; True when that changed anything."""
        if self._phase not in (Phase.PREPARING, Phase.RUNNING):
            return False
        self._control.pause()
        self._phase, self._held = Phase.PAUSED, False
        return True

    def resume(self) -> bool:
        if self._phase is not Phase.PAUSED:
            return False
        self._control.resume()
        self._phase, self._held = (Phase.RUNNING if self._run is not None else Phase.PREPARING), False
        self._rate.clear()  # the pause is no part of the speed
        return True

    def stop(self, reason: StopReason = StopReason.USER) -> bool:
        """End the run after its current step; the history and the model stay."""
        if not self.running:
            return False
        self._control.stop()
        self._phase, self._held, self._stop_reason = Phase.STOPPING, False, reason
        return True

    def reset(self) -> None:
        """Stop any job and forget the run."""
        if self._control is not None:
            self._control.stop()
        self._control = None
        self._clear()

    def set_speed(self, steps_per_second: float) -> None:
        """Pace the run (0: as fast as possible); applies to a running job at once."""
        self._speed = float(steps_per_second)
        if self._control is not None:
            self._control.steps_per_second = self._speed
        self._rate.clear()

    def save(self, folder: str | Path) -> Path:
        """Save the run's model as a folder the explorer opens (safetensors, tokenizer, classes).

        Raises
        ------
        NothingToSave
            No run, no step yet, or a run that is still stepping.
        """
        from explorer.core.training.model import save_model_folder

        if not self.can_save:
            raise NothingToSave("There is no model to save yet: train, then pause or stop the run.")
        run = self._run
        example = run.corpus.sentences[0] if run.corpus.sentences else ""
        return save_model_folder(run.model, run.cfg, run.corpus.words, run.corpus.classes, folder,
                                 example_text=example[:200])

    # -- from the job ----------------------------------------------------------------------
    def apply(self, event) -> bool:
        """Take one value the job yielded (GUI thread); True when the history changed."""
        if not self.active:
            return False
        if isinstance(event, StepBatch):
            if self._history is None:
                return False
            self._history.extend(event.steps)
            if event.frame is not None:
                self._history.set_frame(event.frame)
            self._rate.append((self.clock.now(), self._history.last_step))
            return True
        if isinstance(event, TrainingRun):
            self._run = event
            self._history = TrainingHistory(event.corpus.counts(), self._raster_steps)
            self._history.set_frame(event.frame)
            if self._phase is Phase.PREPARING:
                self._phase = Phase.RUNNING
            return True
        if isinstance(event, RunHeld):
            self._held = self._phase is Phase.PAUSED
            return False
        return False

    def finish(self, ended: RunEnded | None) -> None:
        """The job returned."""
        if not self.active:
            return
        completed = ended is not None and ended.completed and self._phase is not Phase.STOPPING
        self._phase = Phase.FINISHED if completed else Phase.STOPPED
        if self._stop_reason is None and not completed:
            self._stop_reason = StopReason.USER
        self._held = False

    def fail(self, exc: BaseException) -> None:
        """The job raised ``exc``; the history so far stays."""
        if not self.active:
            return
        self._phase, self._error, self._held = Phase.FAILED, exc, False

    def release(self) -> None:
        """No worker runs the job any more, or soon none will: a job waiting in
        a pause must not wait on (its thread could never end)."""
        if self._control is not None:
            self._control.stop()

    def abandon(self) -> None:
        """The job was cancelled from outside (the app closing): end the run here too."""
        if self._control is not None:
            self._control.stop()
        if self.active:
            self._phase, self._held = Phase.STOPPED, False
            self._stop_reason = self._stop_reason or StopReason.USER

    def _clear(self) -> None:
        self._phase = Phase.IDLE
        self._cfg = None
        self._run = None
        self._history = None
        self._error = None
        self._held = False
        self._stop_reason = None
        self._rate.clear()
