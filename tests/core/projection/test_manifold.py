"""t-SNE and UMAP layouts (explorer.core.projection.manifold) and custom axes
(explorer.core.projection.custom_axes), on MiniLM's real rows: the layouts keep
neighbourhoods (trustworthiness, cosine, 5 neighbours, scored against
scikit-learn's own function), are reproducible, and move frame by frame.
UMAP's truth test is in tests/test_cli_project.py (its code compiles once per
process, so it is paid once there)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.manifold import trustworthiness

from explorer.core.projection.custom_axes import AxisError, custom_axes_job, parse_axis
from explorer.core.projection.manifold import LayoutError, ManifoldResult, manifold_job, run_manifold
from explorer.core.sources import open_table
from tests.support.jobs import drain as run


@pytest.fixture(scope="module")
def minilm():
    return open_table("minilm")


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_tsne_keeps_minilm_neighbourhoods_and_moves_live(minilm):
    steps, res = run(manifold_job(minilm, "tsne", sample_size=1500, interest=[2003, 2158], seed=0, every=50))
    frames = [s for s in steps if isinstance(s, ManifoldResult)]
    progress = [s for s in steps if isinstance(s, tuple)]
    assert res.done and res.method == "tsne" and res.mode == "sample"
    assert {2003, 2158} <= set(res.ids.tolist()) and len(res.ids) >= 1500
    # frames: the PCA start, then one every 50 iterations, each a layout of the same rows that moved
    its = [f.iteration for f in frames]
    assert its[0] == 0 and its == sorted(its) and its[-1] == res.n_iter == 750 and len(frames) == 16
    assert not any(f.done for f in frames)
    assert not np.allclose(frames[1].coords, frames[-1].coords)
    np.testing.assert_array_equal(frames[-1].coords, res.coords)
    assert all(0 <= f <= 1 for f, _ in progress) and progress[-1][0] == 1.0
    # the score shown is scikit-learn's, with the table's own metric
    rows = minilm.rows(res.ids)
    ref = trustworthiness(rows, res.coords, n_neighbors=5, metric="cosine")
    assert res.trustworthiness == pytest.approx(ref, abs=1e-5) and res.trust_rows == len(res.ids)
    assert res.trustworthiness >= 0.9


def test_same_seed_same_layout_other_seed_another(minilm):
    a = run_manifold(minilm, "tsne", sample_size=300, seed=7)
    b = run_manifold(minilm, "tsne", sample_size=300, seed=7)
    c = run_manifold(minilm, "tsne", sample_size=300, seed=8)
    np.testing.assert_array_equal(a.ids, b.ids)
    np.testing.assert_allclose(a.coords, b.coords, atol=1e-3 * np.abs(a.coords).max())
    assert not np.array_equal(a.ids, c.ids)


def test_tokens_outside_the_layout_sit_among_their_nearest_rows(minilm):
    res = run_manifold(minilm, "tsne", mode="chosen", interest=list(range(2000, 2060)), seed=0)
    assert res.mode == "chosen" and len(res.ids) == 60
    outside = [5000, 7592]
    got = res.coords_of(minilm, outside + [2010])
    np.testing.assert_array_equal(got[2], res.coords[res.index_of(2010)])
    sims = _unit(minilm.rows(outside)) @ _unit(minilm.rows(res.ids)).T
    for r in range(2):
        top = np.argsort(-sims[r])[:5]
        want = (res.coords[top] * sims[r, top, None]).sum(0) / sims[r, top].sum()
        np.testing.assert_allclose(got[r], want, rtol=1e-4, atol=1e-4)


def test_frames_of_a_run_place_outside_tokens_from_rows_found_once(minilm):
    """The frames share the nearest laid-out rows of the tokens placed (found on the first frame
    that places them); each frame places them at its own positions, as a fresh placement would."""
    steps, res = run(manifold_job(minilm, "tsne", mode="chosen", interest=list(range(2000, 2060)), seed=0,
                                  every=250))
    frames = [s for s in steps if isinstance(s, ManifoldResult)] + [res]
    assert len(frames) >= 3 and all(f.nearest is res.nearest for f in frames)
    outside = [5000, 7592, 5000]
    first = frames[0].coords_of(minilm, outside)
    assert set(res.nearest) == {5000, 7592}
    found = {k: (t.copy(), w.copy()) for k, (t, w) in res.nearest.items()}
    for f in frames[1:]:
        np.testing.assert_allclose(f.coords_of(minilm, outside), f.place(minilm.rows(outside)), rtol=1e-6, atol=1e-6)
        assert all(np.array_equal(found[k][0], t) and np.array_equal(found[k][1], w)
                   for k, (t, w) in res.nearest.items())
    assert not np.allclose(first, frames[-1].coords_of(minilm, outside))  # placed where each frame's rows are
    np.testing.assert_array_equal(first[0], first[2])


def test_three_dimensions_and_bad_settings(minilm):
    res = run_manifold(minilm, "tsne", mode="chosen", interest=list(range(3000, 3040)), n_components=3)
    assert res.coords.shape == (40, 3)
    with pytest.raises(LayoutError, match="unknown"):
        run_manifold(minilm, "mds")
    with pytest.raises(LayoutError, match="2 or 3"):
        run_manifold(minilm, "tsne", n_components=4)
    with pytest.raises(LayoutError, match="at least 5"):
        run_manifold(minilm, "umap", mode="chosen", interest=[1, 2, 3])


def test_custom_axes_are_dot_products_with_the_unit_directions(minilm):
    axis_x = parse_axis(minilm, "man → woman")
    axis_y = parse_axis(minilm, "king")
    man, woman, king = (minilm.tokenizer.id_of(w) for w in ("man", "woman", "king"))
    assert axis_x.ids == (man, woman) and axis_y.ids == (king,) and axis_x.name == "man → woman"
    assert parse_axis(minilm, "man->woman").ids == axis_x.ids
    _, res = run(custom_axes_job(minilm, [axis_x, axis_y], mode="all"))
    e = minilm.matrix()[: minilm.trained_rows].astype(np.float64)
    dx = e[woman] - e[man]
    dx /= np.linalg.norm(dx)
    dy = e[king] / np.linalg.norm(e[king])
    np.testing.assert_allclose(res.coords[:, 0], e @ dx, atol=1e-4)
    np.testing.assert_allclose(res.coords[:, 1], e @ dy, atol=1e-4)
    assert res.axis_name(0) == "man → woman" and res.axis_name(1) == "king"
    np.testing.assert_allclose(res.explained[0], (e @ dx).var() / e.var(0).sum(), rtol=1e-4)
    # a linear map: the difference of the two tokens along their own axis is the distance between their rows
    assert res.coords[woman, 0] - res.coords[man, 0] == pytest.approx(np.linalg.norm(e[woman] - e[man]), rel=1e-4)
    with pytest.raises(AxisError, match="no token"):
        parse_axis(minilm, "man → qzxqzxqzx")
    with pytest.raises(AxisError, match="no direction"):
        run(custom_axes_job(minilm, [parse_axis(minilm, "man → man")]))


def test_layout_bench_report_states_the_targets():
    from explorer.core.bench import format_results, results_as_json
    from explorer.core.bench.layouts import LayoutBench

    fast = dict(spec="minilm", rows=30522, graph_s=4.0, graph_exact=False, graph_recall=0.986, exact_graph_s=9.0,
                umap_compile_s=9.0, pca_cold_s=1.2, pca_warm_s=1.0,
                tsne_cold_s=28.0, tsne_warm_s=0.2, tsne_first_layout_s=1.5, tsne_trust5=0.91, tsne_trust15=0.87,
                umap_cold_s=19.0, umap_layout_s=18.0, umap_warm_s=0.2, umap_trust5=0.815, umap_trust15=0.805,
                baseline_umap_s=40.0,
                baseline_trust5=0.82, baseline_trust15=0.81, baseline_recall=0.88, baseline_compile_s=30.0,
                cpu_s=100.0, wall_s=90.0)
    data = results_as_json({"layouts": LayoutBench(**fast)})["layouts"]
    assert {"umap_cold_s", "umap_warm_s", "baseline_umap_s", "tsne_trust15", "graph_s", "baseline_recall"} <= set(data)
    text = format_results({"layouts": LayoutBench(**fast)})
    assert "all 30,522 rows of minilm" in text and "2.22×" in text and "FAIL" not in text and "busy" not in text
    slow = dict(fast, umap_cold_s=26.0, umap_layout_s=25.0, umap_trust5=0.80, tsne_cold_s=61.0, tsne_warm_s=3.0,
                cpu_s=40.0)
    text = format_results({"layouts": LayoutBench(**slow)})
    assert text.count("FAIL") == 4 and "machine was busy" in text
    # both timed twice in turn: the runs are shown, and the best of each compared
    paired = dict(fast, umap_layout_runs=(18.0, 21.5), baseline_umap_runs=(44.0, 40.0))
    text = format_results({"layouts": LayoutBench(**paired)})
    assert "best of 2 each, run in turn: the app 18.00 s / 21.50 s, umap-learn 44.00 s / 40.00 s" in text
    assert list(results_as_json({"layouts": LayoutBench(**paired)})["layouts"]["umap_layout_runs"]) == [18.0, 21.5]


def test_custom_axes_of_no_chosen_tokens_place_none_without_a_numpy_warning():
    """Found by the monkey: "chosen tokens" with none chosen yet warned "Degrees of freedom
    <= 0 for slice" from numpy in the worker."""
    import warnings

    table = open_table("default")
    axes = [parse_axis(table, "man → woman"), parse_axis(table, "king")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _, res = run(custom_axes_job(table, axes, mode="chosen", interest=()))
        _, one = run(custom_axes_job(table, axes, mode="chosen", interest=(5,)))
    assert len(res.ids) == 0 and res.coords.shape == (0, 2) and res.explained.tolist() == [0.0, 0.0]
    assert one.ids.tolist() == [5] and one.explained.tolist() == [0.0, 0.0]  # one row: no spread either
