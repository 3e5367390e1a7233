"""The linked charts' counts (explorer.core.projection.crossfilter) and the points'
table (explorer.core.projection.point_table) against plain numpy (and ``sorted``) over seeded data."""

from __future__ import annotations

import csv
from types import SimpleNamespace

import numpy as np

from explorer.core.interop.rows import one_line
from explorer.core.jobs import run_to_end
from explorer.core.projection.crossfilter import NORM_BINS, ChartColumn, ChartFilter, chart_columns, crossfilter
from explorer.core.projection.point_table import piece_order_job, point_table
from explorer.core.tokens.meta import KINDS, TokenMetadata


def _columns(n: int, seed: int = 0) -> list[ChartColumn]:
    rng = np.random.default_rng(seed)
    return [ChartColumn("a", "A", tuple("pqrs"), rng.integers(-1, 4, n)),
            ChartColumn("b", "B", tuple("xyz"), rng.integers(0, 3, n), True),
            ChartColumn("c", "C", tuple("uv"), rng.integers(0, 2, n))]


def test_each_chart_counts_what_every_other_chart_keeps():
    cols = _columns(5_000)
    a, b, c = (col.codes for col in cols)
    base = np.random.default_rng(1).random(5_000) < 0.8  # the legend's filter
    flt = ChartFilter().toggled("a", 1).toggled("a", 3).with_bars("b", (0, 1))
    got = crossfilter(cols, flt, base)
    in_a, in_b = np.isin(a, [1, 3]), np.isin(b, [0, 1])
    np.testing.assert_array_equal(got.keep, in_a & in_b)
    np.testing.assert_array_equal(got.counts["a"], np.bincount(a[base & in_b & (a >= 0)], minlength=4))
    np.testing.assert_array_equal(got.counts["b"], np.bincount(b[base & in_a], minlength=3))
    np.testing.assert_array_equal(got.counts["c"], np.bincount(c[base & in_a & in_b], minlength=2))
    np.testing.assert_array_equal(got.totals["a"], np.bincount(a[a >= 0], minlength=4))
    assert int(got.totals["c"].sum()) == 5_000


def test_with_no_choice_each_chart_counts_all_its_points_and_a_code_below_zero_is_in_no_bar():
    cols = _columns(5_000, seed=2)
    cols[0] = ChartColumn("a", "A", tuple("pqrs"), np.where(cols[0].codes < 0, -7, cols[0].codes))
    a = cols[0].codes
    for base in (None, np.ones(5_000, bool), np.random.default_rng(4).random(5_000) < 0.5):
        got = crossfilter(cols, ChartFilter(), base)
        kept = np.ones(5_000, bool) if base is None else base
        assert got.keep.all()
        np.testing.assert_array_equal(got.totals["a"], np.bincount(a[a >= 0], minlength=4))
        np.testing.assert_array_equal(got.counts["a"], np.bincount(a[kept & (a >= 0)], minlength=4))
        np.testing.assert_array_equal(got.counts["b"], np.bincount(cols[1].codes[kept], minlength=3))


def test_the_filter_toggles_and_forgets_empty_choices():
    flt = ChartFilter()
    assert not flt.active and flt.bars("a") == ()
    flt = flt.toggled("b", 2).toggled("a", 0).toggled("b", 1)
    assert flt.chosen == (("a", (0,)), ("b", (1, 2)))
    assert flt.toggled("a", 0).chosen == (("b", (1, 2)),)  # clicked again: no longer chosen
    assert not flt.with_bars("a", ()).with_bars("b", []).active
    no_column = crossfilter(_columns(100), ChartFilter().with_bars("missing", (0,)))
    assert no_column.keep.all()  # a key without a chart filters nothing


