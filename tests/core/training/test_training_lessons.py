"""Rows moved by weight decay alone (explorer.core.training.model), each optimiser's
default learning rate, and the lesson under the training charts
(explorer.core.training.lessons), checked against torch and the run's own history."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook

from explorer.core.training.charts import TrainingHistory
from explorer.core.training.config import DEFAULT_LR, OPTIMIZERS, default_lr
from explorer.core.training.lessons import training_lesson
from explorer.core.training.model import ToyLM, TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _observed_run(corpus, steps, **kw):
    """Train; before each real step of the embedding's optimizer note (independently
    of train()) which rows have no gradient, no Adam momentum and a non-zero value."""
    cfg = TrainConfig(steps=steps, dim=8, batch_size=8, **kw)
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    emb = model.embed_tokens.weight
    seen: list[dict] = []

    def before_step(opt, _args, _kwargs):
        if not any(p is emb for g in opt.param_groups for p in g["params"]):
            return  # the counterfactual's own optimizer, or another one
        state = opt.state.get(emb, {})
        m = state.get("exp_avg")
        grad = emb.grad.to_dense() if emb.grad.is_sparse else emb.grad
        if m is not None and m.is_sparse:
            m = m.to_dense()
        seen.append({
            "no_grad": ~(grad != 0).any(dim=1).numpy(),
            "no_momentum": np.ones(emb.shape[0], bool) if m is None else ~(m != 0).any(dim=1).numpy(),
            "nonzero": (emb.detach() != 0).any(dim=1).numpy(),
        })

    handle = register_optimizer_step_pre_hook(before_step)
    try:
        metrics = list(train(corpus.ids, corpus.vocab_size, cfg, model=model))
    finally:
        handle.remove()
    assert len(seen) == steps
    return metrics, seen


def test_adamw_decay_only_rows_are_those_without_gradient_or_momentum(corpus):
    # AdamW: p <- p (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps). Without the decay, a row
    # with no gradient and no momentum stays exactly put (m = 0); any other row moves
    # (over a few steps no momentum is small enough to vanish in float32)
    metrics, seen = _observed_run(corpus, 12, optimizer="adamw", weight_decay=0.1)
    for m, s in zip(metrics, seen):
        assert m.decay_only_rows == int((s["no_grad"] & s["no_momentum"] & s["nonzero"]).sum())
    assert metrics[0].decay_only_rows == corpus.vocab_size - metrics[0].grad_rows  # step 1: no momentum anywhere
    assert 0 < metrics[-1].decay_only_rows < metrics[0].decay_only_rows  # momentum spreads over seen rows


def test_sgd_decay_only_rows_are_every_row_without_gradient(corpus):
    # plain SGD (no momentum): a row without gradient moves only by wd * row
    metrics, seen = _observed_run(corpus, 6, optimizer="sgd", lr=1.0, weight_decay=0.01)
    for m, s in zip(metrics, seen):
        assert m.decay_only_rows == int((s["no_grad"] & s["nonzero"]).sum()) == m.vocab_size - m.grad_rows


def test_adam_l2_decay_lives_on_in_momentum(corpus):
    # Adam adds wd * row to the gradient: from step 2 on every row has momentum, so no row
    # moves by this step's decay alone; on step 1 the rows without gradient do
    metrics, _ = _observed_run(corpus, 5, optimizer="adam", weight_decay=0.1)
    assert metrics[0].decay_only_rows == corpus.vocab_size - metrics[0].grad_rows
    assert [m.decay_only_rows for m in metrics[1:]] == [0] * 4


@pytest.mark.parametrize("kw", [dict(optimizer="adam"), dict(optimizer="sgd", lr=1.0),
                                dict(optimizer="sparse_adam", sparse=True)])
def test_without_weight_decay_no_row_moves_by_decay(corpus, kw):
    metrics, _ = _observed_run(corpus, 4, **kw)
    assert all(m.decay_only_rows == 0 for m in metrics)


def test_every_optimiser_has_a_default_rate_and_sgd_trains_with_its_own(corpus):
    assert set(DEFAULT_LR) == set(OPTIMIZERS) and default_lr("sgd") == 1.0 and default_lr("adam") == 0.01

    def tail_loss(optimizer, lr, steps=1000):  # SGD starts slower: by 1,000 steps it has caught up
        cfg = TrainConfig(steps=steps, dim=32, batch_size=64, optimizer=optimizer, lr=lr)
        return np.mean([m.loss for m in train(corpus.ids, corpus.vocab_size, cfg)][-50:])

    adam, sgd = tail_loss("adam", default_lr("adam")), tail_loss("sgd", default_lr("sgd"))
    assert sgd < 0.35 * np.log(corpus.vocab_size) and sgd < 1.2 * adam  # falls about as far as Adam's
    assert tail_loss("sgd", 0.01, steps=200) > 2 * sgd  # with Adam's rate SGD barely moves


LESSON_RUNS = {
    "adam": dict(optimizer="adam"),
    "adamw": dict(optimizer="adamw", weight_decay=0.1),
    "adam_l2": dict(optimizer="adam", weight_decay=0.1),
    "sgd": dict(optimizer="sgd", lr=1.0),
    "sgd_decay": dict(optimizer="sgd", lr=1.0, weight_decay=0.01),
    "sparse_adam": dict(optimizer="sparse_adam", sparse=True),
    "sparse_sgd": dict(optimizer="sgd", lr=1.0, sparse=True),
    "tied": dict(optimizer="adam", tied=True),
}
#: what each run's first sentence must explain
LESSON_WORDS = {
    "adam": "Adam's momentum keeps moving rows that got none",
    "adamw": "AdamW shrinks every row by lr × wd = 0.1 %",
    "adam_l2": "its momentum carries that decay on",
    "sgd": "plain SGD moves only the rows with a gradient",
    "sgd_decay": "rows absent from the batch shrink toward 0",
    "sparse_adam": "SparseAdam keeps moments for those rows alone",
    "sparse_sgd": "plain SGD moves only them",
    "tied": "the output projection is E itself",
}


@pytest.fixture(scope="module")
def lessons(corpus):
    out = {}
    for name, kw in LESSON_RUNS.items():
        cfg = TrainConfig(steps=40, dim=8, batch_size=16, **kw)
        h = TrainingHistory(np.bincount(corpus.ids, minlength=corpus.vocab_size))
        h.extend(train(corpus.ids, corpus.vocab_size, cfg))
        lesson = training_lesson(cfg, h)
        # the percent signs stay with their figures (no-break spaces); compare with plain ones
        out[name] = (cfg, h, dataclasses.replace(lesson, rows=lesson.rows.replace("\u00a0", " "),
                                                 rare=lesson.rare.replace("\u00a0", " ")))
    return out


@pytest.mark.parametrize("name", list(LESSON_RUNS))
def test_each_setting_gets_its_own_sentence_with_the_live_figures(lessons, name):
    cfg, h, lesson = lessons[name]
    v = h.vocab_size
    assert LESSON_WORDS[name] in lesson.rows
    assert lesson.step == 40 and "step 40:" in lesson.rows
    changed = 100 * h.series("changed_rows")[-1] / v
    grad = 100 * h.series("input_grad_rows")[-1] / v
    assert lesson.changed_pct == pytest.approx(changed) and lesson.grad_pct == pytest.approx(grad)
    assert f"{grad:.1f} % of the rows got a gradient" in lesson.rows or cfg.tied
    assert (f"{changed:.1f} % changed" if changed < 99.95 else "100 % changed") in lesson.rows
    if cfg.weight_decay and not cfg.tied:
        decay = 100 * h.series("decay_only_rows")[-1] / v
        assert f"{decay:.1f} % only because of weight decay" in lesson.rows or decay == 0
    if cfg.tied:
        assert "100 % of the rows got a gradient" in lesson.rows
    assert lesson.text.startswith(lesson.rows)


def test_the_sentences_differ_and_the_rare_rows_lag_untied(lessons):
    assert len({lesson.rows.split(":", 1)[1] for _c, _h, lesson in lessons.values()}) == len(lessons)
    _cfg, h, lesson = lessons["adam"]
    k = round(0.1 * h.vocab_size)
    rare = 100 * h.grad_count[h.order[-k:]].mean() / h.n
    frequent = 100 * h.grad_count[h.order[:k]].mean() / h.n
    assert rare < frequent
    assert f"in {rare:.1f} % of the steps, the most frequent 10 % in {frequent:.1f} %" in lesson.rare


def test_no_lesson_before_the_first_step(corpus):
    h = TrainingHistory(np.ones(5, np.int64))
    assert training_lesson(TrainConfig(), h) is None
