"""TrainerCallback in a real transformers.Trainer: a tiny GPT-2 built from its
config trains for a few dozen steps; the recorded rows with a gradient are
checked against the batches the Trainer was actually given."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.core.recording.reader import read_run
from explorer.record import TrainerCallback

transformers = pytest.importorskip("transformers")

V, SEQ = 64, 6


class Examples(torch.utils.data.Dataset):
    """Sequences of ids drawn from a Zipf-like law (rare ids stay rare)."""

    def __init__(self, n: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        p = 1.0 / np.arange(1, V + 1)
        self.ids = rng.choice(V, size=(n, SEQ), p=p / p.sum())

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = torch.tensor(self.ids[i])
        return {"input_ids": ids, "labels": ids.clone()}


class RecordingCollator:
    """Stacks examples into a batch and keeps every batch it returned (what the model saw)."""

    def __init__(self):
        self.batches: list[np.ndarray] = []

    def __call__(self, examples):
        batch = {k: torch.stack([e[k] for e in examples]) for k in examples[0]}
        self.batches.append(batch["input_ids"].numpy().copy())
        return batch


def _train(tmp_path, steps: int, accumulation: int = 1, tied: bool = False):
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=V, n_positions=SEQ,
                                  tie_word_embeddings=tied, bos_token_id=0, eos_token_id=0)
    model = transformers.GPT2LMHeadModel(cfg)
    collator = RecordingCollator()
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=steps, per_device_train_batch_size=4,
        gradient_accumulation_steps=accumulation, learning_rate=5e-3, weight_decay=0.1, logging_steps=1,
        save_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0, seed=0,
        disable_tqdm=True)
    logdir = tmp_path / "run"
    trainer = transformers.Trainer(model=model, args=args, train_dataset=Examples(steps * 4 * accumulation + 8),
                                   data_collator=collator, callbacks=[TrainerCallback(logdir, snapshot_every=10)])
    trainer.train()
    return model, collator.batches, read_run(logdir), trainer.state.log_history


def test_trainer_rows_with_gradient_are_each_batchs_ids(tmp_path):
    model, batches, run, logs = _train(tmp_path, steps=24)
    assert [s.step for s in run.steps] == list(range(1, 25)) and run.notes == []
    h = run.header
    assert (h.vocab_size, h.dim, h.tied, h.planned_steps) == (V, 16, False, 24)
    assert h.optimizer == "adamw" and h.weight_decay == pytest.approx(0.1)
    assert len(batches) >= 24  # the loader may fetch one batch ahead
    for s, ids in zip(run.steps, batches):
        # a causal model ignores the last position's output (no next token to predict), so an id
        # met only there gets no gradient: the rows are the ids of the other positions
        assert s.rows_with_gradient.tolist() == np.unique(ids[:, :-1]).tolist(), s.step
        assert s.batch_distinct_ids == np.unique(ids).size  # what the embedding looked up
        assert s.output_rows_with_gradient.size == V
        assert s.rows_changed.size == V  # AdamW's decay moves every row
    # rows no batch looked up so far and without momentum: moved by weight decay alone
    seen: set[int] = set()
    for s, ids in zip(run.steps, batches):
        seen |= set(np.unique(ids[:, :-1]).tolist())
        assert set(s.rows_decay_only.tolist()) == set(range(V)) - seen
    # the loss is the model's own output, as the Trainer logged it
    logged = [e["loss"] for e in logs if "loss" in e]
    assert len(logged) == 24
    np.testing.assert_allclose([s.loss for s in run.steps], logged, rtol=1e-3)
    # the last snapshot is the trained table
    from explorer.core.sources import open_table

    step, path = run.snapshots[-1]
    assert step == 24 and [st for st, _ in run.snapshots] == [0, 10, 20, 24]
    np.testing.assert_array_equal(open_table(str(path)).matrix(), model.get_input_embeddings().weight.detach().numpy())


def test_trainer_gradient_accumulation_records_the_union_of_micro_batches(tmp_path):
    _model, batches, run, _logs = _train(tmp_path, steps=4, accumulation=2, tied=True)
    assert run.header.tied and [s.step for s in run.steps] == [1, 2, 3, 4]
    for k, s in enumerate(run.steps):
        both = np.concatenate([batches[2 * k], batches[2 * k + 1]])
        assert s.input_rows_with_gradient.tolist() == np.unique(both).tolist()
        assert s.rows_with_gradient.size == V  # tied: the output side reaches every row
