"""The duplicate search of the health report: groups of equal rows, and the
cap on close pairs on a crowded table (the first MAX_PAIRS in (i, j) order,
found without measuring every candidate)."""

from __future__ import annotations

import numpy as np

from explorer.core.health import duplicates as dup
from explorer.core.health.job import health_report, iter_health
from explorer.core.sources.memory import open_object
from explorer.core.sources.specs import open_table
from tests.support.jobs import drain


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


def test_a_crowded_table_keeps_the_first_close_pairs_found_and_says_it_cut(monkeypatch):
    """Rows a hair apart: every candidate pair is close. A capped search keeps
    the first pairs found (nearest in each grid's cell order first), so a
    smaller cap keeps a part of a larger one's pairs, and every pair kept is
    one the uncapped search finds."""
    rng = np.random.default_rng(2)
    points = (rng.standard_normal(16) * 0.3 + rng.standard_normal((3000, 16)) * 1e-4).astype(np.float64)
    monkeypatch.setattr(dup, "MAX_PAIRS", 10**9)
    every, cut = dup._close_pairs(points)
    assert not cut and len(every) > 20_000
    assert (every[:, 0] < every[:, 1]).all()
    assert (np.diff(every[:, 0] * 3000 + every[:, 1]) > 0).all()  # in (i, j) order, once each
    assert (np.linalg.norm(points[every[:, 0]] - points[every[:, 1]], axis=1) <= dup._RADIUS).all()
    codes = {}
    for cap in (5000, 12_000, len(every)):
        monkeypatch.setattr(dup, "MAX_PAIRS", cap)
        pairs, cut = dup._close_pairs(points)
        assert len(pairs) == cap and cut == (cap < len(every))
        assert (np.diff(pairs[:, 0] * 3000 + pairs[:, 1]) > 0).all()
        codes[cap] = set((pairs[:, 0] * 3000 + pairs[:, 1]).tolist())
    assert codes[5000] < codes[12_000] < codes[len(every)] == set((every[:, 0] * 3000 + every[:, 1]).tolist())
    # each point's next one in a grid's cell order is met before anyone's second: with room for about
    # one pair a point, nearly every point is in a pair
    monkeypatch.setattr(dup, "MAX_PAIRS", 3000)
    pairs, _ = dup._close_pairs(points)
    assert len(np.unique(pairs)) > 0.9 * 3000


def test_the_search_on_a_crowded_table_yields_between_steps_of_at_most_one_pair_a_row(monkeypatch):
    """Cancel reaches a worker only where its job yields. Each step measures at
    most one candidate pair a point, so finding MAX_PAIRS close pairs among
    3,000 points takes at least MAX_PAIRS / 3,000 steps, each yielding."""
    rng = np.random.default_rng(2)
    points = (rng.standard_normal(16) * 0.3 + rng.standard_normal((3000, 16)) * 1e-4).astype(np.float64)
    monkeypatch.setattr(dup, "MAX_PAIRS", 30_000)
    steps, (pairs, cut) = drain(dup._iter_close_pairs(points))
    fractions = [f for f, _ in steps]
    assert cut and len(pairs) == 30_000
    assert len(fractions) >= 30_000 / 3000
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] <= 1


def test_the_health_job_stops_inside_the_duplicate_search_of_a_crowded_table():
    """Rows of two values: their directions lie on a circle, so the sketches
    crowd a few cells of every grid (70,000 such rows held the old search in
    one step for 6.9 s, out of reach of a cancel)."""
    table = open_table("random:20000x2")
    job = iter_health(table)
    inside = 0
    for _, message in job:
        if message.startswith("Looking for rows that nearly equal another"):
            inside += 1
            if inside == 3:
                break
    assert inside == 3, "the health job never yielded inside the duplicate search"
    job.close()  # a cancel: the worker ends the generator at its yield
    assert job.gi_frame is None


