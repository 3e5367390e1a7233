"""EmbeddingRecorder in a plain PyTorch loop: gradient rows against the batches
themselves, tied and untied tables, sparse gradients, weight decay, snapshots."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.core.recording.format import RecordingError
from explorer.core.recording.reader import read_run
from explorer.record import EmbeddingRecorder

V, D = 48, 8


class TinyLM(torch.nn.Module):
    """An embedding, a mixer and an output matrix (tied or not): enough for every row to matter."""

    def __init__(self, tied: bool, sparse: bool = False):
        super().__init__()
        self.embed = torch.nn.Embedding(V, D, sparse=sparse)
        self.mix = torch.nn.Linear(D, D)
        self.head = torch.nn.Linear(D, V, bias=False)
        if tied:
            self.head.weight = self.embed.weight

    def get_input_embeddings(self):
        return self.embed

    def get_output_embeddings(self):
        return self.head

    def forward(self, ids):
        return self.head(torch.tanh(self.mix(self.embed(ids))))


def _batches(n: int, seed: int = 0, high: int = V // 2) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, high, (3, 5), generator=g) for _ in range(n)]


def _train(model, opt, logdir, batches, **kw) -> list[np.ndarray]:
    """Train on ``batches`` with a recorder; returns the table after each step."""
    rec = EmbeddingRecorder(model, logdir, optimizer=opt, **kw)
    tables = []
    for ids in batches:
        logits = model(ids[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        rec.step(loss)
        tables.append(model.embed.weight.detach().clone().numpy())
    rec.close()
    return tables


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)


def test_untied_rows_with_gradient_are_the_batch_ids(tmp_path):
    model = TinyLM(tied=False)
    batches = _batches(6)
    tables = _train(model, torch.optim.SGD(model.parameters(), lr=0.5), tmp_path, batches)
    run = read_run(tmp_path)
    assert [s.step for s in run.steps] == list(range(1, 7)) and run.notes == []
    assert not run.header.tied and run.header.has_output and run.header.optimizer == "sgd"
    prev = None
    for s, ids, table in zip(run.steps, batches, tables):
        looked_up = np.unique(ids[:, :-1].numpy())
        assert s.rows_with_gradient.tolist() == looked_up.tolist()
        assert s.input_rows_with_gradient.tolist() == looked_up.tolist()
        assert s.batch_distinct_ids == looked_up.size
        # the untied output matrix: the softmax gives every one of its rows a gradient
        assert s.output_rows_with_gradient.size == V
        # plain SGD moves exactly the rows with a gradient, and nothing by decay
        assert s.rows_changed.tolist() == looked_up.tolist() and s.rows_decay_only.size == 0
        if prev is not None:
            assert s.update_norm == pytest.approx(float(np.linalg.norm(table - prev)), rel=1e-4)
        prev = table
        assert np.isfinite(s.loss) and s.grad_norm > 0


def test_tied_table_gradient_is_dense_and_input_rows_are_the_batch(tmp_path):
    model = TinyLM(tied=True)
    batches = _batches(4, seed=1)
    _train(model, torch.optim.SGD(model.parameters(), lr=0.5), tmp_path, batches)
    run = read_run(tmp_path)
    assert run.header.tied
    for s, ids in zip(run.steps, batches):
        assert s.rows_with_gradient.size == V  # the output side reaches every row of the shared table
        assert s.input_rows_with_gradient.tolist() == np.unique(ids[:, :-1].numpy()).tolist()
        assert s.output_rows_with_gradient is None
    # every row's set is written as its short complement, not V ids
    first = json.loads((tmp_path / "steps.jsonl").read_text().splitlines()[0])
    assert first["rows_with_gradient"] == {"n": V, "all_but": []}


def test_sparse_embedding(tmp_path):
    emb = torch.nn.Embedding(V, D, sparse=True)
    opt = torch.optim.SparseAdam(list(emb.parameters()), lr=0.05)
    rec = EmbeddingRecorder(emb, tmp_path, optimizer=opt)
    batches = _batches(5, seed=2)
    for ids in batches:
        opt.zero_grad()
        emb(ids).pow(2).sum().backward()
        assert emb.weight.grad.is_sparse
        opt.step()
        rec.step()
    rec.close()
    run = read_run(tmp_path)
    assert run.header.sparse and run.header.optimizer == "sparseadam" and not run.header.has_output
    for s, ids in zip(run.steps, batches):
        ids = np.unique(ids.numpy())
        assert s.rows_with_gradient.tolist() == ids.tolist()
        # SparseAdam updates only the rows of the sparse gradient
        assert set(s.rows_changed.tolist()) <= set(ids.tolist()) and s.rows_decay_only.size == 0
        assert s.loss is None


def test_adamw_decay_moves_rows_without_gradient(tmp_path):
    """AdamW's decoupled decay moves every row; rows never looked up change by decay alone."""
    model = TinyLM(tied=False)
    batches = _batches(3, seed=3, high=V // 2)  # rows V/2.. never appear
    _train(model, torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.5), tmp_path, batches)
    run = read_run(tmp_path)
    assert run.header.optimizer == "adamw" and run.header.weight_decay == 0.5
    seen = set()
    for s, ids in zip(run.steps, batches):
        seen |= set(np.unique(ids[:, :-1].numpy()).tolist())
        assert s.rows_changed.size == V  # decay shrinks every row
        with_grad = set(s.rows_with_gradient.tolist())
        decay = set(s.rows_decay_only.tolist())
        # rows without a gradient now and without momentum from before: decay alone moved them
        assert decay == set(range(V)) - seen
        assert not decay & with_grad


