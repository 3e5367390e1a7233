"""Following a recorded run while it is written: ``python -m explorer --watch LOGDIR``.

:class:`RecordingFollower` polls the log directory (a QTimer): a worker
reads and parses the new whole lines and lists the snapshots; on the GUI
thread the steps are added to the TrainingHistory the Training tab's charts
draw (vectorised, per step). The drift and PCA of each new snapshot are
computed in a worker too. Imports QtCore and core only.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from explorer.core.errors import user_message
from explorer.core.recording.format import RecordingError
from explorer.core.recording.metrics import (
    RecordedSteps,
    lesson_config,
    never_moved,
    planned_steps,
    snapshot_frame_job,
)
from explorer.core.recording.reader import StepLogFollower, StepsRead, read_header, read_steps_job
from explorer.core.training.frames import TableFrame
from explorer.workers import JobRunner

__all__ = ["RecordingFollower", "POLL_MS"]

#: how often the directory is read
POLL_MS = 500
#: the speed readout looks at this many last steps
RATE_STEPS = 64


class RecordingFollower(QObject):
    """A recorded run, read as it grows. The charts read it like a training session
    (``history``, ``speed``, ``silhouette_init``).

    Signals
    -------
    restarted()
        The history was (re)built: new axes (first steps, a new snapshot, the run outgrew the x axis).
    stepped(int)
        New whole steps arrived (the last step).
    snapshot_added(int, str)
        A newer snapshot was written (its step and path).
    problem(str)
        The directory cannot be read (yet), in a sentence; '' once it can.
    partial_changed(int)
        The bytes after the last whole step changed (a step being written, or cut by a crash).
    """

    restarted = Signal()
    stepped = Signal(int)
    snapshot_added = Signal(int, str)
    problem = Signal(str)
    partial_changed = Signal(int)

    speed = 1.0  # the charts draw every frame in full (a recorded run is never "flat out" in this window)
    silhouette_init = None  # a recorded run has no word classes

    def __init__(self, logdir: str | Path, parent: QObject | None = None, poll_ms: int = POLL_MS):
        super().__init__(parent)
        self.logdir = Path(logdir)
        self.header = None
        self.history = None
        self.steps: RecordedSteps | None = None
        self.latest_snapshot: tuple[int, Path] | None = None
        self.frame: TableFrame | None = None
        self.message = ""
        self._reader: StepLogFollower | None = None
        self._planned = 0
        self._partial = 0
        self._frames = JobRunner(self)
        self._frames.produced.connect(self._on_frames_produced)
        self._reads = JobRunner(self)
        self._reads.produced.connect(self._on_reads_produced)
        self._reads.failed.connect(self._on_reads_failed)
        self.timer = QTimer(self)
        self.timer.setInterval(poll_ms)
        self.timer.timeout.connect(self.poll)

    def start(self) -> None:
        """Read what is there now, then follow the directory."""
        self.poll()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()
        self._frames.cancel(emit=False)
        self._reads.cancel(emit=False)

    # -- read -----------------------------------------------------------------------------
    @property
    def cfg(self):
        """The settings the lesson speaks of (None before the header is read)."""
        return lesson_config(self.header, self.last_step) if self.header is not None else None

    @property
    def last_step(self) -> int:
        return self.steps.last_step if self.steps is not None else 0

    @property
    def planned_steps(self) -> int:
        return self._planned

    @property
    def partial_bytes(self) -> int:
        """Bytes after the last whole step (a step being written, or cut by a crash)."""
        return self._partial

    def steps_per_second(self) -> float | None:
        """The training loop's speed over its last recorded steps (from their times), or None."""
        return self.steps.steps_per_second(RATE_STEPS) if self.steps is not None else None

    def never_moved(self):
        """Ids of the rows no recorded step changed (empty before the first step)."""
        return never_moved(self.history) if self.history is not None and self.history.n else []

    # -- the directory ----------------------------------------------------------------------
    def poll(self) -> None:
        """Look for new whole steps and a newer snapshot (in a worker; one look at a time)."""
        if self._reader is None:
            try:
                self.header = read_header(self.logdir)  # a small file, read once
            except RecordingError as exc:
                self._set_problem(user_message(exc))
                return
            self._reader = StepLogFollower(self.logdir, self.header)
            self.steps = RecordedSteps(self.header)
            self._set_problem("")
        if not self._reads.running:
            self._reads.start(read_steps_job, self._reader, self.logdir)

    def _on_reads_produced(self, found: StepsRead) -> None:
        """New steps (the charts' history grows), or the snapshots."""
        if found.partial_bytes != self._partial:
            self._partial = found.partial_bytes
            self.partial_changed.emit(self._partial)  # a cut tail alone adds no step to redraw for
        self._set_problem("")
        if found.steps:
            metrics = self.steps.add(found.steps)
            if self.history is None or found.steps[-1].step > self._planned:
                self._rebuild()
            else:
                self.history.extend(metrics)
            self.stepped.emit(self.last_step)
            return
        if not found.snapshots or found.snapshots[-1] == self.latest_snapshot:
            return
        self.latest_snapshot = found.snapshots[-1]
        step, path = self.latest_snapshot
        self._frames.start(snapshot_frame_job, found.snapshots[0][1], path, step)
        if self.history is not None:
            self._rebuild()  # rows re-ordered by their counts so far
        self.snapshot_added.emit(step, str(path))

    def _on_reads_failed(self, exc: BaseException) -> None:
        """The directory could not be read (this time)."""
        self._set_problem(user_message(exc))

    def _rebuild(self) -> None:
        """The history from every step so far (rows re-ordered by their counts): once per
        snapshot, so the cost of the re-ordering stays a small share of the run's."""
        self._planned = planned_steps(self.header, self.last_step)
        self.history = self.steps.history()
        if self.frame is not None:
            self.history.set_frame(self.frame)
        self.restarted.emit()

    def _on_frames_produced(self, value) -> None:
        """A snapshot's drift and PCA."""
        if isinstance(value, TableFrame):
            self.frame = value
            if self.history is not None and value.drift.shape[0] == self.history.vocab_size:
                self.history.set_frame(value)

    def _set_problem(self, text: str) -> None:
        if text != self.message:
            self.message = text
            self.problem.emit(text)
