"""The histogram of the score over every row, the reference rows' own
histogram over it, and the bar beyond which a row is flagged."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.core.health import HealthReport
from explorer.ui.common.plot_grid import show_grid
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.style import ERROR, HEALTH_CATEGORY_COLORS, TEXT_TOKENS, plot_colors, style_plot, translucent

__all__ = ["ScoreHistogram"]


class ScoreHistogram(QWidget):
    """Rows per score bin (log scale: the flagged tail is a few rows among
    thousands), all rows and the reference rows."""

    def __init__(self, parent=None):
        super().__init__(parent)
        bg, fg = plot_colors()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.plot_widget = pg.PlotWidget(background=bg, enableMenu=False)
        self.plot_widget.setMinimumHeight(120)
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.setLabel("bottom", "score")
        self.plot.setLabel("left", "rows (log scale)")
        self.plot.setLogMode(y=True)
        show_grid(self.plot)
        style_plot(self.plot)
        ok = HEALTH_CATEGORY_COLORS["ok"]
        self.all_rows = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(translucent(ok, 140)),
                                        pen=pg.mkPen(ok, width=1))
        self.reference = pg.PlotDataItem(stepMode="center", pen=pg.mkPen(TEXT_TOKENS, width=2))
        self.bar = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ERROR, width=1, style=Qt.DashLine))
        for item in (self.all_rows, self.reference, self.bar):
            self.plot.addItem(item)
        self.bar.hide()
        lay.addWidget(self.plot_widget)
        self.title = FittedTitle(self.plot)
        self._fg = fg

    def set_report(self, report: HealthReport | None) -> None:
        hist = report.histogram if report is not None else None
        if hist is None:
            self.all_rows.setData([], [])
            self.reference.setData([], [])
            self.bar.hide()
            self.title.set("")
            self.plot.getAxis("left").setTicks(None)  # the last model's counts must not stay on the axis
            self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            return
        # log scale: an empty bin is drawn at 0.5 (below one row), not at minus infinity
        self.all_rows.setData(hist.edges, np.maximum(hist.counts, 0.5))
        self.reference.setData(hist.edges, np.maximum(hist.reference, 0.5))
        bar = report.score_threshold
        self.bar.setVisible(bool(np.isfinite(bar)))
        if np.isfinite(bar):
            self.bar.setValue(bar)
        self.title.set(f"Score of {int(hist.counts.sum()):,} rows; line: the reference rows")
        # from just under one row (empty bins stay out of sight) to the tallest bin
        self.plot.enableAutoRange(x=True, y=False)
        top = np.log10(max(2.0, float(hist.counts.max())))
        self.plot.setYRange(np.log10(0.7), top + 0.15, padding=0)
        self.plot.getAxis("left").setTicks([_log_ticks(top), []])


def _log_ticks(top: float) -> list[tuple[float, str]]:
    """Labels at 1, 10, 100 ... (and 2, 5 under 10 when the bins are low):
    pyqtgraph labels every minor tick of a short log axis, on top of each other."""
    values = [10 ** k for k in range(int(np.floor(top)) + 1)]
    if top < 1.5:
        values = sorted(set(values) | {2, 5} - {v for v in (2, 5) if np.log10(v) > top + 0.1})
    return [(float(np.log10(v)), f"{v:,}") for v in values]
