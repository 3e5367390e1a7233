"""unique_sorted gives numpy's np.unique result (its hash path holds the GIL
for seconds on millions of values; it sorts instead), and the groups of
equal rows are np.unique's (found by a hash of each row, a part at a time);
finite_bounds gives what numpy's reductions over the finite rows give."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.arrays import RowGroups, finite_bounds, iter_row_groups, row_groups, unique_sorted
from explorer.core.jobs import run_to_end
from tests.support.jobs import drain


@pytest.mark.parametrize("values", [
    np.array([], np.int64),
    np.array([3]),
    np.array([5, 1, 5, 3, 1, 1, 9], np.int64),
    np.array([[4, 2], [2, 7]], np.int32),  # flattened, as np.unique does
    np.array([True, False, True]),
    np.array([2.5, np.nan, -0.0, 0.0, np.nan, 1.0, np.inf, -np.inf]),
    np.array([np.nan, np.nan]),
    np.array([1.0, 2.0], np.float32),
])
def test_unique_sorted_is_numpys_unique(values):
    want = np.unique(values)
    got = unique_sorted(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_unique_sorted_on_many_random_ints_is_numpys_unique():
    values = np.random.default_rng(3).integers(-50, 10**6, 200_000)
    np.testing.assert_array_equal(unique_sorted(values), np.unique(values))


def _numpys_groups(rows: np.ndarray) -> list[tuple[int, ...]]:
    """np.unique's partition of the row indices into groups of equal rows, each ascending, by first."""
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    groups = [tuple(np.nonzero(inverse == g)[0].tolist()) for g in range(inverse.max() + 1)]
    return sorted(groups)


def _groups_of(found: RowGroups, n: int) -> list[tuple[int, ...]]:
    groups = [tuple(found.order[found.starts[g] : found.starts[g + 1]].tolist()) for g in range(len(found.starts) - 1)]
    assert all(list(g) == sorted(g) for g in groups)  # ascending within a group
    assert sorted(found.order.tolist()) == list(range(n))  # every row once
    for g, members in enumerate(groups):  # the inverse names each row's group; first is its lowest row
        assert (found.inverse[list(members)] == g).all() and found.first[g] == members[0]
    return sorted(groups)


def _planted_rows() -> np.ndarray:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((3000, 16))
    rows[[5, 100, 2999]] = rows[9]  # a group of four
    rows[7] = rows[3]
    rows[11] = 0.0
    rows[12] = -0.0  # numbers, not bytes: the same row as 11
    rows[13] = rows[14]
    rows[13, 15] += 1e-12  # one bit apart: distinct
    rows[20:30, 0] = rows[40, 0]  # equal in the first column only
    return rows


def test_row_groups_are_numpys_groups_of_equal_rows():
    rows = _planted_rows()
    found = row_groups(rows)
    assert len(found.starts) - 1 == 3000 - 5
    assert _groups_of(found, 3000) == _numpys_groups(rows)
    assert tuple(found.order[found.starts[found.inverse[9]] : found.starts[found.inverse[9] + 1]]) == (5, 9, 100, 2999)


@pytest.mark.parametrize("columns", [1, 2, 5])
@pytest.mark.parametrize("collide", [False, True])
def test_row_groups_of_rows_tied_at_every_column_are_numpys(columns, collide):
    """Values 0, -0.0, 1 and 2 only: many rows equal, in every order. With every hash the same (a mix of
    zeros), all rows collide and the groups come from putting them in lexicographic order."""
    rows = np.random.default_rng(columns).integers(0, 3, (2000, columns)).astype(np.float64)
    rows[::3][rows[::3] == 0] = -0.0
    mix = np.zeros(columns, np.uint64) if collide else None
    found = run_to_end(iter_row_groups(rows, mix=mix))
    assert _groups_of(found, 2000) == _numpys_groups(rows)


def test_row_groups_with_some_collisions_are_numpys(monkeypatch):
    """A hash of the first column only: rows that share it collide, the others do not."""
    from explorer.core import arrays

    rows = _planted_rows()
    mix = np.array([1] + [0] * 15, np.uint64)
    found = run_to_end(arrays.iter_row_groups(rows, mix=mix))
    assert _groups_of(found, 3000) == _numpys_groups(rows)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_row_groups_a_part_at_a_time_yield_and_are_numpys(monkeypatch, dtype):
    from explorer.core import arrays

    monkeypatch.setattr(arrays, "GROUP_ROWS", 64)  # many parts, a short last one
    monkeypatch.setattr(arrays, "SCATTER_ROWS", 7)
    rows = np.random.default_rng(11).integers(0, 4, (1000, 3)).astype(dtype)
    steps, found = drain(arrays.iter_row_groups(rows))
    assert _groups_of(found, 1000) == _numpys_groups(rows)
    assert len(steps) >= 2 * 1000 // 64  # a step after each part hashed and each part compared
    fractions = [f for f, _ in steps]
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] <= 1


