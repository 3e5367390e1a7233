"""The duplicate search of the health report: groups of equal rows, and the
cap on close pairs on a crowded table (the first MAX_PAIRS in (i, j) order,
found without measuring every candidate)."""

from __future__ import annotations

import numpy as np

from explorer.core.health import duplicates as dup
from explorer.core.sources.memory import open_object


def _inputs(e: np.ndarray):
    table = open_object(e)
    rows = e.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1)
    sketch = (rows @ dup.sketch_directions(e.shape[1]).T.astype(np.float64)).astype(np.float32)
    return table, sketch, norms, norms > 0


def test_every_member_of_a_group_of_equal_rows_points_at_the_lowest_other_one():
    rng = np.random.default_rng(5)
    e = rng.standard_normal((4000, 24)).astype(np.float32)
    groups = [rng.choice(4000, size=s, replace=False) for s in rng.integers(2, 6, 300)]
    taken: set[int] = set()
    kept = []
    for g in groups:  # disjoint groups
        g = [int(i) for i in g if int(i) not in taken]
        if len(g) >= 2:
            taken.update(g)
            kept.append(sorted(g))
            e[g[1:]] = e[g[0]]
    found = dup.find_duplicates(*_inputs(e))
    want = np.full(4000, -1)
    for g in kept:
        for i in g:
            want[i] = min(j for j in g if j != i)
    np.testing.assert_array_equal(found.duplicate_of, want)
    np.testing.assert_array_equal(found.exact, want >= 0)
    assert not found.near.any() and not found.truncated


def test_a_crowded_table_keeps_the_first_close_pairs_and_says_it_cut(monkeypatch):
    """Rows a hair apart: every candidate pair is close. The capped search
    returns the uncapped one's first pairs, however the measuring is batched."""
    rng = np.random.default_rng(2)
    points = (rng.standard_normal(16) * 0.3 + rng.standard_normal((3000, 16)) * 1e-4).astype(np.float64)
    monkeypatch.setattr(dup, "MAX_PAIRS", 10**9)
    every, cut = dup._close_pairs(points)
    assert not cut and len(every) > 20_000
    assert (every[:, 0] < every[:, 1]).all()
    assert (np.diff(every[:, 0] * 3000 + every[:, 1]) > 0).all()  # in (i, j) order, once each
    for cap, batch in ((5000, 64), (5000, 1 << 16), (len(every), 1000)):
        monkeypatch.setattr(dup, "MAX_PAIRS", cap)
        monkeypatch.setattr(dup, "_MEASURE_BATCH", batch)
        pairs, cut = dup._close_pairs(points)
        np.testing.assert_array_equal(pairs, every[:cap])
        assert cut == (cap < len(every))
