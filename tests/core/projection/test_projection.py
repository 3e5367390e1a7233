"""The projection job (explorer.core.projection.job) and the geometry helpers the
Projection and Similarity views show, against scikit-learn, numpy and FACTS.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.core.geometry import vectors as geo
from explorer.core.projection import job as pj
from explorer.core.sources import open_table
from tests.support.jobs import drain as run


def _align(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s = np.sign((a * b).sum(0))
    s[s == 0] = 1
    return a * s


# -- fit set ----------------------------------------------------------------------------


def test_fit_set_whole_vocabulary_when_small():
    t = open_table("default")
    fit = pj.choose_fit_set(t)
    assert fit.mode == "all"
    np.testing.assert_array_equal(fit.ids, np.arange(t.trained_rows))
    assert f"{t.trained_rows:,}" in fit.description


def test_fit_set_sample_for_big_tables_includes_interest():
    t = open_table("random:70000x8")
    assert t.trained_rows > pj.WHOLE_VOCAB_LIMIT
    interest = [5, 69_999, 12_345]
    fit = pj.choose_fit_set(t, "auto", sample_size=1000, interest=interest + [-1, 10**9])
    assert fit.mode == "sample"
    assert set(interest) <= set(fit.ids.tolist())
    assert 1000 <= len(fit.ids) <= 1003
    assert np.all(np.diff(fit.ids) > 0)
    assert "1,000" in fit.description and "70,000" in fit.description
    # seeded: the same sample again
    again = pj.choose_fit_set(t, "sample", sample_size=1000, interest=interest)
    np.testing.assert_array_equal(fit.ids, again.ids)


def test_fit_set_chosen_only():
    t = open_table("default")
    fit = pj.choose_fit_set(t, "chosen", interest=[9, 3, 3, 500])
    assert fit.mode == "chosen"
    assert fit.ids.tolist() == [3, 9]
    with pytest.raises(ValueError):
        pj.choose_fit_set(t, "nonsense")


# -- the job against scikit-learn ------------------------------------------------------------


def test_projection_job_matches_sklearn_on_the_whole_table():
    from sklearn.decomposition import PCA

    t = open_table("minilm")
    steps, res = run(pj.projection_job(t))
    assert steps and steps[-1][0] == 1.0
    assert all(0.0 <= f <= 1.0 for f, _ in steps)
    e = t.matrix()[: t.trained_rows].astype(np.float64)
    ref = PCA(n_components=10, svd_solver="covariance_eigh").fit(e)
    np.testing.assert_allclose(res.explained, ref.explained_variance_ratio_, rtol=1e-3)
    ref_coords = ref.transform(e)
    assert res.coords.shape == (t.trained_rows, 10)
    np.testing.assert_allclose(_align(res.coords, ref_coords), ref_coords, atol=1e-3 * np.abs(ref_coords).max())
    np.testing.assert_array_equal(res.ids, np.arange(t.trained_rows))
    assert res.mode == "all" and res.spec == t.spec


def test_projection_job_on_a_sample_matches_sklearn_on_those_rows():
    from sklearn.decomposition import PCA

    t = open_table("random:70000x16:3")
    _, res = run(pj.projection_job(t, sample_size=2000, interest=[1, 2, 3]))
    assert res.mode == "sample"
    rows = t.rows(res.ids).astype(np.float64)
    ref = PCA(n_components=10, svd_solver="full").fit(rows)
    np.testing.assert_allclose(res.explained, ref.explained_variance_ratio_, rtol=1e-4)
    ref_c = ref.transform(rows)
    np.testing.assert_allclose(_align(res.coords, ref_c), ref_c, atol=1e-4 * np.abs(ref_c).max())
    # a token that was not fitted is projected with the same components
    outside = next(i for i in range(t.trained_rows) if res.index_of(i) < 0)
    got = res.coords_of(t, [outside, 1])
    want = _align(ref.transform(t.rows([outside]).astype(np.float64)), ref.transform(t.rows([1]).astype(np.float64)))
    assert res.index_of(1) >= 0
    np.testing.assert_allclose(got[1], res.coords[res.index_of(1)])
    np.testing.assert_allclose(np.abs(got[0]), np.abs(want[0]), atol=1e-4)


def test_projection_job_needs_two_rows_and_handles_nonfinite():
    t = open_table("default")
    with pytest.raises(ValueError):
        run(pj.projection_job(t, "chosen", interest=[3]))
    x = np.random.default_rng(0).standard_normal((50, 6)).astype(np.float32)
    x[3, 2] = np.nan
    x[7, 0] = np.inf
    p = geo.pca_project(x, n_components=3)
    assert np.isfinite(p.coords).all() and np.isfinite(p.explained).all()


def test_tiny_table_gives_fewer_components():
    t = open_table("toy:robot")  # V = 4, d = 3
    _, res = run(pj.projection_job(t))
    assert res.coords.shape[0] == 4
    assert res.coords.shape[1] == 3
    assert res.explained.sum() == pytest.approx(1.0, abs=1e-6)


# -- search and tokens of interest ---------------------------------------------------------------


def test_tokens_of_interest_neighbours_match_brute_force():
    t = open_table("default")
    text = [22, 30, 22]
    got = pj.tokens_of_interest(t, text, [100, 22], k=3)
    assert got.text == (22, 30)
    assert got.extra == (100,)
    e = t.matrix().astype(np.float64)
    n = np.linalg.norm(e, axis=1)
    want = []
    for q, nearest in zip((22, 30), got.nearest):
        cos = e @ e[q] / np.maximum(n * n[q], 1e-12)
        cos[q] = -np.inf
        top = np.argsort(-cos, kind="stable")[:3]
        # each text token keeps its own list, with cosines
        np.testing.assert_allclose([nb.cosine for nb in nearest], cos[top], atol=1e-5)
        for i in top:
            if int(i) not in want and int(i) not in (22, 30, 100):
                want.append(int(i))
    assert list(got.neighbors) == want
    assert got.all_ids() == sorted({22, 30, 100, *want})


def test_the_tokens_of_interest_of_a_long_text_search_a_huge_table_in_bounded_memory():
    """Every text token's neighbours from one product with the whole table made a (text, V) matrix of
    scores and two more of its size: 64 tokens of a 10,000,000-row table asked for 10 GB. In blocks,
    less than one such matrix; the neighbours are the brute force's."""
    import tracemalloc

    t = open_table("random:2000000x2:7")
    text = list(range(0, 64 * 997, 997))
    t.unit_matrix()  # the table's own cache, made before counting
    tracemalloc.start()
    try:
        got = pj.tokens_of_interest(t, text, [], k=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(text) * t.vocab_size * 4 / 2
    unit = t.unit_matrix().astype(np.float64)
    for q in (text[0], text[37]):
        cos = unit @ unit[q]
        cos[q] = -np.inf
        best = np.sort(cos)[::-1][:3]
        np.testing.assert_allclose([nb.cosine for nb in got.nearest[text.index(q)]], best, atol=1e-5)


def test_the_interest_job_yields_after_each_block_of_rows_so_a_cancel_stops_it_midway():
    """64 tokens of a 10,000,000-row table took 15 s in one step of the job: a model switched meanwhile
    left it running to the end. Its search now yields after each block of rows (where a worker stops
    when cancelled); run to its end, it finds what the one-step search found."""
    t = open_table("random:2000000x2:7")
    text = list(range(0, 64 * 997, 997))
    steps = list(pj.interest_job(t, text, [], 3))
    fractions = [f for f, _ in steps]
    assert len(steps) >= 8 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert "of 2,000,000 rows" in steps[1][1] and fractions[1] < 0.2
    job = pj.interest_job(t, text, [], 3)
    next(job), next(job)
    job.close()  # what a cancelled worker does at a yield: nothing runs after it
    with pytest.raises(StopIteration):
        next(job)
    got = pj.tokens_of_interest(t, text, [], k=3)
    unit = t.unit_matrix().astype(np.float64)
    q = text[5]
    cos = unit @ unit[q]
    cos[q] = -np.inf
    np.testing.assert_allclose([nb.cosine for nb in got.nearest[5]], np.sort(cos)[::-1][:3], atol=1e-5)


def test_a_fit_of_more_rows_than_the_window_draws_gives_a_random_part_of_them_and_the_tokens_of_interest():
    """The whole of a 10,000,000-row table, asked for, stood the window still 3 s while it drew,
    coloured and filtered each point. The fit is on every row; the result holds MAX_DRAWN of them at
    random and the tokens of interest, placed as the whole fit placed them; the command line keeps all."""
    from explorer.core.jobs import run_to_end
    from explorer.core.projection.custom_axes import named_axes_job

    t = open_table("random:300000x4:1")
    interest = [5, 123_457, 299_999, *range(1000, 301_000, 7_500)]  # a few of them not in the random part
    whole = run_to_end(pj.projection_job(t, "all", 0, interest, max_points=None))
    assert len(whole.ids) == 300_000
    got = run_to_end(pj.projection_job(t, "all", 0, interest))
    assert pj.MAX_DRAWN <= len(got.ids) <= pj.MAX_DRAWN + len(interest)
    assert np.all(np.diff(got.ids) > 0) and set(interest) <= set(got.ids.tolist())
    np.testing.assert_array_equal(got.coords, whole.coords[np.searchsorted(whole.ids, got.ids)])
    np.testing.assert_array_equal(got.explained, whole.explained)
    assert "whole vocabulary: 300,000 rows" in got.description
    added = len(got.ids) - pj.MAX_DRAWN
    assert f"; drawn: a random {pj.MAX_DRAWN:,} of them (seed 0)" in got.description
    tail = f" and {added} more token{'s' if added > 1 else ''} of interest" if added else ""
    assert got.description.endswith(f"(seed 0){tail}")
    again = run_to_end(pj.projection_job(t, "all", 0, interest))
    np.testing.assert_array_equal(again.ids, got.ids)  # seeded: the same points each time
    axes = run_to_end(named_axes_job(t, ["1 → 2", "3"], "all", 0, interest))
    assert pj.MAX_DRAWN <= len(axes.ids) <= pj.MAX_DRAWN + len(interest)
    assert set(interest) <= set(axes.ids.tolist()) and len(axes.coords) == len(axes.ids)
    small = open_table("toy:robot")
    assert len(run_to_end(pj.projection_job(small, "all", 0)).ids) == small.trained_rows


def test_variance_shown_counts_each_component_once():
    ev = [0.144, 0.117, 0.101]
    assert pj.variance_shown(ev, 0, 1) == pytest.approx(0.261)
    assert pj.variance_shown(ev, 0, 0) == pytest.approx(0.144)  # PC1 x PC1: 14.4 %, not 28.8 %
    assert pj.variance_shown(ev, 2, 5) == pytest.approx(0.101)  # PC6 does not exist for d = 3


def test_coordinates_and_neighbours_csv(tmp_path):
    import csv

    from explorer.core.geometry.neighbors import neighbors_of
    from explorer.core.projection.csv_export import write_coordinates_csv, write_neighbors_csv
    from explorer.core.sources.loading import ClassIndex

    t = open_table("default")
    _, res = run(pj.projection_job(t, "sample", sample_size=50, interest=[3]))
    outside = next(i for i in range(t.trained_rows) if res.index_of(i) < 0)
    classes = ClassIndex.from_table(t)
    path = tmp_path / "coords.csv"
    n = write_coordinates_csv(path, res, t, [outside, 3], classes)
    rows = list(csv.reader(open(path, encoding="utf-8")))
    assert n == len(res.ids) + 1 == len(rows) - 1
    assert rows[0] == ["id", "piece", "fitted", "class", "kind", "length", "norm", "health", "shown", "lasso"] + [
        f"PC{k + 1}" for k in range(10)]
    last = rows[-1]
    assert int(last[0]) == outside and last[1] == t.piece(outside) and last[2] == "0"
    assert last[3] == (classes.name_of(outside) or "") and last[4:10] == ["", "", "", "", "1", "0"]  # no metadata
    np.testing.assert_allclose([float(v) for v in last[10:]], res.coords_of(t, [outside])[0], rtol=1e-5, atol=1e-6)
    interest = pj.tokens_of_interest(t, [22, 30], [], k=3)
    selected = neighbors_of(t, 22, 10)
    path = tmp_path / "nb.csv"
    assert write_neighbors_csv(path, t, interest, selected) == 10 + 3  # 22's own list is the longer one
    rows = list(csv.reader(open(path, encoding="utf-8")))[1:]
    assert [int(r[3]) for r in rows if r[0] == "22"] == selected.ids()
    assert [int(r[3]) for r in rows if r[0] == "30"] == [nb.id for nb in interest.nearest[1]]


# -- geometry the similarity view shows ---------------------------------------------------------------


def test_id_and_one_hot_distances():
    ids = [42, 43, 44, 42]
    idd = geo.id_distance_matrix(ids)
    # FACTS: cat = 42, dog = 43, airplane = 44: |dog - cat| = |airplane - dog| = 1
    assert idd[1, 0] == 1 and idd[2, 1] == 1 and idd[2, 0] == 2 and idd[3, 0] == 0
    oh = geo.one_hot_distance_matrix(ids)
    ref = geo.similarity_matrix(np.eye(50)[ids], "euclidean")
    np.testing.assert_allclose(oh, ref, atol=1e-12)
    assert oh[0, 1] == pytest.approx(math.sqrt(2))


def test_random_cosines_follow_one_over_sqrt_d():
    c = geo.random_cosines(768, 20000, seed=1)
    assert np.std(c) == pytest.approx(1 / math.sqrt(768), rel=0.03)
    assert np.mean(np.abs(c) <= 0.108) == pytest.approx(0.997, abs=0.003)
    x = np.linspace(-0.2, 0.2, 2001)
    pdf = geo.cosine_normal_pdf(x, 768)
    assert np.trapezoid(pdf, x) == pytest.approx(1.0, abs=1e-6)


def test_random_vector_check_job():
    t = open_table("random:5000x256")
    steps, chk = run(geo.random_vector_check_job(t, n_pairs=4000))
    assert steps[0][0] == 0.0
    assert chk.dim == 256 and chk.theory_std == pytest.approx(1 / 16)
    assert chk.random_std == pytest.approx(1 / 16, rel=0.05)
    # a random table looks like random vectors
    assert chk.real_std == pytest.approx(1 / 16, rel=0.06)
    width = np.diff(chk.random_edges)
    assert (chk.random_density * width).sum() == pytest.approx(1.0, abs=1e-9)
    assert chk.shell_fraction == pytest.approx(0.99**256)
    tiny = geo.random_vector_check(open_table("toy:robot"), n_pairs=200)
    assert tiny.dim == 3 and np.isfinite(tiny.real_mean)


def test_the_random_vector_check_of_a_wide_table_stops_between_bounded_batches(monkeypatch):
    """5,000 pairs in 65,536 dimensions took 15 s in one step (and read 2.6 GB of rows at once):
    now at most BATCH_VALUES values a vector side between two chances to stop, with the same
    figures as the check run whole."""
    monkeypatch.setattr(geo, "BATCH_VALUES", 64 * 1024)  # the same rule, small enough for a test
    t = open_table("random:300x8192")  # 8 pairs a batch
    steps, chk = run(geo.random_vector_check_job(t, n_pairs=100))
    drawing = [s for s in steps if s[1].startswith("Drawing")]
    reading = [s for s in steps if s[1].startswith("Reading")]
    assert len(drawing) >= 100 / 8 and len(reading) >= 90 / 8  # a yield before each batch (a few pairs are a == b)
    assert [f for f, _ in steps] == sorted(f for f, _ in steps)
    whole = geo.random_vector_check(t, n_pairs=100)
    assert chk.random_std == pytest.approx(whole.random_std) and chk.real_std == pytest.approx(whole.real_std)
    job = geo.random_vector_check_job(t, n_pairs=100)
    next(job), next(job)
    job.close()  # a cancel, inside the drawing
    assert job.gi_frame is None