def _meta(v: int, seed: int = 0) -> TokenMetadata:
    rng = np.random.default_rng(seed)
    norm = rng.gamma(4.0, 0.5, v).astype(np.float32)
    norm[12] = np.nan
    return TokenMetadata(kind=rng.integers(0, len(KINDS), v).astype(np.int8),
                         length=rng.integers(0, 12, v).astype(np.int32), norm=norm, spec="seeded")


def test_chart_columns_bin_the_norms_as_numpy_does():
    meta = _meta(1_000)
    ids = np.arange(0, 1_000, 3)
    cols = {c.key: c for c in chart_columns(ids, vocab_size=1_000, meta=meta)}
    assert set(cols) == {"kind", "length", "norm", "id_range"}  # no health check, no classes: no charts for them
    norms = meta.norm[ids]
    finite = np.isfinite(norms)
    want, _ = np.histogram(norms[finite], bins=NORM_BINS)
    np.testing.assert_array_equal(np.bincount(cols["norm"].codes[finite], minlength=NORM_BINS), want)
    assert cols["norm"].codes[~finite].tolist() == [-1]  # id 12, NaN
    np.testing.assert_array_equal(cols["kind"].codes, meta.kind[ids])
    assert [c.key for c in chart_columns(ids, vocab_size=1_000)] == ["id_range"]  # no metadata yet


def test_the_points_table_sorts_by_the_real_values_and_writes_the_rows(tmp_path):
    meta = _meta(500)
    ids = np.arange(10, 410, 2)
    xy = np.random.default_rng(2).normal(size=(len(ids), 2))
    table = SimpleNamespace(shown_piece=lambda i: SimpleNamespace(text=f"p\t{i}"))
    pts = point_table(ids, xy, ("x", "y"), table, meta)
    header = pts.header()
    assert header[:2] == ["id", "piece"] and header[-2:] == ["x", "y"]
    norm_col = header.index("norm")
    order = pts.order(norm_col)
    norms = meta.norm[ids]
    assert np.isnan(norms[order[-1]]) and ids[order[-1]] == 12  # the unknown norm last
    assert np.all(np.diff(norms[order[:-1]]) >= 0)
    desc = pts.order(norm_col, descending=True)
    assert np.isnan(norms[desc[-1]]) and np.all(np.diff(norms[desc[:-1]]) <= 0)  # last either way
    kind_order = pts.order(header.index("kind"))
    names = [KINDS[k] for k in meta.kind[ids][kind_order]]
    assert names == sorted(names)
    assert pts.cell(0, 1) == "p⇥10"  # one line, as the exports write pieces
    path = tmp_path / "sel.csv"
    rows = order[:5]
    assert pts.write_csv(path, rows) == 5
    with open(path, encoding="utf-8") as f:
        got = list(csv.reader(f))
    assert got[0] == header
    assert [int(r[0]) for r in got[1:]] == ids[rows].tolist()
    np.testing.assert_allclose([float(r[-2]) for r in got[1:]], xy[rows, 0], rtol=1e-5)


def test_the_piece_order_job_sorts_the_pieces_as_sorted_does():
    ids = np.array([7, 3, 9, 1, 4, 12, 5])
    text = {7: "b", 3: "a\tz", 9: "A", 1: "é", 4: "b", 12: "", 5: " a"}
    table = SimpleNamespace(shown_piece=lambda i: SimpleNamespace(text=text[i]))
    found = run_to_end(piece_order_job(table.shown_piece, ids))
    pieces = [one_line(text[i]) for i in ids.tolist()]
    assert found.ids.tolist() == ids.tolist() and list(found.pieces) == pieces
    assert found.order.tolist() == sorted(range(len(ids)), key=lambda r: pieces[r])  # stable: 7 before 4
    pts = point_table(ids, np.zeros((len(ids), 2)), ("x", "y"), table)
    assert not pts.pieces_read
    pts.set_piece_order(found)
    assert pts.pieces_read and pts.order(1).tolist() == found.order.tolist()
    assert pts.order(1, descending=True).tolist() == found.order[::-1].tolist()
