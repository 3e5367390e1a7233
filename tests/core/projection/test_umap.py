"""UMAP's own epochs (explorer/core/projection/manifold/umap_epochs.py) and
the trustworthiness that scores it.

The layout is checked on rows with a known answer planted in them (clusters
that must stay apart, neighbours that must stay near), the epochs for giving
the same layout on one thread and on all, and the score against
scikit-learn's own function.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from explorer.core.jobs import run_to_end
from explorer.core.projection.manifold import manifold_job, umap_epochs
from explorer.core.projection.manifold.knn import knn_graph_job
from explorer.core.projection.manifold.quality import layout_trustworthiness
from explorer.core.projection.manifold.umap_epochs import draw_point, next_random, pow_many, pull_step, push_step
from explorer.core.projection.manifold.umap_layout import umap_layout, umap_steps


def unit(rows):
    rows = np.asarray(rows, np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clusters(n_clusters=6, per=120, dims=24, spread=0.15, seed=0):
    """Unit rows around ``n_clusters`` random directions, and each row's cluster."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_clusters, dims))
    labels = np.repeat(np.arange(n_clusters), per)
    return unit(centres[labels] + spread * rng.standard_normal((len(labels), dims))), labels


def test_the_fast_power_is_the_power_within_1e4():
    x = np.geomspace(1e-6, 1e4, 200_001).astype(np.float32)
    for b in (0.8950609, -0.1049391, 1.0, 1.5):
        got = pow_many(x, np.float32(b)).astype(np.float64)
        want = x.astype(np.float64) ** b
        assert np.max(np.abs(got / want - 1)) < 1e-4, b


def test_planted_clusters_stay_apart_and_neighbourhoods_are_kept():
    from sklearn.neighbors import KNeighborsClassifier

    x, labels = clusters()
    coords = umap_layout(x, 2, seed=3)
    assert coords.shape == (len(x), 2) and coords.dtype == np.float32 and np.isfinite(coords).all()
    # every point's nearest points on the map are of its own cluster
    knn = KNeighborsClassifier(n_neighbors=6).fit(coords, labels)
    assert knn.score(coords, labels) > 0.99
    # the clusters' centres lie farther apart than their points from them
    centres = np.array([coords[labels == c].mean(0) for c in range(6)])
    radius = max(np.linalg.norm(coords[labels == c] - centres[c], axis=1).mean() for c in range(6))
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)[~np.eye(6, dtype=bool)]
    assert gaps.min() > 2 * radius
    trust, _ = layout_trustworthiness(x, coords)
    assert trust > 0.9


def test_same_layout_on_one_thread_and_on_all_and_per_seed():
    x, _ = clusters(n_clusters=4, per=100, seed=1)
    every = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = umap_layout(x, 2, seed=5, n_epochs=60)
    finally:
        numba.set_num_threads(every)
    np.testing.assert_array_equal(umap_layout(x, 2, seed=5, n_epochs=60), one)
    assert not np.array_equal(umap_layout(x, 2, seed=6, n_epochs=60), one)


def test_the_epochs_hand_out_frames_that_converge():
    x, _ = clusters(n_clusters=3, per=60, seed=2)
    frames = list(umap_steps(x, 3, seed=0, n_epochs=50, every=10))
    assert [f[0] for f in frames] == [10, 20, 30, 40, 50] and all(f[1] == 50 for f in frames)
    assert all(f[2].shape == (180, 3) for f in frames)
    assert not np.shares_memory(frames[0][2], frames[-1][2])  # each frame is a copy the window can keep
    moves = [np.abs(b[2] - a[2]).mean() for a, b in zip(frames, frames[1:])]
    assert moves[-1] < moves[0]  # the learning rate falls to zero: the layout settles


@pytest.mark.parametrize("k", [5, 15])
def test_trustworthiness_is_scikit_learns(k):
    from sklearn.manifold import trustworthiness

    rng = np.random.default_rng(k)
    x = rng.standard_normal((400, 30))
    coords = x[:, :2] + 0.5 * rng.standard_normal((400, 2))
    got, rows = layout_trustworthiness(x, coords, n_neighbors=k)
    assert rows == 400
    assert got == pytest.approx(trustworthiness(x, coords, n_neighbors=k, metric="cosine"), abs=1e-12)


def test_the_umap_job_moves_live_and_ends_on_its_last_frame(minilm_table):
    messages, frames, job = [], [], manifold_job(minilm_table, "umap", "sample", sample_size=800, seed=2)
    while True:
        try:
            item = next(job)
        except StopIteration as stop:
            result = stop.value
            break
        (messages.append(item[1]) if isinstance(item, tuple) else frames.append(item))
    assert any("UMAP epoch 500 of 500" in m for m in messages)
    assert frames and not frames[0].done and frames[-1].iteration == frames[-1].n_iter == 500
    assert frames[0].progress == "epoch 10 of 500"
    np.testing.assert_array_equal(frames[-1].coords, result.coords)
    assert result.done and result.trustworthiness > 0.8


