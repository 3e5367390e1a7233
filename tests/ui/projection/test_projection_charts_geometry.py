"""The linked charts read at any width (pytest-qt, offscreen): each chart's title
is whole, its count labels never run together, and the charts sit side by side
only as far as they stay wide enough (one a row in a 1024 x 700 window)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QImage, QPainter

from explorer.core.projection.crossfilter import ChartColumn, ChartFilter, crossfilter
from explorer.ui.projection.bar_chart import compact_count
from explorer.ui.projection.charts_panel import CHART_MIN_WIDTH, ChartsPanel


def _columns(n: int = 30_522) -> list[ChartColumn]:
    rng = np.random.default_rng(0)
    lengths = ("0 characters", "1 characters", "2 characters", "3 characters", "4–5 characters",
               "6–8 characters", "≥ 9 characters")
    norms = tuple(f"{a:.3g} – {a + 0.145:.3g}" for a in np.arange(0.245, 1.7, 0.145))
    return [ChartColumn("kind", "Token kind", ("word start", "continuation", "number", "byte"),
                        rng.choice(4, n, p=[0.7, 0.2, 0.05, 0.05])),
            ChartColumn("length", "Length (characters)", lengths, rng.integers(0, 7, n), True),
            ChartColumn("norm", "Row norm ‖e‖", norms, rng.integers(0, len(norms), n), True),
            ChartColumn("id_range", "Id range", tuple(f"{k}" for k in range(10)), rng.integers(0, 10, n), True)]


def _text_rects(axis) -> list:
    img = QImage(10, 10, QImage.Format_ARGB32)
    p = QPainter(img)
    try:
        specs = axis.generateDrawSpecs(p)
    finally:
        p.end()
    return sorted((r for r, _flags, _text in specs[2]), key=lambda r: r.left()) if specs else []


@pytest.mark.parametrize("width", [370, 560, 700])  # the Charts tab at 1024 x 700, at 1440 x 900, wider
def test_titles_are_whole_and_count_labels_never_overlap(qtbot, width):
    panel = ChartsPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 400)
    panel.show()
    qtbot.waitExposed(panel)
    columns = _columns()
    panel.show_counts(columns, crossfilter(columns, ChartFilter(), np.ones(30_522, bool)), ChartFilter())
    qtbot.waitUntil(lambda: len(panel.charts) == len(columns)
                    and all(c.width() >= CHART_MIN_WIDTH - 20 for c in panel.charts))
    if width < 2 * CHART_MIN_WIDTH:
        assert panel.columns() == 1  # one a row rather than three cut ones
    for chart in panel.charts:
        pi = chart.getPlotItem()
        title = pi.titleLabel
        assert title.item.boundingRect().width() <= title.boundingRect().width() + 1, title.text  # not cut
        rects = _text_rects(pi.getAxis("bottom"))
        assert len(rects) >= 2, title.text  # some scale to read
        for a, b in zip(rects, rects[1:]):
            assert a.right() + 4 <= b.left(), (title.text, a, b)  # apart, with a gap


def test_counts_are_written_short():
    assert [compact_count(v) for v in (0, 800, 2000, 2500, 20_000, 1_250_000)] == \
        ["0", "800", "2k", "2.5k", "20k", "1.2M"]


def test_the_charts_made_beforehand_are_made_one_per_idle_part(qtbot):
    """The idle builder makes one part per idle look: one chart each (five in one part were 160 ms
    that a user coming back met), laid out hidden until counts come."""
    from explorer.ui.projection.charts_panel import PREBUILT_CHARTS

    panel = ChartsPanel()
    qtbot.addWidget(panel)
    parts = panel.idle_parts()
    assert len(parts) == PREBUILT_CHARTS and not panel.charts
    made = []
    for part in parts:
        part()
        made.append(len(panel.charts))
    assert made == list(range(1, PREBUILT_CHARTS + 1))  # one more a part
    assert all(not c.isVisible() for c in panel.charts)
    parts[-1]()
    assert len(panel.charts) == PREBUILT_CHARTS  # made once


def test_charts_the_counts_still_need_come_a_turn_each_and_a_new_model_stops_them(qtbot):
    """A Projection tab opened before the idle builder made its charts drew all of them in the
    first counts' turn (290-350 ms in a quiet real window). The charts there are drawn at once;
    those still missing are made and drawn in the turns after, and clearing stops them."""
    panel = ChartsPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 400)
    panel.show()
    panel.prebuild(1)
    columns = _columns()
    cross = crossfilter(columns, ChartFilter(), np.ones(30_522, bool))
    panel.show_counts(columns, cross, ChartFilter())
    assert len(panel.charts) == 1 and panel.chart("kind") is not None  # the one there, drawn now
    qtbot.waitUntil(lambda: all(panel.chart(col.key) is not None for col in columns))
    assert len(panel.charts) == len(columns)
    for col in columns:
        np.testing.assert_array_equal(panel.chart(col.key).counts.opts["width"], cross.counts[col.key])

    more = columns + [ChartColumn("extra", "Extra", ("p", "q"), np.zeros(30_522, np.int64))]
    panel.show_counts(more, crossfilter(more, ChartFilter(), np.ones(30_522, bool)), ChartFilter())
    panel.clear()  # a new model before the fifth chart's turn
    qtbot.wait(50)
    assert len(panel.charts) == len(columns) and panel.chart("extra") is None
