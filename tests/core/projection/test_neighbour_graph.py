"""The shared neighbour graph (explorer/core/projection/manifold/knn.py):
exact cosine neighbours against scikit-learn's brute-force search, the row
itself first even among duplicates, and one search per session for the same
rows whatever layout asks for it."""

from __future__ import annotations

import numpy as np

from explorer.core.jobs import run_to_end
from explorer.core.projection.manifold import knn as knn_mod
from explorer.core.projection.manifold import manifold_job
from explorer.core.projection.manifold.knn import cached_graph, knn_graph_job, rows_digest


def unit(rows):
    rows = np.asarray(rows, np.float32)
    n = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(n > 0, n, 1)


def test_graph_is_sklearns_exact_cosine_neighbours():
    from sklearn.neighbors import NearestNeighbors

    x = unit(np.random.default_rng(0).standard_normal((700, 24)))
    g = run_to_end(knn_graph_job(x, k=20))
    assert g.indices.shape == (700, 21) and g.exact
    assert (g.indices[:, 0] == np.arange(700)).all() and np.allclose(g.distances[:, 0], 0, atol=1e-6)
    dist, idx = NearestNeighbors(n_neighbors=21, metric="cosine", algorithm="brute").fit(x).kneighbors(x)
    np.testing.assert_allclose(g.distances, dist, atol=1e-5)  # the same distances in the same order
    # the same neighbours wherever the 20th and 21st are not tied within float error
    full = 1 - x @ x.T
    np.fill_diagonal(full, -1)
    nxt = np.sort(full, axis=1)[:, 21]
    clear = nxt - dist[:, -1] > 1e-4
    assert clear.mean() > 0.9
    for i in np.flatnonzero(clear):
        assert set(g.indices[i]) == set(idx[i])


def test_the_row_itself_comes_first_among_duplicates_and_zero_rows():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, 8)).astype(np.float32)
    x[10] = x[11] = x[12] = x[3]
    x[20] = 0
    g = run_to_end(knn_graph_job(unit(x), k=5))
    assert (g.indices[:, 0] == np.arange(50)).all()
    for i in (3, 10, 11, 12):
        assert set(g.indices[i, :4]) == {3, 10, 11, 12}
        assert np.allclose(g.distances[i, :4], 0, atol=1e-6)
    assert g.distances[20, 0] == 1.0  # a zero row is at cosine distance 1 from everything, itself included
    assert np.isfinite(g.distances).all()


def test_tsne_and_umap_of_the_same_rows_search_once(minilm_table):
    minilm = minilm_table
    x = unit(minilm.rows(np.arange(1000, 1400)))
    digest = rows_digest(x)
    knn_mod._graphs.pop(digest, None)
    messages = lambda job: [m for m in _messages(job) if "nearest neighbours" in m]  # noqa: E731
    assert messages(manifold_job(minilm, "umap", mode="chosen", interest=list(range(1000, 1400))))
    graph = cached_graph(digest)
    assert graph is not None and len(graph) == 400 and graph.k == 91
    assert not messages(manifold_job(minilm, "tsne", mode="chosen", interest=list(range(1000, 1400)), every=200))
    assert cached_graph(digest) is graph


def test_one_changed_value_changes_the_digest():
    x = unit(np.random.default_rng(2).standard_normal((30, 6)))
    y = x.copy()
    y[17, 4] = np.nextafter(y[17, 4], np.float32(2))
    assert rows_digest(x) == rows_digest(x.copy()) != rows_digest(y)
    assert rows_digest(x) != rows_digest(x.reshape(60, 3))


def _messages(job):
    out = []
    while True:
        try:
            item = next(job)
        except StopIteration:
            return out
        if isinstance(item, tuple):
            out.append(item[1])


def test_bfloat16_products_choose_nearly_the_exact_neighbours_at_float32_distances():
    x = unit(np.random.default_rng(3).standard_normal((1500, 48)))
    exact = run_to_end(knn_graph_job(x, k=30, bf16=False))
    fast = run_to_end(knn_graph_job(x, k=30, bf16=True))
    assert exact.exact and not fast.exact and fast.indices.shape == exact.indices.shape == (1500, 31)
    assert (fast.indices[:, 0] == np.arange(1500)).all() and np.allclose(fast.distances[:, 0], 0, atol=1e-6)
    recall = np.mean([len(np.intersect1d(f, e)) / 31 for f, e in zip(fast.indices, exact.indices)])
    assert recall > 0.95
    # the chosen neighbours' distances are float32 cosine distances, nearest first
    want = 1 - np.einsum("nd,nkd->nk", x, x[fast.indices])
    np.testing.assert_allclose(fast.distances[:, 1:], want[:, 1:], atol=1e-5)
    assert (np.diff(fast.distances, axis=1) >= 0).all()
    # where both found the same neighbours, the same distances
    same = (fast.indices == exact.indices).all(axis=1)
    assert same.mean() > 0.5
    np.testing.assert_allclose(fast.distances[same], exact.distances[same], atol=1e-5)


