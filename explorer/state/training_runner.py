"""Qt glue for the training session: ``state.training``.

:class:`TrainingRunner` wraps a Qt-free
:class:`~explorer.core.training.session.TrainingSession` and the
:class:`~explorer.workers.JobRunner` its job runs in. The view calls its
intents and listens to its signals; what the job yields is applied to the
session here, on the GUI thread. The JobRunner is a child of this object,
so the app's shutdown, which cancels every JobRunner it finds, stops a
run too, a paused one included. Imports QtCore and core only.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, SignalInstance

from explorer.core.training.config import TrainConfig
from explorer.core.training.job import Clock, RunHeld, TrainingRun
from explorer.core.training.session import StopReason, TrainingSession
from explorer.workers import JobRunner

__all__ = ["TrainingRunner"]


class TrainingRunner(QObject):
    """Starts, pauses, stops and resets training runs; owns their session.

    Parameters
    ----------
    parent : QObject, optional
        The AppState.
    model_changed : signal, optional
        The state's model_changed: a run on the model's tokenizer stops when it fires.
    clock : Clock, optional
        Passed to the session (tests pace runs with a clock of their own).

    Signals
    -------
    phase_changed(object)
        The session's Phase changed (or the run was held, or failed).
    run_started(object)
        The TrainingRun of the current run: its corpus, classes and first frame.
    stepped(int)
        New steps reached the history (the last step).
    progressed(float, str)
        Preparing the corpus or the model.
    """

    phase_changed = Signal(object)
    run_started = Signal(object)
    stepped = Signal(int)
    progressed = Signal(float, str)

    def __init__(self, parent: QObject | None = None, model_changed: SignalInstance | None = None,
                 clock: Clock | None = None):
        super().__init__(parent)
        self.session = TrainingSession(clock)
        self._uses_model = False
        self._jobs = JobRunner(self)
        self._jobs.produced.connect(self._on_jobs_produced)
        self._jobs.progressed.connect(self.progressed)
        self._jobs.succeeded.connect(self._on_jobs_succeeded)
        self._jobs.failed.connect(self._on_jobs_failed)
        self._jobs.running_changed.connect(self._on_jobs_running_changed)
        if model_changed is not None:
            model_changed.connect(self._on_model_changed)

    @property
    def job_running(self) -> bool:
        """A worker still runs the job (a stopping run included)."""
        return self._jobs.running

    # -- intents -----------------------------------------------------------------------
    def start(self, cfg: TrainConfig, corpus_factory: Callable[[], object], steps_per_second: float | None = None,
              uses_model: bool = False) -> None:
        """Start a new run (an older one is dropped). ``uses_model``: the corpus
        comes from the open model's tokenizer, so a model switch stops the run.

        Raises ConfigError for settings that cannot train (nothing starts).
        """
        cfg.validate()  # before anything changes
        self._jobs.cancel(emit=False)  # the older job first: its control stops with it
        job = self.session.start(cfg, corpus_factory, steps_per_second)
        self._uses_model = uses_model
        self._jobs.start(job)
        self.phase_changed.emit(self.session.phase)

    def pause(self) -> None:
        if self.session.pause():
            self.phase_changed.emit(self.session.phase)

    def resume(self) -> None:
        if self.session.resume():
            self.phase_changed.emit(self.session.phase)

    def stop(self, reason: StopReason = StopReason.USER) -> None:
        """End the run after its current step; the charts and the model stay."""
        if self.session.stop(reason):
            self.phase_changed.emit(self.session.phase)

    def reset(self) -> None:
        """Stop and forget the run."""
        self._jobs.cancel(emit=False)
        self.session.reset()
        self.phase_changed.emit(self.session.phase)

    def set_aside(self) -> TrainingSession:
        """Keep the current session (a run going on ends at its last step, its
        charts and model kept) and go on with an empty one; :meth:`bring_back`
        returns it (the tour trains its own runs in between)."""
        self._jobs.cancel(emit=False)
        kept = self.session
        kept.abandon()
        self.session = TrainingSession(kept.clock)
        self._uses_model = False
        self.phase_changed.emit(self.session.phase)
        return kept

    def bring_back(self, kept: TrainingSession) -> None:
        """Make ``kept`` (from :meth:`set_aside`) the session again, its run and charts with it."""
        self._jobs.cancel(emit=False)
        self.session.reset()
        self.session = kept
        self._uses_model = False
        if kept.run is not None:
            self.run_started.emit(kept.run)
        self.phase_changed.emit(kept.phase)

    def set_speed(self, steps_per_second: float) -> None:
        self.session.set_speed(steps_per_second)

    def save(self, folder: str | Path) -> Path:
        """Save the model of a held or ended run (raises NothingToSave otherwise)."""
        return self.session.save(folder)

    # -- the job -----------------------------------------------------------------------
    def _on_jobs_produced(self, value) -> None:
        """A TrainingRun, a StepBatch or RunHeld."""
        if isinstance(value, RunHeld):
            self.session.apply(value)
            self.phase_changed.emit(self.session.phase)
        elif self.session.apply(value):
            if isinstance(value, TrainingRun):
                self.run_started.emit(value)
            else:
                self.stepped.emit(self.session.last_step)

    def _on_jobs_succeeded(self, ended) -> None:
        self.session.finish(ended)
        self.phase_changed.emit(self.session.phase)

    def _on_jobs_failed(self, exc: BaseException) -> None:
        self.session.fail(exc)
        self.phase_changed.emit(self.session.phase)

    def _on_jobs_running_changed(self, running: bool) -> None:
        if not running:
            # cancelled from outside (the app closing) or ended: a job waiting
            # in a pause must wake up to end; then, if the run got no ending, end it
            self.session.release()
            QTimer.singleShot(0, self._on_job_gone)

    def _on_job_gone(self) -> None:
        if not self._jobs.running and self.session.active:
            self.session.abandon()
            self.phase_changed.emit(self.session.phase)

    def _on_model_changed(self, _table) -> None:
        if self._uses_model and self.session.running:
            self.stop(StopReason.MODEL_CHANGED)
