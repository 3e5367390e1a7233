"""The linked charts under the projection: one :class:`BarChart` per metadata
column in a grid that scrolls, and Clear. Clicks and drags go to the view's
PointSelection (its ``toggle_bar`` and ``choose_bars`` intents), which filters
the map; the panel redraws from what it counted."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QPushButton, QScrollArea, QVBoxLayout, QWidget

from explorer.ui.common.binding import OneATurn
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.projection.bar_chart import BarChart
from explorer.ui.style import SPACING

__all__ = ["PREBUILT_CHARTS", "ChartsPanel"]

#: charts side by side in a row, at most (as many as are at least CHART_MIN_WIDTH wide)
COLUMNS = 3
#: charts made before the first counts (the bundled model and MiniLM draw five)
PREBUILT_CHARTS = 5
#: pixels a chart needs for its bar labels, its bars, its count labels and its title
CHART_MIN_WIDTH = 230
EMPTY = "Open a model: a chart per column of metadata appears here once its projection is drawn."


class ChartsPanel(QScrollArea):
    """A grid of charts; ``follow(points)`` connects it to a PointSelection."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._points = None
        body = QWidget()
        outer = QVBoxLayout(body)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(SPACING // 2)
        top = QHBoxLayout()
        self.caption = WrapLabel(EMPTY)
        self.clear_button = QPushButton("Clear filters")
        self.clear_button.setToolTip("Choose no bar in any chart: every point the Show filter keeps is drawn")
        self.clear_button.clicked.connect(self._on_clear_clicked)
        top.addWidget(self.caption, 1)
        top.addWidget(self.clear_button)
        outer.addLayout(top)
        self._grid = QGridLayout()
        self._grid.setSpacing(SPACING)
        outer.addLayout(self._grid)
        outer.addStretch(1)
        self.charts: list[BarChart] = []
        self._placed = 0  # the columns the charts are laid out in (0: to be laid out)
        self._latest = None  # the counts drawn last: (columns, cross, filter)
        self._making = OneATurn(self)  # the charts the counts still need, one a turn
        self._drawn = 0  # how many charts show the latest counts
        self.setWidget(body)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

    def follow(self, points) -> None:
        """Draw what ``points`` (PointSelection) counted, and send it the user's clicks."""
        self._points = points

    def chart(self, key: str) -> BarChart | None:
        """The chart of column ``key`` shown, or None."""
        return next((c for c in self.charts if c.isVisible() and c.key == key), None)

    def show_counts(self, columns, cross, flt) -> None:
        """Draw ``columns`` (ChartColumn) with ``cross`` (CrossCounts) under ``flt`` (ChartFilter).

        The charts there are are drawn now; those still missing are made and drawn one a turn
        (each a plot of its own, 35-60 ms): the first counts of a Projection tab opened before
        the idle builder made them made all five in one turn (its longest gap in a quiet real
        window 127-175 ms, 86-143 with a chart a turn)."""
        self._latest = (columns, cross, flt)
        for chart, col in zip(self.charts, columns):
            self._draw(chart, col)
        for chart in self.charts[len(columns):]:
            chart.hide()
        self._drawn = min(len(self.charts), len(columns))
        self._making.run([self._make_next] * (len(columns) - self._drawn), now=False)
        kept = int(cross.keep.sum())
        self.clear_button.setEnabled(flt.active)
        # one line beside Clear filters, even in a narrow window: how to filter is in the tooltip
        self.caption.setText(f"{kept:,} of {len(cross.keep):,} points pass every chart" if columns else
                             "The tokens' metadata is still being computed; its charts appear when it is.")
        self.caption.setToolTip("Click a bar to filter the map to it, drag across bars for a range. Each chart "
                                "counts the drawn points that every other chart (and the Show filter) keeps; the "
                                "grey bars are all the drawn points.")

    def _draw(self, chart: BarChart, col) -> None:
        _, cross, flt = self._latest
        chart.show_counts(col, cross.totals[col.key], cross.counts[col.key], flt.bars(col.key))
        chart.show()

    def _make_next(self) -> None:
        """The next chart the latest counts need, made (unless the idle builder made it meanwhile) and drawn."""
        k = self._drawn
        self.prebuild(k + 1)
        self._draw(self.charts[k], self._latest[0][k])
        self._drawn = k + 1

    def idle_parts(self) -> list:
        """The charts made beforehand, one per part: the idle builder makes one part per idle look,
        and the five in one part (160 ms) were met by a user who came back during it."""
        return [lambda n=n: self.prebuild(n) for n in range(1, PREBUILT_CHARTS + 1)]

    def prebuild(self, n: int = PREBUILT_CHARTS) -> None:
        """At least ``n`` charts made (hidden until drawn) and laid out: each is a plot of its own
        (35 ms), and the first counts made five of them in one go (a 250 ms stall of a tour step)."""
        made = False
        while len(self.charts) < n:
            chart = BarChart()
            chart.hide()
            chart.bar_clicked.connect(self._on_chart_bar_clicked)
            chart.bars_brushed.connect(self._on_chart_bars_brushed)
            self.charts.append(chart)
            made = True
        if made:
            self._placed = 0  # placed again, with the others
        self._place()

    def columns(self) -> int:
        """Charts side by side at this width: as many as fit CHART_MIN_WIDTH each, one to COLUMNS."""
        room = self.viewport().width() + self._grid.spacing()
        return int(min(COLUMNS, max(1, room // (CHART_MIN_WIDTH + self._grid.spacing()))))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._place()

    def _place(self) -> None:
        """The charts in rows of :meth:`columns` (again only when that number changed)."""
        cols = self.columns()
        if self._placed == cols:
            return
        for chart in self.charts:
            self._grid.removeWidget(chart)
        for k, chart in enumerate(self.charts):
            self._grid.addWidget(chart, k // cols, k % cols, Qt.AlignTop)
        for c in range(max(COLUMNS, self._grid.columnCount())):  # columns left empty take no room
            self._grid.setColumnStretch(c, 1 if c < cols else 0)
        self._placed = cols

    def clear(self) -> None:
        """No charts (a new model, not drawn yet)."""
        self._latest = None
        self._making.cancel()
        for chart in self.charts:
            chart.hide()
        self.caption.setText(EMPTY)
        self.clear_button.setEnabled(False)

    def _on_chart_bar_clicked(self, key: str, bar: int) -> None:
        if self._points is not None:
            self._points.toggle_bar(key, bar)

    def _on_chart_bars_brushed(self, key: str, bars) -> None:
        if self._points is not None:
            self._points.choose_bars(key, bars)

    def _on_clear_clicked(self) -> None:
        if self._points is not None:
            self._points.clear_charts()