def test_row_groups_of_no_rows_and_of_one():
    assert len(row_groups(np.zeros((0, 3))).starts) == 1
    one = row_groups(np.ones((1, 3)))
    assert one.order.tolist() == [0] and one.starts.tolist() == [0, 1] and one.inverse.tolist() == [0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_bounds_are_the_columns_extremes_over_the_finite_rows(dtype):
    rng = np.random.default_rng(5)
    points = rng.standard_normal((4000, 3)).astype(dtype)
    np.testing.assert_array_equal(finite_bounds(points)[0], points.min(axis=0))
    np.testing.assert_array_equal(finite_bounds(points)[1], points.max(axis=0))
    points[[3, 50]] = [[np.nan, 9, 9], [-9, np.inf, -9]]  # a row with one bad value is left out whole
    points[7, 2] = 40.0
    finite = points[np.isfinite(points).all(axis=1)]
    lo, hi = finite_bounds(points)
    np.testing.assert_array_equal(lo, finite.min(axis=0))
    np.testing.assert_array_equal(hi, finite.max(axis=0))
    assert hi[2] == 40.0 and hi[1] < 9
    assert finite_bounds(np.full((5, 2), np.nan, dtype)) is None
    assert finite_bounds(np.zeros((0, 2), dtype)) is None


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 9])
def test_join_pieces_a_slice_at_a_time_is_one_join(monkeypatch, n):
    from explorer.core import arrays

    monkeypatch.setattr(arrays, "JOIN_SLICE", 3)
    pieces = ["", "a", "bc", "", "d\ne", "f", "", "gh", "i"][:n]
    for seq in (pieces, tuple(pieces), arrays.object_array(iter(pieces), n)):
        assert arrays.join_pieces("\x00", seq) == "\x00".join(pieces)
        assert arrays.join_pieces("\x00", seq, ends=True) == "\x00" + "\x00".join(pieces) + "\x00"


def test_object_array_holds_the_items_where_the_collector_does_not_walk():
    import gc

    from explorer.core.arrays import object_array

    pieces = [f"piece {i}" for i in range(1000)]
    got = object_array(iter(pieces), len(pieces))
    assert got.dtype == object and got.tolist() == pieces
    assert not gc.is_tracked(got)  # a list or tuple of them is walked in every collection of its generation
    assert object_array(iter([]), 0).shape == (0,)


def vocabulary_long_containers(job, size: int) -> list[str]:
    """Run ``job`` to its end with the collector off; at each of its yields and at its end, the
    lists and tuples of ``size`` strings or more made since it began, which the collector walks
    item by item, holding the GIL, in each collection of their generation while they are young."""
    import gc

    def found() -> list[str]:
        return [f"{type(o).__name__} of {len(o):,}" for o in gc.get_objects()
                if type(o) in (list, tuple) and len(o) >= size and isinstance(o[0], str) and id(o) not in before]

    was_on = gc.isenabled()
    gc.disable()  # nothing untracked or freed by a collection meanwhile: what the job made stays seen
    try:
        before = {id(o) for o in gc.get_objects()}
        seen = []
        try:
            while True:
                next(job)
                seen += found()
        except StopIteration as stop:
            result = stop.value
        seen += found()
        del result
        return seen
    finally:
        if was_on:
            gc.enable()


@pytest.mark.parametrize("spec", ["minilm", "random:40000x8"])
def test_the_vocabulary_jobs_make_no_list_of_every_piece(spec):
    """The token metadata and the health report read every piece of the vocabulary; a list or a
    tuple of them is walked by each young collection, in whichever thread (the window's: a table
    of 10,000,000 rows stalled it 150-300 ms a collection)."""
    from explorer.core.health.job import iter_health
    from explorer.core.sources import open_table
    from explorer.core.tokens.meta import iter_token_metadata

    table = open_table(spec)
    table.piece(0)  # the tokenizer's own tables, made once for good, are not the jobs'
    v = table.vocab_size
    assert vocabulary_long_containers(iter_token_metadata(table), v) == []
    assert vocabulary_long_containers(iter_health(table), v) == []


def test_release_objects_frees_every_item_a_slice_at_a_time(monkeypatch):
    import weakref

    from explorer.core import arrays

    class Piece:
        pass

    items = [Piece() for _ in range(10)]
    refs = [weakref.ref(p) for p in items]
    held = arrays.object_array(iter(items), len(items))
    del items
    monkeypatch.setattr(arrays, "RELEASE_ROWS", 4)
    arrays.release_objects(held)
    assert held.tolist() == [None] * 10 and all(r() is None for r in refs)
    numbers = np.arange(5.0)
    arrays.release_objects(numbers)  # not objects: untouched
    np.testing.assert_array_equal(numbers, np.arange(5.0))


def test_a_cancelled_health_report_frees_its_pieces_by_slices_and_a_finished_one_keeps_them(monkeypatch):
    from explorer.core.health import job as health_job
    from explorer.core.sources import open_table

    released = []
    monkeypatch.setattr(health_job, "release_objects", lambda items: released.append(len(items)))
    table = open_table("random:40000x8")
    steps = health_job.iter_health(table)
    for _ in range(40):  # into the pass over the rows, the pieces read
        fraction, _message = next(steps)
        if fraction >= 0.45:
            break
    steps.close()
    assert released == [40000]
    released.clear()
    report = health_job.health_report(table)
    assert released == [] and report.vocab_size == 40000