def test_a_crowded_table_flags_only_rows_that_truly_have_a_near_copy_and_says_it_cut():
    table = open_table("random:20000x2")
    report = health_report(table)
    rows = table.rows(np.arange(20_000)).astype(np.float64)
    norms = np.linalg.norm(rows, axis=1)
    flagged = np.nonzero(report.duplicate_of >= 0)[0]
    other = report.duplicate_of[flagged]
    assert len(flagged) > 100
    gap = np.linalg.norm(rows[flagged] - rows[other], axis=1)
    assert (gap <= dup.NEAR_RELATIVE * np.maximum(norms[flagged], norms[other])).all()
    assert any("could be checked" in note for note in report.notes)


def test_the_search_goes_a_part_of_the_rows_at_a_time_and_finds_the_same(monkeypatch):
    """Each step of the search before the grids (the rows' unit sketches, their groups, the groups'
    points) and each grid's cells and candidates take at most GROUP_ROWS rows: 10,000,000 rows of a
    one-column table held one step 37 s (the rows sorted on all 16 columns of their sketches). The
    parts find what one part finds, and a crowded table's capped pairs are the same pairs."""
    from explorer.core import arrays

    rng = np.random.default_rng(5)
    e = rng.standard_normal((4000, 24)).astype(np.float32)
    e[100:140] = e[7]  # a group of 41 equal rows
    e[200:230] = e[9] * 1.001  # near copies of row 9
    inputs = _inputs(e)
    whole = dup.find_duplicates(*inputs)
    monkeypatch.setattr(dup, "GROUP_ROWS", 256)
    monkeypatch.setattr(arrays, "GROUP_ROWS", 256)
    steps, parts = drain(dup.iter_duplicates(*inputs))
    for name in ("duplicate_of", "exact", "near"):
        np.testing.assert_array_equal(getattr(parts, name), getattr(whole, name))
    assert (parts.duplicate_of[100:140] == 7).all() and (parts.duplicate_of[200:230] == 9).all()
    messages = [m for _, m in steps]
    assert messages.count("Looking for rows that equal another…") >= 2 * 4000 // 256  # unit sketches, points
    assert messages.count("Grouping equal rows…") >= 2 * 4000 // 256  # hashes, comparisons
    assert messages.count("Looking for rows that nearly equal another…") >= 4000 // 256 * dup._TABLES  # cells
    fractions = [f for f, _ in steps]
    assert fractions == sorted(fractions) and fractions[-1] <= 1

    points = (rng.standard_normal(16) * 0.3 + rng.standard_normal((3000, 16)) * 1e-4).astype(np.float64)
    monkeypatch.setattr(dup, "MAX_PAIRS", 20_000)
    monkeypatch.setattr(dup, "GROUP_ROWS", 1 << 20)
    one_part = dup._close_pairs(points)
    monkeypatch.setattr(dup, "GROUP_ROWS", 100)
    steps, many_parts = drain(dup._iter_close_pairs(points))
    np.testing.assert_array_equal(many_parts[0], one_part[0])
    assert many_parts[1] == one_part[1] is True
    assert len(steps) >= 20_000 / 100  # a step for each part of a grid's candidates


def test_a_capped_search_on_a_crowded_table_meets_near_neighbours_first(monkeypatch):
    """Within a grid's cell the points go by their first coordinate, so the pairs met first are near
    ones: with the cap, many of the rows that have a near copy are found. Met in the order of their
    groups of equal rows (a hash order), the capped search found 49 rows of the 689 that the uncapped
    one found; by the first coordinate, 369 of 810."""
    table = open_table("random:6000x2")
    e = table.rows(np.arange(6000))
    monkeypatch.setattr(dup, "MAX_PAIRS", 20_000)
    capped = dup.find_duplicates(*_inputs(e))
    assert capped.truncated
    monkeypatch.setattr(dup, "MAX_PAIRS", 10**9)
    every = dup.find_duplicates(*_inputs(e))
    assert not every.truncated
    found, all_near = int((capped.duplicate_of >= 0).sum()), int((every.duplicate_of >= 0).sum())
    assert found > 0.3 * all_near, (found, all_near)
