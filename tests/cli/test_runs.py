"""`python -m explorer runs LOGDIR [--json]`: a recorded run's steps, a run cut
mid-write, missing and empty directories."""

from __future__ import annotations

import json

import pytest
import torch

from explorer.core.recording.format import STEPS_FILE
from explorer.record import EmbeddingRecorder
from tests.support.cli import assert_one_error_line, call


@pytest.fixture
def recorded(tmp_path):
    """A run of 4 steps of an untied 20-row table; the batches it saw."""
    torch.manual_seed(0)
    emb, out = torch.nn.Embedding(20, 4), torch.nn.Linear(4, 20, bias=False)
    model = torch.nn.ModuleDict({"emb": emb, "out": out})
    model.get_input_embeddings = lambda: emb
    model.get_output_embeddings = lambda: out
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    batches = [torch.tensor([1, 4, 4, 7]), torch.tensor([2, 3]), torch.tensor([7, 7]), torch.tensor([0, 19, 5])]
    rec = EmbeddingRecorder(model, tmp_path / "run", optimizer=opt)
    for k, ids in enumerate(batches):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(out(emb(ids)), ids)
        loss.backward()
        opt.step()
        rec.step(loss if k != 2 else None)
    rec.close()
    return tmp_path / "run", batches


def test_runs_json(capsys, recorded):
    logdir, batches = recorded
    rc, out, err = call(capsys, "runs", str(logdir), "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert [s["step"] for s in data["steps"]] == [1, 2, 3, 4]
    for s, ids in zip(data["steps"], batches):
        assert s["rows_with_gradient"] == sorted(set(ids.tolist()))
        assert s["rows_changed"] == 20  # AdamW's decay touches every row
        assert s["output_rows_with_gradient"] == list(range(20))
    assert data["steps"][2]["loss"] is None and all(isinstance(data["steps"][k]["loss"], float) for k in (0, 1, 3))
    assert data["header"]["vocab_size"] == 20 and data["header"]["optimizer"] == "adamw"
    assert [s["step"] for s in data["snapshots"]] == [0, 4] and data["notes"] == []


def test_runs_text(capsys, recorded):
    logdir, _ = recorded
    rc, out, err = call(capsys, "runs", str(logdir))
    assert rc == 0, err
    assert "E 20 x 4 float32, untied" in out and "4 steps recorded" in out
    assert "rows never changed in the recorded steps: 0 of 20" in out


def test_runs_cut_mid_write(capsys, recorded):
    logdir, _ = recorded
    path = logdir / STEPS_FILE
    path.write_bytes(path.read_bytes() + b'{"step": 5, "loss": 1.2, "rows_with')
    rc, out, err = call(capsys, "runs", str(logdir), "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert [s["step"] for s in data["steps"]] == [1, 2, 3, 4]
    assert any("cut mid-write" in n for n in data["notes"])
    rc, out, err = call(capsys, "runs", str(logdir))
    assert "note: the step file ends in" in out


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_runs_bad_directories(capsys, tmp_path, make):
    target = tmp_path / "logdir"
    if make == "empty":
        target.mkdir()
    elif make == "file":
        target.write_text("x")
    rc, out, err = call(capsys, "runs", str(target))
    assert_one_error_line(rc, out, err)
    assert str(target) in err


def test_watch_refuses_an_empty_directory_before_any_window(capsys, tmp_path):
    rc, out, err = call(capsys, "--watch", str(tmp_path))
    assert_one_error_line(rc, out, err)
    assert "holds no recorded run" in err
