"""Gradient sparsity of the toy model's training (explorer.core.training).

The ids each step feeds the embedding are captured independently with a
forward hook on the model's nn.Embedding, and compared with what the
generator reports.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from explorer.core.corpus import make_corpus
from explorer.core.training import ConfigError, ToyLM, TrainConfig, train


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(2000, seed=0)


def _run(corpus, steps=20, **kw):
    """Train ``steps`` steps; return (metrics, ids fed to the embedding at each step)."""
    cfg = TrainConfig(steps=steps, dim=16, batch_size=32, **kw)
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    fed: list[np.ndarray] = []
    model.embed_tokens.register_forward_pre_hook(lambda mod, args: fed.append(np.unique(args[0].numpy())))
    metrics = list(train(corpus.ids, corpus.vocab_size, cfg, model=model))
    assert len(metrics) == len(fed) == steps
    return metrics, fed


def test_untied_gradient_reaches_exactly_the_batch_rows(corpus):
    metrics, fed = _run(corpus, steps=25, optimizer="adam", tied=False)
    for m, ids in zip(metrics, fed):
        assert m.grad_rows == m.batch_distinct_ids == len(ids)
        np.testing.assert_array_equal(m.grad_ids, ids)
        assert m.input_grad_rows == m.grad_rows
        assert m.grad_rows < corpus.vocab_size


def test_untied_dense_gradient_is_a_scatter_add(corpus):
    # independently of train(): the embedding gradient of one batch is zero
    # outside the batch ids, and n contributions add up for a repeated id
    cfg = TrainConfig(dim=8, batch_size=16, tied=False)
    torch.manual_seed(0)
    model = ToyLM.build(corpus.vocab_size, cfg)
    ctx = torch.tensor([[5, 6, 5], [7, 5, 8]])
    out = model.embed_tokens(ctx)
    up = torch.randn_like(out)
    (out * up).sum().backward()
    g = model.embed_tokens.weight.grad
    rows = sorted(set(ctx.reshape(-1).tolist()))
    assert torch.nonzero(g.abs().sum(1)).reshape(-1).tolist() == rows
    torch.testing.assert_close(g[5], up[0, 0] + up[0, 2] + up[1, 1])


def test_tied_gradient_reaches_every_row(corpus):
    metrics, fed = _run(corpus, steps=10, optimizer="adam", tied=True)
    for m, ids in zip(metrics, fed):
        assert m.grad_rows == corpus.vocab_size
        assert m.batch_distinct_ids == len(ids)


def test_sparse_adam_changes_only_rows_with_gradient(corpus):
    metrics, fed = _run(corpus, steps=25, optimizer="sparse_adam", sparse=True)
    for m, ids in zip(metrics, fed):
        assert m.grad_rows == len(ids)
        np.testing.assert_array_equal(m.grad_ids, ids)
        assert m.changed_rows <= m.grad_rows
        assert set(m.changed_ids.tolist()) <= set(m.grad_ids.tolist())
        assert m.changed_rows > 0


def test_adamw_weight_decay_moves_every_row(corpus):
    metrics, _ = _run(corpus, steps=5, optimizer="adamw", weight_decay=0.1)
    for m in metrics:
        assert m.changed_rows == corpus.vocab_size
        assert m.grad_rows < corpus.vocab_size


def test_dense_adam_keeps_moving_rows_without_gradient(corpus):
    # momentum: after the first step rows that were used keep moving later
    metrics, fed = _run(corpus, steps=15, optimizer="adam")
    seen = set()
    for m, ids in zip(metrics, fed):
        seen |= set(ids.tolist())
        assert m.changed_rows >= m.grad_rows
        assert set(m.changed_ids.tolist()) <= seen
    assert any(m.changed_rows > m.grad_rows for m in metrics[1:])


def test_loss_falls(corpus):
    cfg = TrainConfig(steps=300, dim=16, batch_size=64, lr=0.01, optimizer="adam")
    losses = [m.loss for m in train(corpus.ids, corpus.vocab_size, cfg)]
    # at the start the model is near uniform over V
    assert losses[0] == pytest.approx(np.log(corpus.vocab_size), rel=0.05)
    assert np.mean(losses[-30:]) < 0.6 * np.mean(losses[:30])


def test_snapshots_are_copies(corpus):
    cfg = TrainConfig(steps=4, dim=8, batch_size=8, snapshot_every=2)
    snaps = [m.snapshot for m in train(corpus.ids, corpus.vocab_size, cfg)]
    assert snaps[0] is not None and snaps[1] is not None and snaps[2] is None and snaps[3] is not None
    assert snaps[0].shape == (corpus.vocab_size, 8)
    assert not np.shares_memory(snaps[1], snaps[3])


@pytest.mark.parametrize(
    "kw",
    [
        dict(sparse=True, tied=True, optimizer="sparse_adam"),
        dict(sparse=False, optimizer="sparse_adam"),
        dict(sparse=True, optimizer="adam"),
        dict(sparse=True, optimizer="adamw"),
        dict(sparse=True, optimizer="sgd", weight_decay=0.01),
        dict(optimizer="lion"),
        dict(lr=0.0),
        dict(lr=float("nan")),
        dict(weight_decay=-1.0),
        dict(dim=0),
    ],
)
def test_impossible_combinations_raise_config_error(corpus, kw):
    cfg = TrainConfig(steps=1, **kw)
    with pytest.raises(ConfigError) as exc:
        next(train(corpus.ids, corpus.vocab_size, cfg))
    assert len(str(exc.value)) > 20  # explained, not a bare code


def test_bad_corpus_raises_config_error(corpus):
    with pytest.raises(ConfigError):
        next(train(np.array([1, 2]), 10, TrainConfig(steps=1, context=3)))
    with pytest.raises(ConfigError):
        next(train(np.array([1, 2, 3, 4, 50]), 10, TrainConfig(steps=1, context=3)))


def test_sparse_sgd_without_decay_is_allowed(corpus):
    metrics, fed = _run(corpus, steps=3, optimizer="sgd", sparse=True)
    for m, ids in zip(metrics, fed):
        np.testing.assert_array_equal(m.changed_ids, ids)


@pytest.mark.parametrize("optimizer,lr", [("sgd", 1e4), ("adam", 1e37)])
def test_huge_learning_rate_diverges(corpus, optimizer, lr):
    # sgd 1e4: the loss explodes past 100 x ln V while still finite;
    # adam 1e37: the weights overflow float32 and the loss becomes inf
    cfg = TrainConfig(steps=300, dim=16, batch_size=32, lr=lr, optimizer=optimizer)
    with pytest.raises(FloatingPointError, match="diverged"):
        for _ in itertools.islice(train(corpus.ids, corpus.vocab_size, cfg), 300):
            pass


def test_ordinary_learning_rates_do_not_trip_the_divergence_check(corpus):
    for optimizer, lr in (("adam", 0.1), ("sgd", 1.0)):
        cfg = TrainConfig(steps=100, dim=16, batch_size=32, lr=lr, optimizer=optimizer)
        losses = [m.loss for m in train(corpus.ids, corpus.vocab_size, cfg)]
        assert len(losses) == 100 and all(np.isfinite(losses))
