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
           "snapshot_frame_job"]

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


def recorded_history(header: RunHeader, steps: list[StepRecord], raster_steps: int = 400) -> TrainingHistory:
    """A TrainingHistory of ``steps``: rows ordered by how many recorded steps
    looked them up (a recorded run has no corpus to count), most first."""
    v = header.vocab_size
    counts = np.zeros(v, np.int64)
    for rec in steps:
        counts[rec.input_rows_with_gradient] += 1
    h = TrainingHistory(counts, raster_steps=raster_steps)
    h.extend(step_metrics(rec, v) for rec in steps)
    return h


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
