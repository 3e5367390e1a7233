"""The density map of a 2D layout (explorer.core.projection.density)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.projection.density import (
    contour_segments,
    density_grid,
    density_job,
    grid_peaks,
    histogram,
    mass_levels,
)


def _run(gen):
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def _two_clusters(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal((-2.0, 0.0), 0.4, (n // 2, 2))
    b = rng.normal((2.0, 1.0), 0.4, (n // 2, 2))
    return np.vstack([a, b])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2000), st.floats(0, 3), st.integers(2, 40), st.integers(2, 40), st.integers(0, 10_000))
def test_mass_equals_the_points_in_range(n, sigma, nx, ny, seed):
    rng = np.random.default_rng(seed)
    xy = rng.normal(0, 1.5, (n, 2))
    rect = (-1.0, 2.0, -1.5, 1.0)
    grid = density_grid(xy, rect, (nx, ny), sigma)
    inside = ((xy[:, 0] >= -1) & (xy[:, 0] <= 2) & (xy[:, 1] >= -1.5) & (xy[:, 1] <= 1)).sum()
    assert grid.n_in_range == inside
    assert grid.counts.shape == (ny, nx)
    assert grid.counts.sum() == pytest.approx(inside, abs=1e-6)
    assert (grid.counts >= -1e-12).all()


def test_the_histogram_agrees_with_numpy():
    xy = _two_clusters(3000, seed=3)
    rect = (-3.0, 3.0, -2.0, 2.5)
    counts, n = histogram(xy, rect, (30, 20))
    ref, _, _ = np.histogram2d(xy[:, 0], xy[:, 1], bins=(30, 20), range=((-3, 3), (-2, 2.5)))
    # numpy puts x along the first axis; the grid has rows along y
    assert np.array_equal(counts, ref.T)
    assert n == int(ref.sum())


def test_levels_are_increasing_and_enclose_their_shares():
    grid = density_grid(_two_clusters(), (-4, 4, -3, 4), (64, 64), 1.5)
    levels = np.array(grid.levels)
    assert len(levels) >= 3
    assert (np.diff(levels) > 0).all()
    total = grid.counts.sum()
    for level, share in zip(grid.levels, grid.shares):
        enclosed = grid.counts[grid.counts >= level].sum() / total
        assert enclosed == pytest.approx(share, abs=0.05)


def test_levels_of_an_empty_grid():
    assert mass_levels(np.zeros((4, 4))) == ()


def test_two_clusters_give_two_peaks_where_they_are():
    grid = density_grid(_two_clusters(), (-4, 4, -3, 4), (80, 70), 1.5)
    peaks = grid_peaks(grid.counts, min_share=0.2)
    assert len(peaks) == 2
    xs, ys = grid.centres()
    found = sorted((xs[c], ys[r]) for r, c in peaks)
    assert found[0] == pytest.approx((-2.0, 0.0), abs=0.35)
    assert found[1] == pytest.approx((2.0, 1.0), abs=0.35)


def test_one_cluster_gives_one_peak():
    rng = np.random.default_rng(1)
    grid = density_grid(rng.normal(0, 1, (5000, 2)), (-4, 4, -4, 4), (60, 60), 2.0)
    assert len(grid_peaks(grid.counts, min_share=0.2)) == 1


def test_a_square_contour_circles_the_block():
    z = np.zeros((6, 6))
    z[2:4, 2:4] = 1.0
    seg = contour_segments(z, 0.5)
    assert len(seg) == 8  # a diamond-cornered ring of 8 segments
    pts = seg.reshape(-1, 2)
    assert pts[:, 0].min() == pytest.approx(1.5) and pts[:, 0].max() == pytest.approx(3.5)
    assert pts[:, 1].min() == pytest.approx(1.5) and pts[:, 1].max() == pytest.approx(3.5)
    # a closed curve: every end point is shared by exactly two segments
    _, counts = np.unique(np.round(pts, 9), axis=0, return_counts=True)
    assert (counts == 2).all()


def test_a_saddle_gives_two_segments():
    z = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert contour_segments(z, 0.5).shape == (2, 2, 2)


def test_the_job_returns_contours_in_view_coordinates():
    xy = _two_clusters()
    result = _run(density_job(xy, (-4, 4, -3, 4), (64, 56), key="k"))
    assert result.grid.key == "k"
    assert len(result.contours) == len(result.grid.levels)
    outer = result.contours[0].reshape(-1, 2)  # the 90 % contour
    assert outer[:, 0].min() >= -4 and outer[:, 0].max() <= 4
    assert outer[:, 1].min() >= -3 and outer[:, 1].max() <= 4
    # it encloses both clusters: it reaches past both centres
    assert outer[:, 0].min() < -2 < 2 < outer[:, 0].max()


def test_bad_rectangles_are_refused():
    with pytest.raises(ValueError):
        density_grid(np.zeros((3, 2)), (1, 1, 0, 1), (10, 10))
    with pytest.raises(ValueError):
        density_grid(np.zeros((3, 2)), (0, 1, 0, 1), (1, 10))
