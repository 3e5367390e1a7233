"""Points inside a lasso (explorer.core.projection.lasso) against shapes whose
inside is known: a square, a concave L, a self-crossing bow tie, degenerate paths."""

from __future__ import annotations

import numpy as np

from explorer.core.projection.lasso import inside_polygon


def test_square_and_concave_l():
    rng = np.random.default_rng(0)
    pts = rng.uniform(-1, 3, size=(5000, 2))
    square = np.array([[0, 0], [2, 0], [2, 2], [0, 2]])
    want = (pts[:, 0] > 0) & (pts[:, 0] < 2) & (pts[:, 1] > 0) & (pts[:, 1] < 2)
    np.testing.assert_array_equal(inside_polygon(pts, square), want)
    np.testing.assert_array_equal(inside_polygon(pts, square[::-1]), want)  # either direction
    ell = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 2], [0, 2]])  # the square without its top right quarter
    np.testing.assert_array_equal(inside_polygon(pts, ell), want & ~((pts[:, 0] > 1) & (pts[:, 1] > 1)))


def test_bow_tie_and_degenerate_paths():
    bow = np.array([[0, 0], [2, 2], [2, 0], [0, 2]])  # two triangles meeting at (1, 1)
    pts = np.array([[0.2, 1.0], [1.8, 1.0], [1.0, 0.2], [1.0, 1.8], [5.0, 5.0], [np.nan, 1.0]])
    np.testing.assert_array_equal(inside_polygon(pts, bow), [True, True, False, False, False, False])
    assert not inside_polygon(pts, bow[:2]).any()  # a line encloses nothing
    assert inside_polygon(np.zeros((0, 2)), bow).shape == (0,)