def test_adam_momentum_is_not_decay(tmp_path):
    """Adam without decay moves rows seen earlier by momentum: changed without gradient, but not by decay."""
    model = TinyLM(tied=False)
    batches = _batches(4, seed=4)
    _train(model, torch.optim.Adam(model.parameters(), lr=0.01), tmp_path, batches)
    run = read_run(tmp_path)
    assert all(s.rows_decay_only.size == 0 for s in run.steps)
    assert any(s.rows_changed.size > s.rows_with_gradient.size for s in run.steps[1:])


def test_snapshots_reopen_through_the_app_loader(tmp_path):
    from explorer.core.sources import open_table

    model = TinyLM(tied=False)
    tables = _train(model, torch.optim.SGD(model.parameters(), lr=0.5), tmp_path, _batches(5, seed=5),
                    snapshot_every=2)
    run = read_run(tmp_path)
    assert [step for step, _ in run.snapshots] == [0, 2, 4, 5]  # before, every 2, at close
    for step, path in run.snapshots[1:]:
        table = open_table(str(path))
        assert (table.vocab_size, table.dim) == (V, D)
        np.testing.assert_array_equal(table.matrix(), tables[step - 1])
        assert table.tied is False
    assert not list((tmp_path / "snapshots").glob(".*tmp"))  # no temporary file left behind


def test_every_records_one_step_in_k(tmp_path):
    model = TinyLM(tied=False)
    _train(model, torch.optim.SGD(model.parameters(), lr=0.5), tmp_path, _batches(6, seed=6), every=3)
    run = read_run(tmp_path)
    assert [s.step for s in run.steps] == [3, 6] and run.header.every == 3


def test_a_second_run_in_the_same_directory_is_refused(tmp_path):
    model = TinyLM(tied=False)
    EmbeddingRecorder(model, tmp_path).close()
    with pytest.raises(RecordingError, match="already holds"):
        EmbeddingRecorder(model, tmp_path)
    EmbeddingRecorder(model, tmp_path, overwrite=True).close()


def test_what_cannot_be_recorded():
    with pytest.raises(RecordingError, match="nn.Embedding"):
        EmbeddingRecorder(torch.nn.Linear(3, 3), "unused")


@pytest.mark.parametrize("dense", [False, True])
def test_rows_with_a_value_are_found_exactly_even_when_their_norm_underflows(dense):
    from explorer.core.recording.recorder import _rows_and_norm

    x = torch.ones(16, 4) if dense else torch.zeros(16, 4)
    x[2] = 0.0
    x[3] = 0.0
    x[3, 1] = 1e-30  # its square underflows: the row norm says 0, the row is not zero
    x[5, 0] = 2.0
    rows, norm = _rows_and_norm(x)
    expected = {i for i in range(16) if bool(x[i].ne(0).any())}
    assert set(np.nonzero(rows.numpy())[0].tolist()) == expected and 3 in expected
    assert norm == pytest.approx(float(torch.linalg.vector_norm(x.double())), rel=1e-6)
