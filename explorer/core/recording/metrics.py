"""A recorded run as the Training tab's charts and lesson read a toy run:
each :class:`~explorer.core.recording.format.StepRecord` as a
:class:`~explorer.core.training.model.StepMetrics`, the run's settings as a
:class:`~explorer.core.training.config.TrainConfig`, and the rows that have
never moved. No Qt here.
"""

from __future__ import annotations

import math

import numpy as np

from explorer.core.recording.format import RunHeader, StepRecord
from explorer.core.training.charts import TrainingHistory
from explorer.core.training.config import TrainConfig
from explorer.core.training.model import StepMetrics

__all__ = ["step_metrics", "lesson_config", "recorded_history", "never_moved", "planned_steps", "read_snapshot",
           "snapshot_frame_job", "RecordedSteps"]

#: the optimiser's class name (lower case) -> the lesson's optimiser key
_OPTIMIZERS = {"sgd": "sgd", "adam": "adam", "adamw": "adamw", "sparseadam": "sparse_adam"}


def step_metrics(rec: StepRecord, vocab_size: int) -> StepMetrics:
    """``rec`` as the toy run's per-step metrics (loss NaN when none was recorded)."""
    distinct = rec.batch_distinct_ids if rec.batch_distinct_ids is not None else rec.input_rows_with_gradient.size
    return StepMetrics(
        step=rec.step, loss=rec.loss if rec.loss is not None else math.nan, vocab_size=vocab_size,
        batch_distinct_ids=int(distinct), grad_rows=int(rec.rows_with_gradient.size),
        input_grad_rows=int(rec.input_rows_with_gradient.size), changed_rows=int(rec.rows_changed.size),
        decay_only_rows=int(rec.rows_decay_only.size), grad_ids=rec.rows_with_gradient.astype(np.int32),
        changed_ids=rec.rows_changed.astype(np.int32))


def planned_steps(header: RunHeader, last_step: int) -> int:
    """The charts' x range: the planned length, or (unknown, or passed) the next round figure above the last step."""
    if header.planned_steps and header.planned_steps >= last_step:
        return int(header.planned_steps)
    top = max(100, int(last_step * 1.25))
    magnitude = 10 ** max(0, len(str(top)) - 2)
    return -(-top // magnitude) * magnitude


def lesson_config(header: RunHeader, last_step: int) -> TrainConfig:
    """The settings the lesson's sentences speak of (an optimiser it does not know keeps its own name)."""
    opt = _OPTIMIZERS.get(header.optimizer or "", header.optimizer or "an unnamed optimiser")
    return TrainConfig(steps=planned_steps(header, last_step), dim=header.dim, lr=header.lr or 0.0,
                       optimizer=opt, weight_decay=header.weight_decay or 0.0, tied=header.tied,
                       sparse=header.sparse)


class RecordedSteps:
    """The steps of a run read so far, kept in bounded memory for the charts.

    Every step's figures are kept (a few numbers each); the row ids only of
    the last ``raster_steps`` steps (the raster shows no more), and for the
    rest the per-row counts: how many steps looked each row up, gave it a
    gradient, changed it. A dense run (AdamW changes all V rows every step)
    so costs V x raster_steps ids, not V x steps.
    """

    def __init__(self, header: RunHeader, raster_steps: int = 400):
        from collections import deque

        self.header = header
        self.raster_steps = raster_steps
        v = header.vocab_size
        self.looked_up = np.zeros(v, np.int64)
        self.grad_count = np.zeros(v, np.int64)
        self.change_count = np.zeros(v, np.int64)
        self._light: list[StepMetrics] = []
        self._recent: deque = deque(maxlen=raster_steps)
        self.seconds: list[tuple[int, float]] = []  # (step, seconds) of the steps that have a time

    def __len__(self) -> int:
        return len(self._light)

    @property
    def last_step(self) -> int:
        return self._light[-1].step if self._light else 0

    def add(self, records: list[StepRecord]) -> list[StepMetrics]:
        """Take new steps (in order); returns their full metrics, ids included."""
        v = self.header.vocab_size
        out = []
        for rec in records:
            m = step_metrics(rec, v)
            out.append(m)
            self.looked_up[rec.input_rows_with_gradient] += 1
            self.grad_count[m.grad_ids] += 1
            self.change_count[m.changed_ids] += 1
            self._light.append(StepMetrics(m.step, m.loss, v, m.batch_distinct_ids, m.grad_rows, m.input_grad_rows,
                                           m.changed_rows, m.decay_only_rows))
            self._recent.append(m)
            if rec.seconds is not None:
                self.seconds.append((rec.step, rec.seconds))
        return out

    def history(self) -> TrainingHistory:
        """A TrainingHistory of every step so far, rows ordered by how many steps looked
        them up (a recorded run has no corpus to count), most first."""
        h = TrainingHistory(self.looked_up.copy(), raster_steps=self.raster_steps)
        older = len(self._light) - len(self._recent)
        h.extend(self._light[:older])
        h.extend(self._recent)
        h.grad_count[:] = self.grad_count  # the older steps came without their ids
        h.change_count[:] = self.change_count
        return h

    def steps_per_second(self, window: int = 64) -> float | None:
        """The loop's speed over its last ``window`` timed steps, or None."""
        recent = self.seconds[-window:]
        if len(recent) < 2 or recent[-1][1] <= recent[0][1]:
            return None
        return (recent[-1][0] - recent[0][0]) / (recent[-1][1] - recent[0][1])


def recorded_history(header: RunHeader, steps: list[StepRecord], raster_steps: int = 400) -> TrainingHistory:
    """A TrainingHistory of ``steps`` (see RecordedSteps.history)."""
    kept = RecordedSteps(header, raster_steps)
    kept.add(steps)
    return kept.history()


def never_moved(h: TrainingHistory) -> np.ndarray:
    """Ids of the rows no recorded step changed, shape (n,) int64."""
    return np.nonzero(h.change_count == 0)[0]


def read_snapshot(path) -> np.ndarray:
    """The input table of a snapshot, shape (V, d) float32 (bfloat16 read through torch)."""
    from safetensors import safe_open

    from explorer.core.recording.format import INPUT_TENSOR

    with safe_open(str(path), framework="pt") as f:
        return f.get_tensor(INPUT_TENSOR).float().numpy()


def snapshot_frame_job(first_path, path, step: int):
    """Generator job: the :class:`~explorer.core.training.frames.TableFrame` of the
    snapshot ``path`` (after ``step``): each row's drift from the first snapshot,
    the PCA of the table. Yields (fraction, message), then the frame."""
    from explorer.core.training.frames import FrameMaker

    yield 0.0, f"Reading the snapshot of step {step:,}"
    first = read_snapshot(first_path)
    table = read_snapshot(path)
    if table.shape != first.shape:
        return None
    yield 0.5, "PCA of the snapshot"
    yield FrameMaker(first).frame(table, step)
    return None
