"""Automatic cluster labels of a 2D layout (explorer.core.projection.clusters)."""

import numpy as np
import pytest

from explorer.core.projection.clusters import cluster_layout, n_clusters_for

CENTRES = np.array([[-5.0, 0.0], [5.0, 0.0], [0.0, 6.0]])


def _blobs(sizes=(600, 300, 150), seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, 0.5, (n, 2)) for c, n in zip(CENTRES, sizes)])


def test_three_blobs_give_three_clusters_biggest_first():
    xy = _blobs()
    res = cluster_layout(xy, 3, m=2, seed=0, key="k")
    assert res.key == "k"
    assert list(res.sizes) == [600, 300, 150]
    np.testing.assert_allclose(res.centres, CENTRES, atol=0.15)
    for c, members in enumerate(res.central):
        assert len(members) == 2
        d = np.linalg.norm(xy - res.centres[c], axis=1)
        blob = range(0, 600) if c == 0 else (range(600, 900) if c == 1 else range(900, 1050))
        own = np.array(list(blob))
        # the most central members: the points of the cluster nearest its centre, nearest first
        assert list(members) == list(own[np.argsort(d[own])[:2]])


def test_the_same_seed_gives_the_same_clusters():
    xy = _blobs(seed=4)
    a, b = cluster_layout(xy, 5, seed=7), cluster_layout(xy, 5, seed=7)
    np.testing.assert_array_equal(a.centres, b.centres)
    assert [list(x) for x in a.central] == [list(x) for x in b.central]


def test_points_that_are_not_finite_are_left_out():
    xy = _blobs()
    xy[[3, 700]] = np.nan
    res = cluster_layout(xy, 3)
    assert res.sizes.sum() == len(xy) - 2
    assert all(3 not in m and 700 not in m for m in res.central)


def test_few_points_few_clusters():
    assert n_clusters_for(10) == 0
    assert n_clusters_for(100) == 4
    assert n_clusters_for(256_000) == 12
    assert cluster_layout(np.zeros((0, 2)), 3).sizes.size == 0


@pytest.mark.parametrize("n", [30_000])
def test_a_big_layout_is_clustered_too(n):
    rng = np.random.default_rng(1)
    xy = np.vstack([rng.normal(c, 0.6, (n // 3, 2)) for c in CENTRES])
    res = cluster_layout(xy, 3)
    np.testing.assert_allclose(sorted(map(tuple, res.centres)), sorted(map(tuple, CENTRES)), atol=0.2)


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two labellings split the points the same way (whatever the clusters' numbers)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _planted(n_per, seed, spread=0.35):
    """Eight blobs of different sizes and spreads around planted centres in 2D, 12 apart or more."""
    rng = np.random.default_rng(seed)
    centres = np.array([[x, y] for x in (-18, -6, 6, 18) for y in (-6, 6)]) + rng.uniform(-1, 1, (8, 2))
    sizes = (np.array([1.0, 2, 3, 1, 2, 4, 1, 3]) * n_per).astype(int)
    xy = np.vstack([rng.normal(c, spread * (1 + j % 3), (n, 2)) for j, (c, n) in enumerate(zip(centres, sizes))])
    truth = np.repeat(np.arange(8), sizes)
    return xy, truth, centres


@pytest.mark.parametrize("n_per", [60, 4_000])  # 1,020 points; 68,000 (fitted on a sample of FIT_SAMPLE)
def test_kmeans_finds_the_planted_clusters_as_scikit_learn_does(n_per):
    from sklearn.cluster import KMeans

    from explorer.core.projection.clusters import FIT_SAMPLE, kmeans

    xy, truth, planted = _planted(n_per, seed=3)
    assert (len(xy) > FIT_SAMPLE) == (n_per > 1000)
    ref = KMeans(n_clusters=8, random_state=0, n_init=3).fit(xy)
    centres, labels = kmeans(xy, 8, seed=0, n_init=3)
    assert _same_partition(labels, truth)
    assert _same_partition(labels, ref.labels_)
    # the same clusters, so the same centres: the means of their points
    for c in range(8):
        np.testing.assert_allclose(centres[c], xy[labels == c].mean(axis=0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(sorted(map(tuple, centres)), sorted(map(tuple, ref.cluster_centers_)), atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kmeans_without_clusters_is_as_good_as_scikit_learns(seed):
    """Points with no clusters in them: k-means only finds a local optimum; the inertia of the
    best of three runs is within 2 % of scikit-learn's best of three."""
    from sklearn.cluster import KMeans

    from explorer.core.projection.clusters import kmeans

    xy = np.random.default_rng(seed).uniform(-1, 1, (3_000, 2))
    centres, labels = kmeans(xy, 7, seed=seed, n_init=3)
    inertia = float(((xy - centres[labels]) ** 2).sum())
    ref = KMeans(n_clusters=7, random_state=seed, n_init=3).fit(xy)
    assert inertia <= ref.inertia_ * 1.02
    assert np.array_equal(labels, _sq_nearest(xy, centres))  # every point is in its nearest centre's cluster


def _sq_nearest(xy, centres):
    return np.argmin(((xy[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)


def test_kmeans_of_repeated_points_gives_every_cluster_a_point():
    from explorer.core.projection.clusters import kmeans

    xy = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]), [50, 30, 20], axis=0)
    centres, labels = kmeans(xy, 3, seed=0)
    assert sorted(np.bincount(labels, minlength=3).tolist()) == [20, 30, 50]
    assert np.isfinite(centres).all()


def test_clustering_a_layout_imports_neither_scikit_learn_nor_scipy():
    """The clusters job runs while the user clicks: scikit-learn's import (with SciPy's) is 0.7-1.0 s
    of module code sharing the GIL with the window."""
    from tests.support.fresh import modules_imported_by

    code = ("import numpy as np\n"
            "from explorer.core.projection.clusters import cluster_layout\n"
            "xy = np.random.default_rng(0).normal(size=(30_000, 2))\n"
            "res = cluster_layout(xy, 12)\n"
            "assert res.sizes.sum() == 30_000\n")
    assert modules_imported_by(code, ("sklearn", "scipy")) == []
