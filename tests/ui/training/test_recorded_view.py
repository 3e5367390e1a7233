"""``--watch LOGDIR``: the Training tab follows a run the recorder writes, with
the toy run's charts and lesson; steps appended while the window is open show up."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.training.charts import binned
from explorer.record import EmbeddingRecorder
from explorer.ui.training.charts import MAX_POINTS
from explorer.ui.training.recorded import RecordedRunView
from tests.support.ui_helpers import load

V, D = 40, 6
TIMEOUT = 60_000


class Loop:
    """A small untied model trained by plain SGD on ids below V/2 (the upper rows never move)."""

    def __init__(self, logdir):
        torch.manual_seed(0)
        self.emb, self.out = torch.nn.Embedding(V, D), torch.nn.Linear(D, V, bias=False)
        model = torch.nn.ModuleDict({"emb": self.emb, "out": self.out})
        model.get_input_embeddings = lambda: self.emb
        model.get_output_embeddings = lambda: self.out
        self.opt = torch.optim.SGD(model.parameters(), lr=0.5)
        self.rec = EmbeddingRecorder(model, logdir, optimizer=self.opt, snapshot_every=5, planned_steps=40)
        self.gen = torch.Generator().manual_seed(1)
        self.seen: set[int] = set()
        self.losses: list[float] = []

    def steps(self, n: int) -> None:
        for _ in range(n):
            ids = torch.randint(0, V // 2, (8,), generator=self.gen)
            self.seen |= set(ids.tolist())
            self.opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.out(self.emb(ids)), ids.roll(1))
            loss.backward()
            self.opt.step()
            self.rec.step(loss)
            self.losses.append(float(loss.detach()))


@pytest.fixture
def watched(explorer, qtbot, tmp_path):
    loop = Loop(tmp_path / "run")
    loop.steps(12)
    explorer.watch(str(tmp_path / "run"))
    explorer.recording.timer.setInterval(50)
    qtbot.waitUntil(lambda: explorer.recording.latest_snapshot is not None, timeout=TIMEOUT)
    latest = explorer.recording.latest_snapshot
    assert latest[0] == 10
    load(qtbot, explorer, str(latest[1]))
    explorer.window.show_view("training")
    view = explorer.training_view
    assert isinstance(view, RecordedRunView)
    yield explorer, view, loop
    loop.rec.close()


def test_the_charts_get_the_recorded_steps(watched, qtbot):
    ex, view, loop = watched
    assert ex.state.table.vocab_size == V  # the snapshot is the open table
    qtbot.waitUntil(lambda: view.charts.loss.raw.getData()[0].size == 12, timeout=TIMEOUT)
    x, y = view.charts.loss.raw.getData()
    np.testing.assert_allclose(x, np.arange(1, 13))
    np.testing.assert_allclose(y, loop.losses, rtol=1e-5)
    # rows with a gradient = the batch's distinct ids, as % of V
    _, grad = view.charts.sparsity.grad.getData()
    h = ex.recording.history
    np.testing.assert_allclose(grad, binned(100 * h.series("input_grad_rows") / V, MAX_POINTS)[0])
    assert 0 < grad.max() <= 100 * 8 / V
    # the rows never moved: every id at or above V/2, and those of the lower half never drawn
    never = set(range(V)) - loop.seen
    assert set(ex.recording.never_moved().tolist()) == never
    assert f"{len(never)} of {V} rows" in view.never_moved.text()
    first = min(never)
    assert f"{first} {ex.state.table.piece(first)!r}" in view.never_moved.text()  # named by the open snapshot
    # the lesson speaks of this run: untied SGD, the last step's figures
    assert "Untied + SGD, step 12" in view.lesson.text()
    assert "step     12 / 40" in view.readout.status.text()
    assert view.open_button.isEnabled() and "step 10" in view.open_button.text()


def test_steps_written_while_the_window_is_open_show_up(watched, qtbot):
    ex, view, loop = watched
    qtbot.waitUntil(lambda: view.charts.loss.raw.getData()[0].size == 12, timeout=TIMEOUT)
    loop.steps(9)
    qtbot.waitUntil(lambda: view.charts.loss.raw.getData()[0].size == 21, timeout=TIMEOUT)
    np.testing.assert_allclose(view.charts.loss.raw.getData()[1], loop.losses, rtol=1e-5)
    qtbot.waitUntil(lambda: "step 20" in view.open_button.text(), timeout=TIMEOUT)  # the newer snapshot is offered
    # a step cut mid-write: the charts keep the whole steps, the panel says why
    with open(loop.rec.logdir / "steps.jsonl", "a") as f:
        f.write('{"step": 22, "loss"')
    qtbot.waitUntil(lambda: "still being written" in view.readout.message.text(), timeout=TIMEOUT)
    assert view.charts.loss.raw.getData()[0].size == 21
