"""The on-disk format of a recorded run (see :mod:`explorer.core.recording`):
the header, one step's record, and how a set of row ids is written.

No Qt, no torch here: the reader and the command line use it alone.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.errors import ExplorerError

__all__ = [
    "FORMAT", "VERSION", "HEADER_FILE", "STEPS_FILE", "SNAPSHOT_DIR", "INPUT_TENSOR", "OUTPUT_TENSOR",
    "RecordingError", "RunHeader", "StepRecord", "encode_rows", "decode_rows", "snapshot_name", "write_atomically",
    "header_text",
]

FORMAT = "explorer-embedding-recording"
VERSION = 1
HEADER_FILE = "run.json"
STEPS_FILE = "steps.jsonl"
SNAPSHOT_DIR = "snapshots"
#: tensor names inside a snapshot: names the app's loader takes for the input table and the output matrix
INPUT_TENSOR = "embed_tokens.weight"
OUTPUT_TENSOR = "lm_head.weight"


class RecordingError(ExplorerError):
    """A log directory that cannot be recorded to or read; the message says what to do."""


@dataclass(frozen=True)
class RunHeader:
    """``run.json``: what the steps refer to.

    ``optimizer`` is the optimiser's class name in lower case (``adamw``,
    ``sgd``, ``sparseadam``), or None when the recorder was not told;
    ``lr`` and ``weight_decay`` its first parameter group's; ``planned_steps``
    the run's length when known (Trainer's max_steps).
    """

    name: str
    vocab_size: int
    dim: int
    tied: bool
    has_output: bool
    dtype: str
    sparse: bool = False
    optimizer: str | None = None
    lr: float | None = None
    weight_decay: float | None = None
    every: int = 1
    snapshot_every: int = 0
    planned_steps: int | None = None

    def as_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "name": self.name, "vocab_size": self.vocab_size,
                "dim": self.dim, "tied": self.tied, "has_output": self.has_output, "dtype": self.dtype,
                "sparse": self.sparse, "optimizer": self.optimizer, "lr": self.lr,
                "weight_decay": self.weight_decay, "every": self.every, "snapshot_every": self.snapshot_every,
                "planned_steps": self.planned_steps}

    @classmethod
    def from_json(cls, data: dict, where: str) -> RunHeader:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordingError(f"{where} is not the header of a recorded run (no \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise RecordingError(f"{where} is version {data.get('version')!r} of the format; this explorer reads "
                                 f"version {VERSION}")
        try:
            v, d = int(data["vocab_size"]), int(data["dim"])
            if v < 1 or d < 1:
                raise ValueError
            return cls(name=str(data.get("name") or "recorded run"), vocab_size=v, dim=d,
                       tied=bool(data.get("tied")), has_output=bool(data.get("has_output")),
                       dtype=str(data.get("dtype") or "float32"), sparse=bool(data.get("sparse")),
                       optimizer=data.get("optimizer") if isinstance(data.get("optimizer"), str) else None,
                       lr=_number(data.get("lr")), weight_decay=_number(data.get("weight_decay")),
                       every=int(data.get("every") or 1), snapshot_every=int(data.get("snapshot_every") or 0),
                       planned_steps=int(data["planned_steps"]) if data.get("planned_steps") else None)
        except (KeyError, TypeError, ValueError):
            raise RecordingError(f"{where}: vocab_size and dim must be positive integers") from None


def _number(x) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def encode_rows(ids: np.ndarray, vocab_size: int) -> dict:
    """A sorted set of row ids as JSON: ``{"n": count, "ids": [...]}``, or, when
    more than half the rows are in it, ``{"n": count, "all_but": [...]}`` (a
    tied table's gradient and AdamW's changed rows cover every row: the
    complement is what is short)."""
    ids = np.asarray(ids, np.int64).reshape(-1)
    n = int(ids.size)
    if 2 * n > vocab_size:
        mask = np.ones(vocab_size, bool)
        mask[ids] = False
        return {"n": n, "all_but": np.nonzero(mask)[0].tolist()}
    return {"n": n, "ids": ids.tolist()}


def decode_rows(data, vocab_size: int) -> np.ndarray:
    """The ids of :func:`encode_rows`' JSON, shape (n,) int64 sorted (ids outside the table dropped)."""
    if not isinstance(data, dict):
        return np.zeros(0, np.int64)
    if "all_but" in data:
        mask = np.ones(vocab_size, bool)
        out = np.asarray(data["all_but"] or [], np.int64)
        mask[out[(out >= 0) & (out < vocab_size)]] = False
        return np.nonzero(mask)[0]
    ids = np.asarray(data.get("ids") or [], np.int64)
    return unique_sorted(ids[(ids >= 0) & (ids < vocab_size)])


