"""Rotary positions: how far a few dimension pairs turn at each position."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.core.input_layer import PositionsReport
from explorer.ui.positions.plot_frame import add_plot
from explorer.ui.style import CLASS_COLORS, SPACING, plot_colors, translucent

__all__ = ["RotaryPanel"]


class RotaryPanel(QWidget):
    """cos(angle) of pairs 0, 1, ... against position: pair 0 turns one radian a
    token, the last pairs hardly at all."""

    def __init__(self, parent=None):
        super().__init__(parent)
        bg, fg = plot_colors()
        self._fg = fg
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING, 0, SPACING, 0)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        lay.addWidget(self.caption)
        self.plot_widget, self.plot = add_plot(lay, 200, 160)
        lay.setStretchFactor(self.plot_widget, 1)
        self.plot.setLabel("bottom", "position")
        self.plot.setLabel("left", "cos(angle turned)")
        self.plot.showGrid(x=True, y=True, alpha=0.12)
        self.legend = self.plot.addLegend(offset=(-10, -10), labelTextColor=fg, brush=translucent(bg, 220))
        self.curves: list[pg.PlotDataItem] = []

    def _curve(self, k: int) -> pg.PlotDataItem:
        while len(self.curves) <= k:
            c = pg.PlotDataItem(pen=pg.mkPen(CLASS_COLORS[len(self.curves) % len(CLASS_COLORS)], width=2))
            self.plot.addItem(c)
            self.curves.append(c)
        return self.curves[k]

    def set_report(self, report: PositionsReport | None) -> None:
        self.legend.clear()
        rot = None if report is None else report.layer.rotary
        if rot is None or report.rotary_angles is None:
            for c in self.curves:
                c.setData([], [])
            self.caption.setText("")
            return
        pos = report.rotary_positions
        angles = report.rotary_angles
        for k, pair in enumerate(report.rotary_pairs):
            c = self._curve(k)
            c.setData(pos, np.cos(angles[:, k]))
            rate = angles[-1, k] / pos[-1] if pos[-1] > 0 else 0.0  # radians per token
            period = 2 * np.pi / rate if rate > 0 else np.inf
            self.legend.addItem(c, f"pair {pair}: a turn every {period:,.0f} tokens" if np.isfinite(period)
                                else f"pair {pair}")
        for c in self.curves[len(report.rotary_pairs):]:
            c.setData([], [])
        self.plot.setTitle(f"How far {len(report.rotary_pairs)} of the {rot.pairs} pairs of a head turn, "
                           f"positions 0 to {pos[-1]:.0f}", color=self._fg, size="10pt")
        self.plot.setYRange(-1.05, 1.05, padding=0)
        self.plot.setXRange(0, float(pos[-1]), padding=0.01)
        ctx = f" It was trained on texts of up to {rot.context_length:,} tokens." if rot.context_length else ""
        self.caption.setText(
            f"Inside attention, every pair j of a query and key head (head size {rot.head_dim}) is turned by "
            f"position × θ^(−2j/{rot.rotary_dim}), θ = {rot.theta:,.0f} (from the {rot.source}). A query and a key "
            f"then meet at an angle set by their distance, not by where they stand.{ctx} "
            "None of this is in the input vector: it is the token row alone.")