@numba.njit(fastmath=True)
def _point_by_point(y, y0, class_ptr, indptr, tails, per_sample, next_pos, per_negative, next_neg, rng, a, b, gamma,
                    alpha, epoch):
    """The epoch written plainly: class after class, each point's edges in order, each sampled
    edge's pull (towards a neighbour's place now, or at the epoch's start for one of the same
    class) then its pushes (from places at the epoch's start)."""
    n = y.shape[0]
    one, four, tiny = np.float32(1.0), np.float32(4.0), np.float32(0.001)
    b1, pull, push = b - one, np.float32(-2.0) * a * b, np.float32(2.0) * gamma * b
    least = -one / alpha
    for c in range(len(class_ptr) - 1):
        lo, hi = class_ptr[c], class_ptr[c + 1]
        for j in range(lo, hi):
            state = rng[j]
            for e in range(indptr[j], indptr[j + 1]):
                if next_pos[e] > epoch:
                    continue
                k = tails[e]
                pull_step(y, y0 if lo <= k < hi else y, j, k, a, b1, pull, one, four, alpha, least)
                next_pos[e] += per_sample[e]
                count = int((epoch - next_neg[e]) / per_negative[e])
                next_neg[e] += count * per_negative[e]
                for _ in range(count):
                    state = next_random(state)
                    push_step(y, y0, j, draw_point(state, n), a, b, push, tiny, one, four, alpha)
            rng[j] = state


def test_the_interleaved_lanes_take_each_points_steps_as_one_by_one(monkeypatch):
    """The epoch moves four points side by side on a thread; every point must take the same
    steps, in the same order, as when the points are moved one after another. Each epoch of a
    real layout is run both ways from the same start and compared (over a whole run, rounding
    differences of two compilations grow, as in any SGD, so the runs are compared epoch by epoch).
    Run against a kernel that mixes up the lanes' edges or streams, the schedules differ at once."""
    x, _ = clusters(n_clusters=5, per=81, seed=7)  # 405 points: the last group of lanes is not full
    lanes, compared = umap_epochs._epoch, []

    def both(*args):
        plain = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        lanes(*args)
        _point_by_point(*plain)
        # the same edges sampled, the same number of draws from each point's stream: exactly
        for mine, theirs in zip(args[6:10], plain[6:10]):
            np.testing.assert_array_equal(mine, theirs)
        # the same places, to rounding: the two compilations round differently in the last bit, and a
        # point reads its neighbours' places of this epoch, so a difference travels on within the epoch
        # (up to 4e-5 of the layout's size here); and but for a point whose push met another almost on
        # top of it, where the last-bit rounding can flip a clipped step. Reading a wrong point, or a
        # neighbour's place from the wrong copy, moves points by whole steps.
        y, y_plain = args[0], plain[0]
        close = np.all(np.abs(y - y_plain) <= 1e-4 * float(np.abs(y_plain).max()), axis=1)
        assert close.mean() > 0.99
        compared.append(True)

    monkeypatch.setattr(umap_epochs, "_epoch", both)
    umap_layout(x, 2, seed=4, n_epochs=40)
    assert len(compared) == 40


def test_no_two_neighbours_share_a_class_but_the_last():
    """The classes moved one after another are colours of the graph: a point reads the places its
    neighbours have now, which is safe only when no neighbour moves at the same time."""
    from explorer.core.projection.manifold.fuzzy_graph import fuzzy_graph
    from explorer.core.projection.manifold.umap_epochs import CLASSES, colour_classes, sampled_edges

    x, _ = clusters(n_clusters=8, per=150, seed=2)
    graph = run_to_end(knn_graph_job(x, k=15))
    # the app's own graph (umap-learn's, edge for edge: the next test), compiled once and kept;
    # umap-learn's own is compiled again in every process (8-40 s of the suite)
    fuzzy = fuzzy_graph(graph.indices[:, :15], graph.distances[:, :15])
    g = sampled_edges(fuzzy, 200)
    heads = np.repeat(np.arange(g.shape[0]), np.diff(g.indptr))
    for most in (CLASSES, 3):
        colour, used = colour_classes(g.indptr.astype(np.int64), g.indices.astype(np.int64), g.shape[0], most)
        assert used == colour.max() + 1 <= most and colour.min() == 0
        clash = colour[heads] == colour[g.indices]
        assert not clash[colour[heads] < most - 1].any()  # proper colours below the last
        if most == 3:  # too few colours for this graph: the rest share the last, neighbours among them
            assert clash.any() and used == 3
        # greedy: a point has the last colour only when every smaller one is taken by a neighbour before it
        for j in np.flatnonzero(colour == used - 1)[:50]:
            earlier = g.indices[g.indptr[j]:g.indptr[j + 1]]
            earlier = earlier[earlier < j]
            assert set(range(used - 1)) <= set(colour[earlier])


