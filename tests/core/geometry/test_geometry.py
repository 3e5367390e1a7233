"""Similarity, neighbours, analogies, mean pooling, PCA and random-vector facts
(explorer.core.geometry.vectors), each against FACTS.md or an independent numpy /
scikit-learn computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.geometry import nearest
from explorer.core.geometry import vectors as geo
from explorer.core.sources import open_table


def _brute_force_neighbors(e: np.ndarray, q: np.ndarray, k: int, exclude=()) -> list[int]:
    e64 = e.astype(np.float64)
    cos = (e64 @ q.astype(np.float64)) / (np.linalg.norm(e64, axis=1) * np.linalg.norm(q))
    cos[list(exclude)] = -np.inf
    return list(np.argsort(-cos, kind="stable")[:k])


# -- similarity ------------------------------------------------------------------------


def test_robot_dot_and_cosine_match_facts():
    t = open_table("toy:robot")
    assert t.params == 12
    ids = [t.tokenizer.id_of(w) for w in ("robot", "arm", "box", "tool")]
    x = t.rows(ids)
    dot = geo.similarity_matrix(x, "dot")
    cos = geo.similarity_matrix(x, "cosine")
    assert round(dot[0, 1], 6) == 1.7
    assert round(dot[0, 2], 6) == 0.0
    assert round(dot[0, 3], 6) == -0.5
    assert round(cos[0, 1], 3) == 0.995
    assert round(cos[0, 2], 3) == 0.0
    assert round(cos[0, 3], 3) == -0.316


def test_row_products_are_the_matrix_product_by_numpys_own_loops_then_by_blas(monkeypatch):
    """``row_products(a, b)`` is ``a @ b.T`` (and ``a @ a.T``) on either side of the size where it
    leaves numpy's own loops (for the window's thread) for BLAS (a worker's big product)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((7, 33)).astype(np.float32)
    b = rng.standard_normal((11, 33)).astype(np.float32)
    for limit in (10**9, 0):  # own loops, then BLAS
        monkeypatch.setattr(geo, "OWN_LOOPS_MACS", limit)
        ab, aa = geo.row_products(a, b), geo.row_products(a)
        assert ab.shape == (7, 11) and aa.shape == (7, 7) and ab.dtype == np.float32
        np.testing.assert_allclose(ab, a.astype(np.float64) @ b.T.astype(np.float64), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(aa, a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-5, atol=1e-5)
        av = geo.row_products(a, b[0])  # one vector: the rows' scores, (m,)
        assert av.shape == (7,) and av.dtype == np.float32
        np.testing.assert_allclose(av, a.astype(np.float64) @ b[0].astype(np.float64), rtol=1e-5, atol=1e-5)
    assert geo.row_products(np.zeros((0, 4)), np.ones((3, 4))).shape == (0, 3)


def test_similarity_matrix_against_numpy():
    x = np.random.default_rng(3).standard_normal((7, 5))
    np.testing.assert_allclose(geo.similarity_matrix(x, "dot"), x @ x.T, rtol=1e-12)
    n = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(geo.similarity_matrix(x, "cosine"), (x @ x.T) / np.outer(n, n), atol=1e-12)
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(geo.similarity_matrix(x, "euclidean"), d, atol=1e-9)
    with pytest.raises(ValueError):
        geo.similarity_matrix(x, "manhattan")


def test_one_hot_vectors_are_equally_far():
    oh = np.eye(5)
    d = geo.similarity_matrix(oh, "euclidean")
    c = geo.similarity_matrix(oh, "cosine")
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(d[off], math.sqrt(2))
    np.testing.assert_allclose(c[off], 0.0)


def test_normalize_rows_unit_norm_and_zero_rows_stay_zero():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    n = geo.normalize_rows(x)
    np.testing.assert_allclose(n[0], [0.6, 0.8], rtol=1e-6)
    np.testing.assert_array_equal(n[1], [0.0, 0.0])


# -- mean pooling ----------------------------------------------------------------------------


def test_mean_pooling_un_happi_ness():
    pieces = np.array([[1.0, 0.0], [0.6, 0.4], [0.2, 0.8]])
    np.testing.assert_allclose(geo.mean_pool(pieces), [0.6, 0.4], atol=1e-12)
    np.testing.assert_allclose(geo.mean_pool(pieces), pieces.sum(0) / 3)
    with pytest.raises(ValueError):
        geo.mean_pool(np.zeros((0, 2)))


# -- neighbours ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_neighbors_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((500, 16)).astype(np.float32)
    qid = int(rng.integers(500))
    got = nearest.nearest_neighbors(e, e[qid], k=8, exclude=[qid])
    want = _brute_force_neighbors(e, e[qid], 8, exclude=[qid])
    assert [n.id for n in got] == want
    assert qid not in [n.id for n in got]
    e64 = e.astype(np.float64)
    for n in got:
        cos = e64[n.id] @ e64[qid] / (np.linalg.norm(e64[n.id]) * np.linalg.norm(e64[qid]))
        assert n.cosine == pytest.approx(cos, abs=1e-5)
    # streaming in small blocks gives the same answer as one block
    small = nearest.nearest_neighbors(e, e[qid], k=8, exclude=[qid], block_rows=7)
    assert [n.id for n in small] == [n.id for n in got]
    np.testing.assert_allclose([n.cosine for n in small], [n.cosine for n in got], rtol=1e-6)


def test_nearest_neighbors_on_a_table_streams_and_excludes_inputs():
    t = open_table("random:3000x24:5")
    e = t.matrix()
    q = e[10] + e[20]
    got = nearest.nearest_neighbors(t, q, k=5, exclude=[10, 20], block_rows=128)
    want = _brute_force_neighbors(e, q, 5, exclude=[10, 20])
    assert [n.id for n in got] == want
    one_block = nearest.nearest_neighbors(t, q, k=5, exclude=[10, 20], block_rows=10**6)
    assert [n.id for n in one_block] == want


def test_nearest_neighbors_skip_zero_and_nonfinite_rows():
    e = np.array([[1.0, 0.0], [0.0, 0.0], [np.inf, 0.0], [0.9, 0.1], [-1.0, 0.0]], np.float32)
    with np.errstate(invalid="ignore"):
        got = nearest.nearest_neighbors(e, np.array([1.0, 0.0]), k=5, exclude=[0])
    ids = [n.id for n in got]
    assert 1 not in ids and 2 not in ids
    assert ids == [3, 4]
    assert nearest.nearest_neighbors(e, np.zeros(2), k=3) == []


def test_analogy_on_a_table_built_to_have_the_answer():
    # king - man + woman = queen exactly, on unit-normalised rows
    rng = np.random.default_rng(0)
    d = 32
    royal, male, female = (rng.standard_normal(d) for _ in range(3))
    rows = {
        "man": male,
        "woman": female,
        "king": royal + male,
        "queen": royal + female,
    }
    # normalise so that a - b + c on unit rows is exactly the queen direction
    for k in rows:
        rows[k] = rows[k] / np.linalg.norm(rows[k])
    noise = rng.standard_normal((40, d))
    names = ["man", "woman", "king", "queen"]
    e = np.vstack([np.stack([rows[n] for n in names]), noise]).astype(np.float32)
    man, woman, king, queen = range(4)
    got = nearest.analogy(e, king, man, woman, k=3)
    ids = [n.id for n in got]
    assert king not in ids and man not in ids and woman not in ids
    # independent computation of the answer by brute force
    en = e / np.linalg.norm(e, axis=1, keepdims=True)
    target = en[king] - en[man] + en[woman]
    assert ids == _brute_force_neighbors(e, target, 3, exclude=[king, man, woman])
    assert ids[0] == queen


# -- PCA --------------------------------------------------------------------------------------


def _align_signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Flip each column of ``a`` to agree with ``b`` (component signs are arbitrary)."""
    s = np.sign((a * b).sum(0))
    s[s == 0] = 1
    return a * s


@pytest.mark.parametrize("shape", [(300, 20), (200, 50)])
def test_pca_matches_sklearn_full_up_to_sign(shape):
    from sklearn.decomposition import PCA

    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    x[:, 0] *= 5
    x[:, 1] *= 3
    p = geo.pca_project(x, n_components=5)
    ref = PCA(n_components=5, svd_solver="full").fit(x.astype(np.float64))
    ref_coords = ref.transform(x.astype(np.float64))
    np.testing.assert_allclose(p.explained, ref.explained_variance_ratio_, rtol=1e-4)
    np.testing.assert_allclose(_align_signs(p.coords, ref_coords), ref_coords, atol=2e-4 * np.abs(ref_coords).max())
    comps = _align_signs(p.components.T, ref.components_.T).T
    np.testing.assert_allclose(comps, ref.components_, atol=1e-4)
    np.testing.assert_array_equal(p.ids, np.arange(shape[0]))
    # transform of the fitted rows gives the coordinates back
    np.testing.assert_allclose(p.transform(x), p.coords, atol=1e-4)


def test_pca_signs_are_deterministic():
    x = np.random.default_rng(5).standard_normal((100, 8)).astype(np.float32)
    p = geo.pca_project(x, n_components=3)
    big = p.components[np.arange(3), np.argmax(np.abs(p.components), axis=1)]
    assert (big > 0).all()


def test_pca_above_1024_dims_uses_randomized_and_still_matches():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(6)
    # a clear low-rank structure so the randomised solver is accurate
    x = (rng.standard_normal((150, 3)) * [10, 6, 3]) @ rng.standard_normal((3, 1100))
    x = (x + 0.01 * rng.standard_normal((150, 1100))).astype(np.float32)
    p = geo.pca_project(x, n_components=3)
    ref = PCA(n_components=3, svd_solver="full").fit(x.astype(np.float64))
    np.testing.assert_allclose(p.explained, ref.explained_variance_ratio_, rtol=1e-3)


# -- random-vector geometry -----------------------------------------------------------------


def test_random_cosine_std_768():
    assert round(geo.random_cosine_std(768), 4) == 0.0361
    assert geo.random_cosine_std(768) == pytest.approx(1 / math.sqrt(768))
    assert round(geo.random_cosine_bound(768), 3) == 0.108


def test_empirical_cosine_std_of_random_pairs_is_close():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((20000, 768))
    b = rng.standard_normal((20000, 768))
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert np.std(cos) == pytest.approx(geo.random_cosine_std(768), rel=0.03)
    # about 99.7 % fall inside 3 / sqrt(d)
    assert np.mean(np.abs(cos) <= geo.random_cosine_bound(768)) == pytest.approx(0.997, abs=0.003)


def test_cosine_histogram_of_a_random_table():
    t = open_table("random:5000x256")
    cos = geo.cosine_histogram_real(t, n_pairs=5000)
    assert np.std(cos) == pytest.approx(1 / math.sqrt(256), rel=0.06)


def test_shell_volume_fraction_768():
    # (0.99)^768 = 0.000444...: FACTS.md quotes it as 0.00045 (99.955 % in
    # the outer shell), a rounding up of the last digit; the formula is the truth.
    f = geo.shell_volume_fraction(768)
    assert f == pytest.approx(math.exp(768 * math.log(0.99)), rel=1e-12)
    assert f == pytest.approx(0.00045, abs=1e-5)
    assert 100 * (1 - f) == pytest.approx(99.955, abs=0.002)
    assert geo.shell_volume_fraction(768, eps=0.0) == 1.0


@pytest.mark.parametrize("streamed", [False, True])
def test_nearest_neighbors_of_huge_finite_rows(streamed):
    """Values around 1e25 are finite in float32 but their squares are not: the
    neighbours must be those of the same table at a normal scale."""
    t = open_table("toy:robot")  # FACTS table C: robot's nearest is arm (cos 0.995)
    e = t.matrix()
    e *= np.float32(1e25)
    assert np.isfinite(e).all()
    robot, arm = t.tokenizer.id_of("robot"), t.tokenizer.id_of("arm")
    got = nearest.nearest_neighbors(e if streamed else t, e[robot], k=1, exclude=[robot])
    assert [n.id for n in got] == [arm]
    assert got[0].cosine == pytest.approx(0.995, abs=5e-4)


def test_pca_above_1024_dims_takes_no_lu_and_finds_the_exact_components(monkeypatch):
    """scipy's LU, which scikit-learn's randomised solver takes between power iterations, holds the
    GIL for its whole length (15-37 ms a call on a 128,256 x 4,096 table; the window waited for each
    while a projection ran): the bases come from QR decompositions, and the result is the exact PCA's."""
    import scipy.linalg
    from sklearn.decomposition import PCA

    def no_lu(*_args, **_kwargs):
        raise AssertionError("an LU decomposition: it holds the GIL")

    monkeypatch.setattr(scipy.linalg, "lu", no_lu)
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((400, 4)) * [12, 8, 5, 3]) @ rng.standard_normal((4, 1500))
    x = (x + 0.05 * rng.standard_normal((400, 1500)) + 2.0).astype(np.float32)
    p = geo.pca_project(x, n_components=3)
    x64 = x.astype(np.float64)
    ref = PCA(n_components=3, svd_solver="full").fit(x64)
    np.testing.assert_allclose(p.explained, ref.explained_variance_ratio_, rtol=1e-4)
    np.testing.assert_allclose(p.mean, ref.mean_, atol=1e-4)
    for got, want in zip(p.components, ref.components_):
        assert abs(float(np.dot(got, want))) == pytest.approx(1.0, abs=1e-5)
    want = ref.transform(x64)
    np.testing.assert_allclose(np.abs(p.coords), np.abs(want), atol=1e-4 * np.abs(want).max())


def test_pca_above_1024_dims_imports_no_scipy():
    """SciPy's import is 0.1-0.16 s of module code in the worker of the first wide table's
    projection, sharing the GIL with the window: torch, imported already, makes the QR bases."""
    from tests.support.fresh import modules_imported_by

    wide = """
import numpy as np
from explorer.core.geometry.vectors import pca_project
p = pca_project(np.random.default_rng(0).standard_normal((300, 1100)).astype(np.float32), n_components=2)
assert p.coords.shape == (300, 2) and np.isfinite(p.coords).all()
"""
    assert modules_imported_by(wide, ("sklearn", "scipy")) == []
