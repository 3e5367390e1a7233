"""Linked charts over the projection's points, as Embedding Atlas has them: one
bar chart per metadata column (token kind, length, row norm, id range, health,
classes, the user's own columns), a filter made of the bars the user chose in
each, and each chart's counts over the points every *other* chart's choice
keeps (the crossfilter rule: a chart never filters itself). No Qt here.

Everything is vectorised numpy over the drawn ids: a mask per chosen chart and
one ``np.bincount`` per chart, about a millisecond per chart on 50,000 points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.tokens.groups import TokenGroups, token_groups

__all__ = ["CHART_KEYS", "NORM_BINS", "ChartColumn", "ChartFilter", "CrossCounts", "chart_columns", "crossfilter"]

#: key, chart title; the metadata columns charted, in this order (then the user's columns)
CHART_KEYS = (("kind", "Token kind"), ("length", "Length (characters)"), ("norm", "Row norm ‖e‖"),
              ("id_range", "Id range"), ("health", "Token health"), ("classes", "Classes"))
#: equal-width bins of the row norm's histogram
NORM_BINS = 10


@dataclass(frozen=True, eq=False)
class ChartColumn:
    """One chart: the bar of each drawn point.

    Attributes
    ----------
    key : str
        ``kind``, ``length``, ``norm``, ``id_range``, ``health``, ``classes`` or ``user:<column>``.
    title : str
        What the chart shows, in plain words.
    labels : tuple of str
        One per bar, in order.
    codes : ndarray (n,) int64
        The bar of each point (index into ``labels``), -1 for a point in none.
    ordered : bool
        The bars are bins of a quantity (a range of them can be brushed).
    """

    key: str
    title: str
    labels: tuple[str, ...]
    codes: np.ndarray
    ordered: bool = False


def _norm_histogram(ids: np.ndarray, norm: np.ndarray) -> ChartColumn | None:
    """Equal-width bins of the finite norms (equal-count bins would draw a flat chart)."""
    values = norm[ids].astype(np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        return None
    edges = np.histogram_bin_edges(values[finite], bins=NORM_BINS)
    codes = np.where(finite, np.clip(np.searchsorted(edges, values, side="right") - 1, 0, NORM_BINS - 1), -1)
    labels = tuple(f"{edges[k]:.3g} – {edges[k + 1]:.3g}" for k in range(NORM_BINS))
    return ChartColumn("norm", dict(CHART_KEYS)["norm"], labels, codes.astype(np.int64), True)


def _from_groups(groups: TokenGroups, title: str) -> ChartColumn | None:
    if not groups.labels:
        return None
    return ChartColumn(groups.key, title, groups.labels, groups.codes, groups.ordered)


def chart_columns(ids, *, vocab_size: int, meta=None, classes=None, health=None, user=None) -> tuple[ChartColumn, ...]:
    """The charts that can be drawn for the tokens ``ids`` (n,): a column whose
    metadata is not known yet (no health check, no classes, the metadata still
    being computed) is left out. Arguments as :func:`explorer.core.tokens.groups.token_groups`.
    """
    ids = np.asarray(ids, np.int64)
    out: list[ChartColumn | None] = []
    for key, title in CHART_KEYS:
        if key == "norm":
            out.append(_norm_histogram(ids, meta.norm) if meta is not None else None)
            continue
        out.append(_from_groups(token_groups(key, ids, vocab_size=vocab_size, meta=meta, classes=classes,
                                             health=health), title))
    for col in (user.columns if user is not None else ()):
        out.append(_from_groups(token_groups(f"user:{col.name}", ids, vocab_size=vocab_size, user=user),
                                f"{col.name} (your file)"))
    return tuple(c for c in out if c is not None)


@dataclass(frozen=True)
class ChartFilter:
    """The bars chosen in each chart (a chart with none chosen filters nothing).

    Attributes
    ----------
    chosen : tuple of (str, tuple of int)
        (chart key, its chosen bars ascending), only charts with a choice, by key.
    """

    chosen: tuple[tuple[str, tuple[int, ...]], ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.chosen)

    def bars(self, key: str) -> tuple[int, ...]:
        """The bars chosen in chart ``key`` (empty: none)."""
        return dict(self.chosen).get(key, ())

    def with_bars(self, key: str, bars) -> ChartFilter:
        """This filter with exactly ``bars`` chosen in chart ``key`` (empty: that chart filters nothing)."""
        chosen = dict(self.chosen)
        chosen[key] = tuple(sorted({int(b) for b in bars}))
        return ChartFilter(tuple(sorted((k, v) for k, v in chosen.items() if v)))

    def toggled(self, key: str, bar: int) -> ChartFilter:
        """This filter with ``bar`` of chart ``key`` chosen, or no longer chosen (a click on it)."""
        return self.with_bars(key, set(self.bars(key)) ^ {int(bar)})


@dataclass(frozen=True, eq=False)
class CrossCounts:
    """What the charts draw and the map shows.

    Attributes
    ----------
    totals : dict of str to ndarray (bars,) int64
        Points per bar among all the drawn points.
    counts : dict of str to ndarray (bars,) int64
        Points per bar among those ``base`` and every other chart's choice keep.
    keep : ndarray (n,) bool
        The points every chart's choice keeps (``base`` not applied).
    """

    totals: dict[str, np.ndarray]
    counts: dict[str, np.ndarray]
    keep: np.ndarray


def _count(shifted: np.ndarray, bars: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Points per bar: ``shifted`` is a column's codes plus one (a point in no bar: 0, dropped)."""
    return np.bincount(shifted if mask is None else shifted[mask], minlength=bars + 1)[1:].astype(np.int64)


def _shifted(codes: np.ndarray) -> np.ndarray:
    """``codes`` plus one; a code below -1 (in no bar, as -1 is) made 0 too."""
    out = np.asarray(codes, np.int64) + 1
    return np.where(out < 0, 0, out) if len(out) and out.min() < 0 else out


def crossfilter(columns, flt: ChartFilter, base: np.ndarray | None = None) -> CrossCounts:
    """Count every chart under the filter ``flt``.

    Parameters
    ----------
    columns : sequence of ChartColumn
        The charts, each with codes for the same n points.
    flt : ChartFilter
        The bars chosen; a key with no column here filters nothing.
    base : ndarray (n,) bool or None
        The points the map's other filters show (the legend, Show); None: all.
    """
    columns = tuple(columns)
    n = len(columns[0].codes) if columns else (len(base) if base is not None else 0)
    everything = base is None or bool(np.all(base))
    base = np.ones(n, bool) if base is None else np.asarray(base, bool)
    by_key = {c.key: c for c in columns}
    masks = {key: np.isin(by_key[key].codes, np.asarray(bars, np.int64))
             for key, bars in flt.chosen if key in by_key}
    keep = np.ones(n, bool)
    for mask in masks.values():
        keep &= mask
    # one bincount of the codes shifted past -1 (no bar), instead of selecting the codes in a bar
    # first: the charts of 256,000 points were 35 of the 145 ms a projection's landing took
    shifted = {c.key: _shifted(c.codes) for c in columns}
    totals = {c.key: _count(shifted[c.key], len(c.labels)) for c in columns}
    counts = {}
    for col in columns:
        others = [mask for key, mask in masks.items() if key != col.key]
        if everything and not others:  # nothing filters this chart: its counts are its totals
            counts[col.key] = totals[col.key]
            continue
        chosen = base.copy()
        for mask in others:
            chosen &= mask
        counts[col.key] = _count(shifted[col.key], len(col.labels), chosen)
    return CrossCounts(totals, counts, keep)
