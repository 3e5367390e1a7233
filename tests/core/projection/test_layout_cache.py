"""The layout cache (explorer/core/projection/manifold/layout_cache.py): the
same request is served from disk, any other (rows by value, seed, method,
dimensions) is not; corrupt entries are recomputed, an unwritable folder
gives the layout with a note, the folder stays within its bound, and a
cancelled layout leaves nothing behind."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.jobs import run_to_end
from explorer.core.projection.manifold import LayoutCache, ManifoldResult, manifold_job
from explorer.core.projection.manifold.layout_cache import CachedLayout, layout_key


@pytest.fixture(scope="module")
def default_table():
    from explorer.core.sources import open_table

    return open_table("default")


def layout(table, cache, method="umap", **kw):
    kw.setdefault("mode", "chosen")
    kw.setdefault("interest", list(range(40, 160)))
    return run_to_end(manifold_job(table, method, cache=cache, **kw))


def test_second_request_is_served_and_others_are_not(default_table, tmp_path):
    cache = LayoutCache(tmp_path)
    first = layout(default_table, cache)
    again = layout(default_table, cache)
    assert not first.cached and again.cached and first.cache_note == ""
    np.testing.assert_array_equal(again.coords, first.coords)
    assert (again.trustworthiness, again.trust_rows) == (first.trustworthiness, first.trust_rows)
    np.testing.assert_array_equal(again.ids, first.ids)
    assert not layout(default_table, cache, seed=1).cached
    assert not layout(default_table, cache, n_components=3).cached
    assert not layout(default_table, cache, interest=list(range(41, 161))).cached
    assert not layout(default_table, cache, recompute=True).cached
    assert len(list(tmp_path.glob("*.npz"))) == 4  # recompute rewrote its entry


def test_a_cached_tsne_has_no_frames_to_replay(default_table, tmp_path):
    cache = LayoutCache(tmp_path)
    job = manifold_job(default_table, "tsne", mode="chosen", interest=list(range(100)), cache=cache, every=250)
    frames = []
    res = run_to_end(job, lambda item: frames.append(item) if isinstance(item, ManifoldResult) else None)
    assert len(frames) >= 2 and not res.cached
    frames.clear()
    job = manifold_job(default_table, "tsne", mode="chosen", interest=list(range(100)), cache=cache, every=250)
    res2 = run_to_end(job, lambda item: frames.append(item) if isinstance(item, ManifoldResult) else None)
    assert res2.cached and res2.done and frames == []
    np.testing.assert_array_equal(res2.coords, res.coords)


def test_other_rows_at_the_same_ids_are_never_served_a_stale_layout(tmp_path):
    from explorer.core.sources import open_table

    a = open_table("random:300x16:1")
    b = open_table("random:300x16:2")
    cache = LayoutCache(tmp_path)
    assert not layout(a, cache).cached
    assert not layout(b, cache).cached  # same ids, same settings, other values
    assert layout(a, cache).cached


def test_corrupt_or_wrong_entries_are_recomputed(default_table, tmp_path):
    cache = LayoutCache(tmp_path)
    first = layout(default_table, cache)
    (entry,) = tmp_path.glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:100])  # cut mid-write by something else
    second = layout(default_table, cache)
    assert not second.cached
    np.testing.assert_allclose(second.coords, first.coords, atol=1e-3 * np.abs(first.coords).max())
    assert layout(default_table, cache).cached  # rewritten whole
    key = entry.stem
    cache.put(key, CachedLayout(np.zeros((5, 2), np.float32), None, 0, 0, 0, 0.0))  # the wrong shape
    assert cache.get(key, len(first.ids), 2) is None
    cache.put(key, CachedLayout(np.full((len(first.ids), 2), np.nan, np.float32), None, 0, 0, 0, 0.0))
    assert cache.get(key, len(first.ids), 2) is None


def test_an_unwritable_folder_gives_the_layout_and_a_note(default_table, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = layout(default_table, LayoutCache(blocker / "layouts"))
    assert res.done and not res.cached and np.isfinite(res.coords).all()
    assert "not cached" in res.cache_note and "computed again" in res.cache_note


def test_the_folder_keeps_within_its_bound_oldest_out_first(tmp_path):
    import os

    cache = LayoutCache(tmp_path, max_bytes=1 << 30)
    coords = np.zeros((1000, 2), np.float32)
    for i in range(5):
        assert cache.put(f"k{i}", CachedLayout(coords, 0.5, 10, 0, 0, 1.0)) == ""
        os.utime(tmp_path / f"k{i}.npz", (1000 + i, 1000 + i))  # written one second apart
    cache.max_bytes = 3 * (tmp_path / "k0.npz").stat().st_size
    cache._bound()
    assert sorted(p.stem for p in tmp_path.glob("*.npz")) == ["k2", "k3", "k4"]
    assert cache.get("k2", 1000, 2) is not None  # used: now the most recent
    cache.put("k5", CachedLayout(coords, 0.5, 10, 0, 0, 1.0))
    assert sorted(p.stem for p in tmp_path.glob("*.npz")) == ["k2", "k4", "k5"]


def test_a_cancelled_layout_leaves_nothing_behind(default_table, tmp_path):
    cache = LayoutCache(tmp_path / "layouts")
    job = manifold_job(default_table, "umap", mode="chosen", interest=list(range(200)), cache=cache)
    for item in job:
        if isinstance(item, tuple) and "nearest neighbours" in item[1]:
            break
    job.close()  # the worker's stop flag: the job ends at this yield
    assert not (tmp_path / "layouts").exists() or not any((tmp_path / "layouts").iterdir())


def test_the_key_covers_every_setting():
    ids = np.arange(10)
    base = layout_key("d", ids, "umap", {"dims": 2, "seed": 0})
    assert base == layout_key("d", ids.copy(), "umap", {"seed": 0, "dims": 2})
    assert len({base, layout_key("e", ids, "umap", {"dims": 2, "seed": 0}),
                layout_key("d", ids + 1, "umap", {"dims": 2, "seed": 0}),
                layout_key("d", ids, "tsne", {"dims": 2, "seed": 0}),
                layout_key("d", ids, "umap", {"dims": 3, "seed": 0}),
                layout_key("d", ids, "umap", {"dims": 2, "seed": 1})}) == 6