def _reference_choice(patterns, rows, first, k, margin):
    """What choose_neighbours promises, in numpy: the k largest float32 products among the columns whose
    bfloat16 product is within `margin` steps of the k-th largest (every column where that is not positive)."""
    out = []
    for r, p in enumerate(patterns.astype(np.int64)):
        threshold = np.sort(p)[-k] - margin
        cand = np.flatnonzero(p >= threshold) if threshold >= 0 else np.arange(len(p))
        dots = rows[cand].astype(np.float64) @ rows[first + r].astype(np.float64)
        dots[cand == first + r] = 3.0
        out.append((cand[np.argsort(-dots, kind="stable")[:k]], np.sort(dots)[::-1][:k],
                    np.sort(dots)[::-1][k] if len(dots) > k else -np.inf))
    return out


def test_bfloat16_choice_is_the_float32_top_k_within_the_margin():
    import torch

    from explorer.core.projection.manifold.neighbour_choice import CHUNK, choose_neighbours

    rng = np.random.default_rng(7)
    # clustered rows (near ties inside clusters), all leaning one way, and 20 rows pointing the other way:
    # fewer than k positive products, the path where every column is a candidate
    centres = rng.standard_normal((60, 24))
    x = centres[rng.integers(0, 60, 6000)] + 0.4 * rng.standard_normal((6000, 24))
    x[:, 0] = 8.0
    x[:20, 0] = -8.0
    x = unit(x)
    k = 31
    assert 6000 // CHUNK > k  # the chunked path is the one taken for most rows
    xs = torch.from_numpy(x).bfloat16()
    for first in (0, 2500):
        s = xs[first:first + 300] @ xs.T
        s[torch.arange(300), torch.arange(first, first + 300)] = 3.0
        patterns = s.view(torch.int16).numpy()
        if first == 0:
            assert ((s[:20] > 0).sum(1) < k).all()  # the rows against the rest take the every-column path
        indices, sims = choose_neighbours(patterns, x, first, k, margin=2)
        assert indices.shape == sims.shape == (300, k) and (indices[:, 0] == np.arange(first, first + 300)).all()
        assert (np.diff(sims, axis=1) <= 0).all()
        for r, (want, want_dots, next_dot) in enumerate(_reference_choice(patterns, x, first, k, margin=2)):
            np.testing.assert_allclose(sims[r, 1:], want_dots[1:], atol=1e-5)
            if want_dots[-1] - next_dot > 1e-5:  # no float32 near tie at the k-th place
                assert set(indices[r]) == set(want)
    # a wider margin keeps more candidates and never loses a neighbour the narrow one found
    narrow, _ = choose_neighbours(patterns, x, 2500, k, margin=0)
    wide, wide_sims = choose_neighbours(patterns, x, 2500, k, margin=8)
    exact = 1 - run_to_end(knn_graph_job(x, k=k - 1, bf16=False)).distances[2500:2800]
    assert (wide_sims[:, -1] >= exact[:, -1] - 1e-5).all()
    assert np.mean([len(set(w) & set(nr)) for w, nr in zip(wide, narrow)]) > 0.99 * k


def test_a_neighbour_search_closed_from_another_thread_leaves_its_thread_with_grad_on():
    """A cancelled job's generator is closed from the window's thread. Had it stopped inside
    ``torch.inference_mode()``, the mode's exit would run there and its worker thread would stay in
    inference mode for the next job it runs (a training: "element 0 of tensors does not require
    grad")."""
    import threading

    import torch

    from explorer.core.projection.manifold.knn import knn_graph_job

    rows = np.random.default_rng(0).standard_normal((3000, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    job = knn_graph_job(rows, k=5, bf16=False)
    modes = {}

    def step_then_look(when: str, step: bool) -> None:
        if step:
            next(job)  # the first block, then suspended at its yield
        modes[when] = (torch.is_grad_enabled(), torch.is_inference_mode_enabled())

    worker = threading.Thread(target=step_then_look, args=("suspended", True))
    worker.start()
    worker.join()
    job.close()  # from this thread, as the window closes a cancelled job
    assert modes["suspended"] == (True, False)
    assert (torch.is_grad_enabled(), torch.is_inference_mode_enabled()) == (True, False)
