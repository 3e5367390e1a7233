"""A recorded run as the Training tab's charts read it: bounded memory, the same counts."""

from __future__ import annotations

import numpy as np
import torch

from explorer.core.recording.metrics import RecordedSteps, lesson_config, never_moved, planned_steps
from explorer.core.recording.reader import read_run
from explorer.record import EmbeddingRecorder


def test_history_keeps_ids_of_recent_steps_only_and_the_same_counts(tmp_path):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(25, 3)
    opt = torch.optim.AdamW(emb.parameters(), lr=0.05, weight_decay=0.1)
    rec = EmbeddingRecorder(emb, tmp_path, optimizer=opt)
    g = torch.Generator().manual_seed(0)
    looked = np.zeros(25, np.int64)
    for _ in range(9):
        ids = torch.randint(0, 12, (5,), generator=g)
        looked[np.unique(ids.numpy())] += 1
        opt.zero_grad()
        emb(ids).pow(2).sum().backward()
        opt.step()
        rec.step(loss=1.0)
    rec.close()
    run = read_run(tmp_path)
    kept = RecordedSteps(run.header, raster_steps=3)
    kept.add(run.steps[:4])
    kept.add(run.steps[4:])
    h = kept.history()
    assert h.n == 9 and h.last_step == 9
    np.testing.assert_array_equal(h.counts, looked)  # rows ordered by the steps that looked them up
    np.testing.assert_array_equal(h.grad_count, looked)
    np.testing.assert_array_equal(h.change_count, np.full(25, 9))  # AdamW's decay moves every row every step
    np.testing.assert_array_equal(h.series("changed_rows"), np.full(9, 25))
    image, steps = h.raster()
    assert steps.tolist() == [7, 8, 9] and image.shape == (25, 3)
    assert never_moved(h).size == 0
    cfg = lesson_config(run.header, h.last_step)
    assert (cfg.optimizer, cfg.weight_decay, cfg.tied) == ("adamw", 0.1, False)


def test_planned_steps():
    from explorer.core.recording.format import RunHeader

    header = RunHeader(name="x", vocab_size=4, dim=2, tied=False, has_output=False, dtype="float32")
    assert planned_steps(header, 10) == 100
    assert planned_steps(header, 950) >= 950
    assert planned_steps(RunHeader(**{**header.__dict__, "planned_steps": 500}), 10) == 500
