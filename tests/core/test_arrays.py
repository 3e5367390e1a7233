"""unique_sorted and unique_rows give numpy's np.unique results (its hash
path holds the GIL for seconds on millions of values; these sort instead);
finite_bounds gives what numpy's reductions over the finite rows give."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.arrays import finite_bounds, unique_rows, unique_sorted


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


def test_unique_rows_is_numpys_unique_along_rows():
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((3000, 16))
    rows[[5, 100, 2999]] = rows[9]  # a group of four
    rows[7] = rows[3]
    rows[11] = 0.0
    rows[12] = -0.0  # numbers, not bytes: the same row as 11
    rows[13] = rows[14]
    rows[13, 15] += 1e-12  # one bit apart: distinct
    rows[20:30, 0] = rows[40, 0]  # equal in the first column only: ordered by the next ones
    want = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    got = unique_rows(rows)
    assert len(got[0]) == 3000 - 5
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w.reshape(g.shape))
    np.testing.assert_array_equal(got[0][got[2]], rows)  # every row is its distinct row


@pytest.mark.parametrize("columns", [1, 2, 5])
def test_unique_rows_of_rows_tied_at_every_column_is_numpys(columns):
    """Values 0, -0.0, 1 and 2 only: most rows tie on their first value, many on all, in every order."""
    rows = np.random.default_rng(columns).integers(0, 3, (2000, columns)).astype(np.float64)
    rows[::3][rows[::3] == 0] = -0.0
    want = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    got = unique_rows(rows)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w.reshape(g.shape))


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


def test_unique_rows_scattered_a_slice_at_a_time_is_numpys_unique(monkeypatch):
    from explorer.core import arrays

    monkeypatch.setattr(arrays, "SCATTER_ROWS", 7)  # many slices, a short last one
    rows = np.random.default_rng(11).integers(0, 4, (1000, 3)).astype(np.float32)
    want = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    got = arrays.unique_rows(rows)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w.reshape(g.shape))


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
