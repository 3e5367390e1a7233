"""Reading a recorded run: whole lines only (a step being written or cut by a
crash is left out), following the file as it grows, missing and empty directories."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.core.recording.format import HEADER_FILE, STEPS_FILE, RecordingError, decode_rows, encode_rows
from explorer.core.recording.reader import StepLogFollower, read_header, read_run
from explorer.record import EmbeddingRecorder


def _record(logdir, steps: int, seed: int = 0):
    torch.manual_seed(seed)
    emb = torch.nn.Embedding(30, 4)
    opt = torch.optim.SGD(emb.parameters(), lr=0.1)
    rec = EmbeddingRecorder(emb, logdir, optimizer=opt)
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(steps):
        ids = torch.randint(0, 30, (6,), generator=g)
        batches.append(np.unique(ids.numpy()))
        opt.zero_grad()
        emb(ids).sum().backward()
        opt.step()
        rec.step(loss=float(ids.sum()))
    return rec, batches


def test_a_step_cut_mid_write_is_left_out(tmp_path):
    rec, batches = _record(tmp_path, 5)
    rec.close()
    path = tmp_path / STEPS_FILE
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_start + 17])  # the fifth line cut after 17 bytes
    run = read_run(tmp_path)
    assert [s.step for s in run.steps] == [1, 2, 3, 4]
    assert [s.rows_with_gradient.tolist() for s in run.steps] == [b.tolist() for b in batches[:4]]
    assert run.partial_bytes == 17 and any("cut mid-write" in n and "up to 4" in n for n in run.notes)


def test_the_follower_reads_only_whole_lines_as_they_grow(tmp_path):
    rec, _ = _record(tmp_path, 2)
    follower = StepLogFollower(tmp_path, read_header(tmp_path))
    assert [s.step for s in follower.read_new()] == [1, 2]
    assert follower.read_new() == []
    # a line written in two pieces: nothing until its newline arrives
    line = (tmp_path / STEPS_FILE).read_bytes().splitlines(keepends=True)[0]
    third = json.loads(line)
    third["step"] = 3
    text = (json.dumps(third) + "\n").encode()
    with open(tmp_path / STEPS_FILE, "ab") as f:
        f.write(text[:10])
        f.flush()
        assert follower.read_new() == [] and follower.partial_bytes == 10
        f.write(text[10:])
    assert [s.step for s in follower.read_new()] == [3] and follower.partial_bytes == 0
    rec.close()


def test_a_broken_line_in_the_middle_is_skipped(tmp_path):
    rec, _ = _record(tmp_path, 3)
    rec.close()
    lines = (tmp_path / STEPS_FILE).read_text().splitlines()
    (tmp_path / STEPS_FILE).write_text("\n".join([lines[0], "{not json", lines[2]]) + "\n")
    run = read_run(tmp_path)
    assert [s.step for s in run.steps] == [1, 3] and run.bad_lines == 1
    assert any("skipped" in n for n in run.notes)


def test_missing_empty_and_foreign_directories(tmp_path):
    with pytest.raises(RecordingError, match="does not exist"):
        read_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordingError, match="is empty"):
        read_run(tmp_path / "empty")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("hello")
    with pytest.raises(RecordingError, match=f"has no {HEADER_FILE}"):
        read_run(tmp_path / "other")
    (tmp_path / "other" / HEADER_FILE).write_text('{"format": "something else"}')
    with pytest.raises(RecordingError, match="not the header of a recorded run"):
        read_run(tmp_path / "other")


def test_a_run_without_steps_yet(tmp_path):
    rec = EmbeddingRecorder(torch.nn.Embedding(10, 2), tmp_path)
    run = read_run(tmp_path)
    assert run.steps == [] and run.notes == ["no step was recorded yet"]
    assert [step for step, _ in run.snapshots] == [0]
    rec.close()


@pytest.mark.parametrize("ids", [[], [3], [0, 1, 2, 3, 4, 5, 6], list(range(10))])
def test_row_sets_round_trip(ids):
    data = encode_rows(np.array(ids, np.int64), 10)
    assert decode_rows(data, 10).tolist() == ids
    assert len(data.get("ids", data.get("all_but"))) <= 5