@dataclass(frozen=True)
class StepRecord:
    """One recorded optimiser step.

    Attributes
    ----------
    step : int
        The optimiser step (1 for the first).
    loss : float or None
        The loss the loop reported (or the model's output ``loss``), None if unknown.
    batch_distinct_ids : int or None
        Distinct ids the input embedding looked up in this step (None: not seen, a sparse lookup).
    rows_with_gradient : ndarray (n,) int64
        Rows of the input table whose gradient was non-zero (tied: of the shared table, usually every row).
    input_rows_with_gradient : ndarray (n,) int64
        Rows with a gradient through the input path alone (untied: the same as rows_with_gradient).
    output_rows_with_gradient : ndarray or None
        Rows of the untied output matrix with a non-zero gradient (None: tied, or no output matrix).
    rows_changed, rows_decay_only : ndarray (n,) int64
        Rows whose values changed since the last recorded step, and those of them without a gradient.
    grad_norm : float or None
        Frobenius norm of the input table's gradient (None: cleared before ``step()``).
    update_norm : float
        Frobenius norm of the table's change, ``‖E_t − E_{t−1}‖``.
    output_grad_norm : float or None
        The untied output matrix's gradient norm.
    """

    step: int
    loss: float | None
    batch_distinct_ids: int | None
    rows_with_gradient: np.ndarray = field(repr=False)
    input_rows_with_gradient: np.ndarray = field(repr=False)
    output_rows_with_gradient: np.ndarray | None = field(repr=False)
    rows_changed: np.ndarray = field(repr=False)
    rows_decay_only: np.ndarray = field(repr=False)
    grad_norm: float | None = None
    update_norm: float = 0.0
    output_grad_norm: float | None = None
    seconds: float | None = None

    @classmethod
    def from_line(cls, data: dict, header: RunHeader) -> StepRecord:
        """One line of steps.jsonl, parsed (raises ValueError/KeyError/TypeError if it is not one)."""
        v = header.vocab_size
        grad = decode_rows(data["rows_with_gradient"], v)
        inp = decode_rows(data["input_rows_with_gradient"], v) if "input_rows_with_gradient" in data else grad
        out = data.get("output_rows_with_gradient")
        distinct = data.get("batch_distinct_ids")
        return cls(
            step=int(data["step"]), loss=_number(data.get("loss")),
            batch_distinct_ids=int(distinct) if isinstance(distinct, int) else None,
            rows_with_gradient=grad, input_rows_with_gradient=inp,
            output_rows_with_gradient=decode_rows(out, v) if out is not None else None,
            rows_changed=decode_rows(data["rows_changed"], v), rows_decay_only=decode_rows(data["rows_decay_only"], v),
            grad_norm=_number(data.get("grad_norm")), update_norm=_number(data.get("update_norm")) or 0.0,
            output_grad_norm=_number(data.get("output_grad_norm")), seconds=_number(data.get("seconds")))

    def as_json(self) -> dict:
        """What ``runs --json`` prints for the step (row ids as lists, the rest as counts)."""
        out = self.output_rows_with_gradient
        return {
            "step": self.step, "loss": self.loss, "rows_with_gradient": self.rows_with_gradient.tolist(),
            "input_rows_with_gradient": self.input_rows_with_gradient.tolist(),
            "output_rows_with_gradient": out.tolist() if out is not None else None,
            "rows_changed": int(self.rows_changed.size), "rows_decay_only": int(self.rows_decay_only.size),
            "batch_distinct_ids": self.batch_distinct_ids, "grad_norm": self.grad_norm,
            "update_norm": self.update_norm, "output_grad_norm": self.output_grad_norm, "seconds": self.seconds,
        }


def snapshot_name(step: int) -> str:
    """The file name of the snapshot after ``step`` (sorts by step)."""
    return f"step-{step:09d}.safetensors"


def write_atomically(path: Path, write) -> None:
    """``write(tmp_path)`` then rename over ``path``: a reader sees the old file or the whole new one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def header_text(header: RunHeader) -> str:
    return json.dumps(header.as_json(), indent=1)
