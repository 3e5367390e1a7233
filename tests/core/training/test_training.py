"""Gradient sparsity of the toy model's training (explorer.core.training.model).

The ids each step feeds the embedding are captured independently with a
forward hook on the model's nn.Embedding, and compared with what the
generator reports.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from explorer.core.training.model import ConfigError, ToyLM, TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


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


# -- the live job: batches, pause, stop, pace; text corpora; clusters forming -------------------

from explorer.core.errors import ExplorerError, user_message  # noqa: E402
from explorer.core.training.job import (  # noqa: E402
    RunEnded,
    RunHeld,
    StepBatch,
    TrainingControl,
    TrainingRun,
    live_training_job,
    training_job,
)
from explorer.core.training.model import TrainingDiverged, text_corpus  # noqa: E402
from tests.support.jobs import drain as _drain  # noqa: E402
from tests.support.training_clock import FakeClock  # noqa: E402


def _steps(values):
    return [m for v in values if isinstance(v, StepBatch) for m in v.steps]


def test_training_job_batches_are_the_plain_generator_steps(corpus):
    cfg = TrainConfig(steps=40, dim=8, batch_size=16, seed=3)
    plain = [m.loss for m in train(corpus.ids, corpus.vocab_size, cfg)]
    batches, last = _drain(training_job(corpus.ids, corpus.vocab_size, cfg, batch_seconds=0.0))
    steps = _steps(batches)
    assert last == 40 and [m.step for m in steps] == list(range(1, 41))
    np.testing.assert_allclose([m.loss for m in steps], plain, rtol=1e-6)


def test_training_job_batches_by_the_clock(corpus):
    # a clock that stands still: one batch at the end; one that moves 0.05 s per
    # reading and batches of 0.1 s: a batch every other step or so
    cfg = TrainConfig(steps=12, dim=8, batch_size=8)
    still, _ = _drain(training_job(corpus.ids, corpus.vocab_size, cfg, clock=FakeClock(), batch_seconds=0.1))
    assert len(still) == 1 and len(still[0].steps) == 12
    moving, _ = _drain(training_job(corpus.ids, corpus.vocab_size, cfg, clock=FakeClock(tick=0.05),
                                    batch_seconds=0.1))
    assert len(moving) > 3 and [m.step for m in _steps(moving)] == list(range(1, 13))


def test_training_job_paces_by_its_clock_without_waiting(corpus):
    clock = FakeClock()
    control = TrainingControl(steps_per_second=50.0)
    cfg = TrainConfig(steps=1000, dim=8, batch_size=8)
    gen = training_job(corpus.ids, corpus.vocab_size, cfg, control=control, clock=clock, batch_seconds=0.0)
    first = [m for _ in range(10) for m in next(gen).steps]
    # 10 steps at 50 steps/s: each waited 1/50 s of the clock's time, none of the wall clock's
    assert [m.step for m in first] == list(range(1, 11))
    assert clock.t == pytest.approx(10 / 50)
    assert clock.waits == pytest.approx([1 / 50] * 10)
    control.steps_per_second = 10.0  # a new pace applies from the next step
    clock.waits.clear()
    next(gen)
    assert clock.waits == pytest.approx([1 / 10])
    control.steps_per_second = 0.0  # as fast as possible: no wait at all
    clock.waits.clear()
    for _ in range(5):
        next(gen)
    assert clock.waits == []
    control.stop()
    rest, last = _drain(gen)
    assert len(_steps(rest)) <= 1 and last <= 17


def test_a_change_cuts_a_slow_wait_short(corpus):
    control = TrainingControl(steps_per_second=0.5)  # a step every 2 s
    # the GUI asks for full speed while the job waits for its next step
    clock = FakeClock(on_wait=lambda: setattr(control, "steps_per_second", 0.0), advance=False)
    cfg = TrainConfig(steps=1000, dim=8, batch_size=8)
    gen = training_job(corpus.ids, corpus.vocab_size, cfg, control=control, clock=clock, batch_seconds=0.0)
    next(gen)
    next(gen)
    assert len(clock.waits) == 1 and clock.t < 2.0  # woken, not waited out
    control.stop()
    _drain(gen)


def test_training_job_pause_holds_between_steps(corpus):
    control = TrainingControl()
    cfg = TrainConfig(steps=100000, dim=8, batch_size=8)
    gen = training_job(corpus.ids, corpus.vocab_size, cfg, control=control, clock=FakeClock(tick=0.05),
                       batch_seconds=0.1)
    done = [m.step for m in next(gen).steps]
    control.pause()
    values = []
    while not values or not isinstance(values[-1], RunHeld):
        values.append(next(gen))
    # the steps before the pause are handed over, then the hold says where it stopped
    held = values[-1]
    done += [m.step for m in _steps(values)]
    assert held.step == done[-1] and done == list(range(1, held.step + 1))
    control.resume()  # resumed before the job looks again: it does not wait
    after = next(gen)
    assert after.steps[0].step == held.step + 1
    control.stop()
    _drain(gen)


def test_stop_releases_a_held_job(corpus):
    control = TrainingControl()
    gen = training_job(corpus.ids, corpus.vocab_size, TrainConfig(steps=100, dim=8, batch_size=8),
                       control=control, batch_seconds=0.0)
    next(gen)
    control.pause()
    while not isinstance(next(gen), RunHeld):
        pass
    control.stop()  # a held job waits on an event; stop sets it
    rest, last = _drain(gen)
    assert _steps(rest) == [] and last == 1


def test_training_job_hands_over_the_steps_before_divergence(corpus):
    cfg = TrainConfig(steps=300, dim=16, batch_size=32, lr=1e4, optimizer="sgd")
    gen = training_job(corpus.ids, corpus.vocab_size, cfg, batch_seconds=10.0)
    got = []
    with pytest.raises(FloatingPointError, match="diverged") as exc:
        for batch in gen:
            got.extend(batch.steps)
    # the batch was not due yet (10 s) but the steps before the bad one still arrive
    assert got and got[-1].step == len(got) and all(np.isfinite(m.loss) for m in got)
    # a user-facing error: its message is shown as is, no type name to strip
    assert isinstance(exc.value, TrainingDiverged) and isinstance(exc.value, ExplorerError)
    assert user_message(exc.value).startswith(f"Training diverged at step {len(got) + 1}:")


def test_live_job_prepares_then_trains(corpus):
    cfg = TrainConfig(steps=5, dim=8, batch_size=8)
    values, ended = _drain(live_training_job(lambda: corpus, cfg, batch_seconds=0.0))
    assert isinstance(values[0], tuple) and isinstance(values[0][1], str)
    runs = [v for v in values if isinstance(v, TrainingRun)]
    assert len(runs) == 1 and ended == RunEnded(5, True)
    run = runs[0]
    # the first frame is the table before step 1; the trained table has moved away from it
    assert run.frame.step == 0 and np.all(run.frame.drift == 0)
    batches = [v for v in values if isinstance(v, StepBatch)]
    assert [m.step for m in _steps(batches)] == [1, 2, 3, 4, 5]
    final = batches[-1].frame
    assert final is not None and final.step == 5
    assert np.all(final.drift >= 0) and final.drift.max() > 0
    assert final.coords.shape == (corpus.vocab_size, 2)
    # classes are numbered by sorted name, as for a saved model opened in the explorer
    assert list(run.classes.names) == sorted(set(corpus.classes.values()))
    assert run.classes.name_of(corpus.words.index("cat")) == corpus.classes["cat"]


def test_live_job_refuses_impossible_settings_before_work(corpus):
    calls = []
    gen = live_training_job(lambda: calls.append(1) or corpus, TrainConfig(sparse=True, tied=True))
    with pytest.raises(ConfigError):
        next(gen)
    assert not calls


def test_live_job_stopped_while_preparing_ends_without_steps(corpus):
    control = TrainingControl()
    gen = live_training_job(lambda: control.stop() or corpus, TrainConfig(steps=10, dim=8), control=control)
    values, ended = _drain(gen)
    assert ended == RunEnded(0, False) and not any(isinstance(v, TrainingRun) for v in values)


def test_text_corpus_word_by_word():
    text = "The cat sat.\nThe dog sat on the mat, the end.\n\n"
    c = text_corpus(text)
    words = ["the", "cat", "sat", ".", "the", "dog", "sat", "on", "the", "mat", ",", "the", "end", "."]
    assert c.words[:2] == ["<bos>", "<unk>"]
    stream = [c.words[i] for i in c.ids]
    assert stream == ["<bos>"] + words[:4] + ["<bos>"] + words[4:]
    # ids ordered by frequency: "the" (4 times) is the first word
    assert c.words[2] == "the"
    assert c.counts()[2] == 4 and c.vocab_size == len(set(words)) + 2
    small = text_corpus(text, max_vocab=4)  # <bos>, <unk>, the, sat|. ; the rest -> <unk>
    assert small.vocab_size == 4 and (small.ids == 1).sum() == len(words) - 4 - 2


def test_text_corpus_with_a_model_tokenizer():
    from explorer.core.sources import open_table

    table = open_table("default")
    text = "the cat sees the dog .\nthe dog sees a cat ."
    c = text_corpus(text, table.tokenizer)
    pieces = [t.piece for ln in text.splitlines() for t in table.tokenizer.encode(ln) if not t.special]
    assert [c.words[i] for i in c.ids if i > 1] == pieces
    assert c.vocab_size == len(set(pieces)) + 2


def test_text_corpus_refuses_words_the_tokenizer_cannot_read():
    """A table of ids keeps "abc" as a token with no row (issue 12); training
    on such tokens would invent a vocabulary, so the corpus says why not."""
    from explorer.core.tokens.tokenize import IdTokenizer

    text = "It was the best of times 42 7\n" * 5
    with pytest.raises(ConfigError, match="cannot read this text \\(30 words are not ids: 'It', 'was', 'the', …\\)"):
        text_corpus(text, IdTokenizer(100))
    c = text_corpus("42 7 42 9\n" * 3, IdTokenizer(100))
    assert sorted(set(c.words[2:])) == ["42", "7", "9"]


@pytest.mark.parametrize("text", ["", "   \n ", "one two three"])
def test_text_corpus_too_short(text):
    with pytest.raises(ConfigError):
        text_corpus(text)


def test_classes_cluster_during_training(corpus):
    # the silhouette of the table by class (cosine; sklearn) rises well above its start
    from sklearn.metrics import silhouette_score

    labels = corpus.class_labels()
    keep = (labels >= 0) & (labels < 9)  # content words
    cfg = TrainConfig(steps=1500, dim=16, batch_size=64, lr=0.01, optimizer="adam", snapshot_every=1500)
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    start = silhouette_score(model.embed_tokens.weight.detach().numpy()[keep], labels[keep], metric="cosine")
    last = list(train(corpus.ids, corpus.vocab_size, cfg, model=model))[-1]
    end = silhouette_score(last.snapshot[keep], labels[keep], metric="cosine")
    assert abs(start) < 0.1
    assert end > start + 0.2


def test_a_training_step_waits_for_the_windows_turn_to_end(corpus, monkeypatch):
    """Training yields a tenth of a second apart but steps every 1-2 ms: it waits for the window's turn
    between its steps, as other jobs do at their yields, so a paint does not share the GIL with it."""
    import threading
    import time

    from explorer.core.runtime import WINDOW_TURNS
    from explorer.workers import _run_steps

    WINDOW_TURNS.turn_ended()  # the window rests
    monkeypatch.setattr(WINDOW_TURNS, "max_wait_s", 60.0)  # only the turn's end lets it on
    cfg = TrainConfig(steps=1_000_000, dim=8, batch_size=8)
    model = ToyLM.build(corpus.vocab_size, cfg)
    weight, control = model.embed_tokens.weight, TrainingControl()
    job = training_job(corpus.ids, corpus.vocab_size, cfg, model=model, control=control, clock=FakeClock(),
                       batch_seconds=1e9)  # no yield until it stops: every step between two yields
    worker = threading.Thread(target=lambda: list(_run_steps(job, True)), daemon=True)

    def until(condition) -> bool:
        end = time.monotonic() + 60
        while not condition() and time.monotonic() < end:
            time.sleep(0.005)
        return condition()

    worker.start()
    try:
        assert until(lambda: weight._version > 10)  # it trains
        WINDOW_TURNS.turn_began()
        before = weight._version
        time.sleep(0.2)  # the GIL is free: steps not waiting go on, a hundred or more
        during = weight._version - before
        WINDOW_TURNS.turn_ended()
        after = weight._version
        assert until(lambda: weight._version > after + 10)  # the turn over, it trains again
    finally:
        control.stop()
        WINDOW_TURNS.turn_ended()
        worker.join(60.0)
    assert not worker.is_alive()
    assert during <= 2, during  # at most the step under way when the turn began
