"""Reading a recorded run, whole or as it grows.

:class:`StepLogFollower` reads ``steps.jsonl`` from where it stopped: only
lines ended by a newline count, so a line the recorder is still writing
(or one cut by a crash) is left for later and never parsed half-written.
:func:`read_run` reads a whole log directory once. No Qt, no torch here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.recording.format import (
    HEADER_FILE,
    SNAPSHOT_DIR,
    STEPS_FILE,
    RecordingError,
    RunHeader,
    StepRecord,
)

__all__ = ["StepLogFollower", "RecordedRun", "StepsRead", "read_header", "read_run", "read_steps_job", "snapshots",
           "latest_snapshot"]

_SNAPSHOT = re.compile(r"^step-(\d+)\.safetensors$")
#: a follower reads at most this much per call (a tick of the window's timer stays short)
CHUNK_BYTES = 1 << 20


def _check_dir(logdir: Path) -> None:
    if not logdir.exists():
        raise RecordingError(f"{logdir} does not exist; give the log directory your recorder writes "
                             "(EmbeddingRecorder(model, LOGDIR) or TrainerCallback(LOGDIR))")
    if not logdir.is_dir():
        raise RecordingError(f"{logdir} is a file; give the log directory the recorder writes")
    if not (logdir / HEADER_FILE).is_file():
        what = "is empty" if not any(logdir.iterdir()) else f"has no {HEADER_FILE}"
        raise RecordingError(f"{logdir} {what}: it holds no recorded run yet (start the training with "
                             "explorer.record.EmbeddingRecorder or TrainerCallback writing there)")


def read_header(logdir: str | Path) -> RunHeader:
    """The run's header (raises RecordingError for a missing or empty directory, or a bad header)."""
    logdir = Path(logdir)
    _check_dir(logdir)
    path = logdir / HEADER_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordingError(f"cannot read {path}: {exc}") from None
    return RunHeader.from_json(data, str(path))


class StepLogFollower:
    """Reads the whole lines added to ``steps.jsonl`` since the last call.

    Attributes
    ----------
    partial_bytes : int
        Bytes after the last newline (a step being written, or cut by a crash).
    bad_lines : int
        Whole lines that were not a step (skipped).
    """

    def __init__(self, logdir: str | Path, header: RunHeader):
        self.path = Path(logdir) / STEPS_FILE
        self.header = header
        self._offset = 0
        self.partial_bytes = 0
        self.bad_lines = 0

    @property
    def offset(self) -> int:
        """Bytes of whole lines read so far."""
        return self._offset

    def read_new(self, max_bytes: int | None = CHUNK_BYTES) -> list[StepRecord]:
        """The steps whose lines were completed since the last call (in file order)."""
        while True:
            try:
                with open(self.path, "rb") as f:
                    f.seek(self._offset)
                    data = f.read() if max_bytes is None else f.read(max_bytes)
            except FileNotFoundError:
                return []
            end = data.rfind(b"\n")
            if end >= 0 or max_bytes is None or len(data) < max_bytes:
                break
            max_bytes *= 2  # one step longer than a chunk (a big tied table's ids): read it whole
        if end < 0:
            self.partial_bytes = len(data)
            return []
        whole, self.partial_bytes = data[: end + 1], len(data) - end - 1
        self._offset += end + 1
        out = []
        for line in whole.splitlines():
            if not line.strip():
                continue
            try:
                out.append(StepRecord.from_line(json.loads(line), self.header))
            except (ValueError, KeyError, TypeError, IndexError):
                self.bad_lines += 1
        return out


@dataclass(frozen=True)
class RecordedRun:
    """A log directory as read now: its header, every whole step, its snapshots."""

    logdir: Path
    header: RunHeader
    steps: list[StepRecord] = field(repr=False)
    partial_bytes: int = 0
    bad_lines: int = 0
    snapshots: list[tuple[int, Path]] = field(default_factory=list)

    def as_json(self) -> dict:
        """What ``runs --json`` prints: the header, every whole step, the snapshots, the notes."""
        return {"logdir": str(self.logdir), "header": self.header.as_json(),
                "steps": [s.as_json() for s in self.steps],
                "snapshots": [{"step": step, "path": str(path)} for step, path in self.snapshots],
                "notes": self.notes}

    @property
    def notes(self) -> list[str]:
        notes = []
        if self.partial_bytes:
            last = self.steps[-1].step if self.steps else 0
            notes.append(f"the step file ends in {self.partial_bytes:,} bytes of a step cut mid-write (or still "
                         f"being written): the steps up to {last:,} are shown")
        if self.bad_lines:
            notes.append(f"{self.bad_lines:,} lines of the step file were not steps and were skipped")
        if not self.steps:
            notes.append("no step was recorded yet")
        return notes


def read_run(logdir: str | Path) -> RecordedRun:
    """Read a whole recorded run (raises RecordingError: missing or empty directory, bad header)."""
    logdir = Path(logdir)
    header = read_header(logdir)
    follower = StepLogFollower(logdir, header)
    steps = []
    while True:
        before = follower.offset
        steps += follower.read_new()
        if follower.offset == before:
            break
    return RecordedRun(logdir, header, steps, follower.partial_bytes, follower.bad_lines, snapshots(logdir))


def snapshots(logdir: str | Path) -> list[tuple[int, Path]]:
    """(step, path) of every whole snapshot, oldest first."""
    folder = Path(logdir) / SNAPSHOT_DIR
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _SNAPSHOT.match(p.name))]
    return sorted(found)


def latest_snapshot(logdir: str | Path) -> tuple[int, Path] | None:
    """(step, path) of the newest snapshot, or None."""
    found = snapshots(logdir)
    return found[-1] if found else None


@dataclass(frozen=True)
class StepsRead:
    """What one look at a growing log directory found: new whole steps and the snapshots."""

    steps: list[StepRecord]
    snapshots: list[tuple[int, Path]]
    partial_bytes: int


def read_steps_job(follower: StepLogFollower, logdir: str | Path, max_chunks: int = 8):
    """Generator job: the steps added since the follower's last read, a chunk at a time
    (at most ``max_chunks`` chunks per call: a long existing run arrives in parts),
    then the snapshots. Yields :class:`StepsRead` objects."""
    for _ in range(max_chunks):
        before = follower.offset
        new = follower.read_new()
        if new:
            yield StepsRead(new, [], follower.partial_bytes)
        if follower.offset == before:
            break
    yield StepsRead([], snapshots(logdir), follower.partial_bytes)