def test_the_fuzzy_graph_is_umap_learns(monkeypatch):
    """The fuzzy graph is compiled here (umap-learn's is compiled again in every session); it must be
    umap-learn's own, edge for edge: on clustered rows, with exact duplicates (neighbours at distance 0,
    where the scale falls back to its floor) and missing neighbours (-1). umap-learn's own code runs
    as written, uncompiled: its two numba functions cost 10-40 s to compile in every test process."""
    import umap.umap_

    for name in ("smooth_knn_dist", "compute_membership_strengths"):
        monkeypatch.setattr(umap.umap_, name, getattr(umap.umap_, name).py_func)

    from explorer.core.projection.manifold.fuzzy_graph import fuzzy_graph

    x, _ = clusters(n_clusters=7, per=90, seed=5)
    x[1:6] = x[0]  # six identical rows
    graph = run_to_end(knn_graph_job(x, k=15))
    indices, distances = graph.indices[:, :15].copy(), graph.distances[:, :15].copy()
    indices[10, 12:], distances[10, 12:] = -1, np.inf  # a row with three neighbours missing
    theirs, _, _ = umap.umap_.fuzzy_simplicial_set(x, 15, np.random.RandomState(0), "cosine",
                                                   knn_indices=indices, knn_dists=distances)
    mine, theirs = fuzzy_graph(indices, distances), theirs.tocsr()
    mine.sort_indices()
    theirs.sort_indices()
    np.testing.assert_array_equal(mine.indptr, theirs.indptr)
    np.testing.assert_array_equal(mine.indices, theirs.indices)
    # uncompiled, their search for each row's scale runs in float64 rather than numba's float32 and
    # may stop at another step of its bisection (it stops within 1e-5): a few weights differ by 1e-6
    np.testing.assert_allclose(mine.data, theirs.data, atol=1e-5)
    assert (abs(mine - mine.T) > 1e-7).nnz == 0 and mine.max() <= 1.0


def test_close_pairs_do_not_leapfrog_off_the_map():
    """Forty pairs of rows, each pair close together and away from everything else, among
    3,000 clustered rows. A pull strong enough to carry a point past its partner, with the
    partner then pulled past it in its own class, makes a pair travel off as a pair: without
    the cap, 4 points ended 5 times farther out than 95 % of the map."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((30, 24))
    x = centres[rng.integers(0, 30, 3000)] + 0.5 * rng.standard_normal((3000, 24))
    p = rng.standard_normal((40, 24))
    rows = unit(np.concatenate([x, p, p + 1e-2 * rng.standard_normal(p.shape)]))
    coords = umap_layout(rows, 2, seed=0)
    radius = np.linalg.norm(coords - np.median(coords, axis=0), axis=1)
    assert radius.max() < 2 * np.quantile(radius, 0.95)


@pytest.mark.parametrize("spread, min_dist", [(1.0, 0.1), (1.0, 0.5), (2.0, 0.0)])
def test_the_curve_parameters_are_umap_learns(spread, min_dist):
    import umap.umap_

    from explorer.core.projection.manifold.umap_layout import curve_parameters

    np.testing.assert_allclose(curve_parameters(spread, min_dist), umap.umap_.find_ab_params(spread, min_dist),
                               rtol=1e-6)


def test_the_start_is_the_pca_stretched_to_ten():
    from explorer.core.geometry.vectors import pca_project
    from explorer.core.projection.manifold.umap_layout import pca_start

    x, _ = clusters(n_clusters=4, per=50, seed=3)
    start = pca_start(x, 2, seed=0)
    assert start.dtype == np.float32 and start.shape == (200, 2)
    np.testing.assert_allclose(start.min(0), 0, atol=1e-3)
    np.testing.assert_allclose(start.max(0), 10, atol=1e-3)
    pca = pca_project(x, n_components=2).coords
    for axis in range(2):  # the same order of the points along each axis as the PCA's, to the jitter
        assert np.corrcoef(start[:, axis], pca[:, axis])[0, 1] > 0.999999
    assert not np.array_equal(start, pca_start(x, 2, seed=1))


def test_every_compiled_function_lets_the_window_run_meanwhile():
    """numba's code holds the GIL unless told not to: the fuzzy graph's row scales held it 55-72 ms on
    MiniLM's 30,522 rows, and the window's thread, in a turn, waited for them. Each compiled function of
    the layouts releases it (it touches no Python object)."""
    from explorer.core.projection.manifold import fuzzy_graph, neighbour_choice

    compiled = [(module.__name__, name, fn) for module in (fuzzy_graph, neighbour_choice, umap_epochs)
                for name, fn in vars(module).items() if isinstance(fn, numba.core.registry.CPUDispatcher)]
    assert len(compiled) >= 10
    holding = [f"{module}.{name}" for module, name, fn in compiled if not fn.targetoptions.get("nogil")]
    assert holding == []
