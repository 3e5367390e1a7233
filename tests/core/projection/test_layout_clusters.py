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
