"""The arrays behind the training view's charts (explorer.core.training.charts
and the frames of explorer.core.training.frames), checked against independent
numpy / scikit-learn computations on real runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

from explorer.core.training.charts import (
    RASTER_CHANGED,
    RASTER_GRAD,
    RASTER_NONE,
    TrainingHistory,
    binned,
    moving_average,
)
from explorer.core.training.frames import AlignedPCA, FrameMaker, class_silhouette
from explorer.core.training.model import ToyLM, TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def run(corpus):
    cfg = TrainConfig(steps=60, dim=8, batch_size=16, optimizer="adam", snapshot_every=20)
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    init = model.embed_tokens.weight.detach().numpy().copy()
    metrics = list(train(corpus.ids, corpus.vocab_size, cfg, model=model))
    return init, metrics, model.embed_tokens.weight.detach().numpy().copy()


def test_history_counts_and_series(corpus, run):
    init, metrics, _ = run
    h = TrainingHistory(corpus.counts(), raster_steps=25)
    h.extend(metrics)
    v = corpus.vocab_size
    assert h.n == 60 and h.last_step == 60
    np.testing.assert_array_equal(h.series("loss"), [m.loss for m in metrics])
    np.testing.assert_allclose(h.fraction("grad_rows"), [100 * m.grad_rows / v for m in metrics])
    grad = np.zeros(v, int)
    changed = np.zeros(v, int)
    for m in metrics:
        grad[m.grad_ids] += 1
        changed[m.changed_ids] += 1
    np.testing.assert_array_equal(h.grad_count, grad)
    np.testing.assert_array_equal(h.change_count, changed)


def test_raster_keeps_the_last_steps_in_frequency_order(corpus, run):
    init, metrics, _ = run
    counts = corpus.counts()
    h = TrainingHistory(counts, raster_steps=25)
    h.extend(metrics)
    img, steps = h.raster()
    assert img.shape == (corpus.vocab_size, 25)  # bounded: 60 steps, 25 kept
    np.testing.assert_array_equal(steps, np.arange(36, 61))
    # rows: most frequent first
    assert np.all(np.diff(counts[h.order]) <= 0)
    for col, m in enumerate(metrics[-25:]):
        expect = np.full(corpus.vocab_size, RASTER_NONE)
        expect[np.isin(np.arange(corpus.vocab_size), m.changed_ids)] = RASTER_CHANGED
        expect[m.grad_ids] = RASTER_GRAD
        np.testing.assert_array_equal(img[:, col], expect[h.order])


def test_raster_before_it_is_full(corpus, run):
    init, metrics, _ = run
    h = TrainingHistory(corpus.counts(), raster_steps=100)
    h.extend(metrics[:7])
    img, steps = h.raster()
    assert img.shape == (corpus.vocab_size, 7) and list(steps) == list(range(1, 8))


def test_frames_drift_from_the_initial_table(corpus, run):
    init, metrics, final = run
    maker = FrameMaker(init)
    frame = maker.frame(final, 60)
    np.testing.assert_allclose(frame.drift, np.linalg.norm(final.astype(np.float64) - init, axis=1), rtol=1e-6)
    # rows never in any batch did not move (Adam without weight decay)
    seen = np.zeros(corpus.vocab_size, bool)
    for m in metrics:
        seen[m.grad_ids] = True
    assert (~seen).any() and np.all(frame.drift[~seen] == 0)
    assert np.all(frame.drift[seen] > 0)
    h = TrainingHistory(corpus.counts())
    assert np.all(h.drift() == 0) and h.frame_step == -1
    h.set_frame(frame)
    assert h.frame_step == 60 and h.drift() is frame.drift
    bad = final.copy()
    bad[3, 0] = np.inf
    assert np.isinf(maker.frame(bad, 61).drift[3])


def test_frames_project_on_an_aligned_basis_refitted_now_and_then(corpus, run):
    init, _metrics, final = run
    labels = corpus.class_labels()
    maker = FrameMaker(init, labels, refit_every=40)
    first = maker.frame(init, 0)
    assert first.refitted and first.basis_step == 0
    # a frame between refits projects on the old basis
    pca = AlignedPCA().fit(init, 0)
    mid = maker.frame(final, 20)
    assert not mid.refitted and mid.basis_step == 0
    np.testing.assert_allclose(mid.coords, pca.transform(final), rtol=1e-5, atol=1e-6)
    # class centres are the mean coordinates of each class's rows
    k = int(labels.max()) + 1
    assert mid.centres.shape == (k, 2)
    for c in range(k):
        np.testing.assert_allclose(mid.centres[c], mid.coords[labels == c].mean(axis=0), rtol=1e-5, atol=1e-6)
    assert mid.silhouette == first.silhouette  # measured at the fit
    late = maker.frame(final, 40)
    assert late.refitted and late.basis_step == 40
    keep = labels >= 0
    assert late.silhouette == pytest.approx(silhouette_score(final[keep], labels[keep], metric="cosine"), abs=1e-6)
    # the refit keeps the orientation: both frames of the same table agree in sign
    for j in range(2):
        assert np.corrcoef(mid.coords[:, j], late.coords[:, j])[0, 1] > 0
    # without classes: no silhouette, no centres
    plain = FrameMaker(init).frame(final, 5)
    assert plain.silhouette is None and plain.centres.shape == (0, 2)


def test_raster_groups_rows_for_a_short_chart(corpus, run):
    _init, metrics, _ = run
    h = TrainingHistory(corpus.counts(), raster_steps=25)
    h.extend(metrics)
    full, steps = h.raster()
    grouped, steps2 = h.raster(max_rows=50)
    group = -(-corpus.vocab_size // 50)
    assert grouped.shape == (-(-corpus.vocab_size // group), 25)
    np.testing.assert_array_equal(steps, steps2)
    for r in range(grouped.shape[0]):
        np.testing.assert_array_equal(grouped[r], full[r * group:(r + 1) * group].max(axis=0))


def test_csv_has_one_line_per_step(corpus, run):
    init, metrics, _ = run
    h = TrainingHistory(corpus.counts())
    h.extend(metrics)
    lines = h.to_csv().strip().splitlines()
    assert len(lines) == 61 and lines[0].startswith("step,loss")
    row = lines[5].split(",")
    assert int(row[0]) == 5 and float(row[1]) == pytest.approx(metrics[4].loss, rel=1e-5)
    assert int(row[4]) == metrics[4].grad_rows and int(row[6]) == metrics[4].changed_rows
    rows = h.rows_csv(corpus.words).strip().splitlines()
    assert len(rows) == corpus.vocab_size + 1


def test_history_refuses_a_frame_of_another_table(corpus, run):
    init, _, _ = run
    frame = FrameMaker(init[:5]).frame(init[:5], 1)
    with pytest.raises(ValueError):
        TrainingHistory(corpus.counts()).set_frame(frame)


def test_binned_and_moving_average():
    x = np.arange(10, dtype=float)
    np.testing.assert_array_equal(binned(x, 20)[0], x)
    vals, size = binned(x, 4)
    assert size == 3
    np.testing.assert_allclose(vals, [1, 4, 7, 9])
    ma = moving_average(x, 3)
    expect = [np.mean(x[max(0, i - 2): i + 1]) for i in range(10)]
    np.testing.assert_allclose(ma, expect)
    assert moving_average(np.array([]), 5).size == 0


def test_aligned_pca_matches_sklearn_up_to_sign():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6)) * np.array([5, 3, 1, 0.5, 0.2, 0.1])
    ours = AlignedPCA().fit(x).transform(x)
    ref = PCA(n_components=2, svd_solver="full").fit_transform(x)
    for k in range(2):
        assert abs(np.corrcoef(ours[:, k], ref[:, k])[0, 1]) == pytest.approx(1, abs=1e-5)


def test_aligned_pca_keeps_its_signs_between_fits():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(80, 5)) * np.array([4, 2, 1, 0.5, 0.1])
    pca = AlignedPCA().fit(x, step=0)
    before = pca.components.copy()
    # a refit on nearly the same table, and on its mirror image, keeps the orientation
    for y in (x + rng.normal(scale=0.01, size=x.shape), -x):
        pca.fit(y, step=1)
        assert np.all(np.einsum("kd,kd->k", pca.components, before) > 0.99)
    # a fixed basis: between fits, new tables are projected, not refitted
    moved = x * 2
    np.testing.assert_allclose(pca.transform(moved), (moved - pca.mean) @ pca.components.T, rtol=1e-5, atol=1e-5)


def test_aligned_pca_survives_bad_values():
    x = np.ones((4, 3), np.float32)
    x[0, 0] = np.nan
    x[1, 1] = np.inf
    coords = AlignedPCA().fit(x).transform(x)
    assert coords.shape == (4, 2) and np.isfinite(coords).all()


def test_class_silhouette_equals_sklearn(corpus, run):
    init, _, final = run
    labels = corpus.class_labels()
    keep = labels >= 0
    for table in (init, final):
        ref = silhouette_score(table[keep], labels[keep], metric="cosine")
        assert class_silhouette(table, labels) == pytest.approx(ref, abs=1e-6)


def test_class_silhouette_undefined_cases():
    x = np.random.default_rng(0).normal(size=(6, 3))
    assert class_silhouette(x, np.full(6, -1)) is None
    assert class_silhouette(x, np.zeros(6, int)) is None
    bad = x.copy()
    bad[0, 0] = np.nan
    assert class_silhouette(bad, np.array([0, 0, 0, 1, 1, 1])) is None


def test_batched_extend_equals_step_by_step(corpus, run):
    init, metrics, _ = run
    one = TrainingHistory(corpus.counts(), raster_steps=10)
    for m in metrics:
        one.add(m)
    many = TrainingHistory(corpus.counts(), raster_steps=10)
    many.extend(metrics[:3])
    many.extend(metrics[3:])  # a batch longer than the raster
    for name in ("loss", "grad_rows", "changed_rows"):
        np.testing.assert_array_equal(one.series(name), many.series(name))
    np.testing.assert_array_equal(one.grad_count, many.grad_count)
    np.testing.assert_array_equal(one.raster()[0], many.raster()[0])
    np.testing.assert_array_equal(one.raster()[1], many.raster()[1])
    assert one.last_step == many.last_step == 60
    assert many.version == 2 and one.version == 60
