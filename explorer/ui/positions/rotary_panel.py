"""Rotary positions: how far a few dimension pairs turn at each position."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.core.input_layer import PositionsReport
from explorer.ui.common.plot_grid import show_grid
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.positions.plot_frame import add_plot
from explorer.ui.style import CLASS_COLORS, SPACING

__all__ = ["RotaryPanel"]


class RotaryPanel(QWidget):
    """cos(angle) of pairs 0, 1, ... against position: pair 0 turns one radian a
    token, the last pairs hardly at all."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING, 0, SPACING, 0)
        self.caption = WrapLabel("")
        lay.addWidget(self.caption)
        self.plot_widget, self.plot = add_plot(lay, 200, 160)
        lay.setStretchFactor(self.plot_widget, 1)
        self.title = FittedTitle(self.plot, 10, span=True)
        self.plot.setLabel("bottom", "position")
        self.plot.setLabel("left", "cos(angle turned)")
        show_grid(self.plot)
        # the key under the plot, not over it: the curves fill the whole plot, a legend inside covers them
        self.key = WrapLabel("")
        self.key.setToolTip("Each pair's colour, and how many tokens it takes to turn a full circle")
        lay.addWidget(self.key)
        self.curves: list[pg.PlotDataItem] = []

    def _curve(self, k: int) -> pg.PlotDataItem:
        while len(self.curves) <= k:
            c = pg.PlotDataItem(pen=pg.mkPen(CLASS_COLORS[len(self.curves) % len(CLASS_COLORS)], width=2))
            self.plot.addItem(c)
            self.curves.append(c)
        return self.curves[k]

    def set_report(self, report: PositionsReport | None) -> None:
        rot = None if report is None else report.layer.rotary
        if rot is None or report.rotary_angles is None:
            for c in self.curves:
                c.setData([], [])
            self.caption.setText("")
            self.key.setText("")
            return
        pos = report.rotary_positions
        angles = report.rotary_angles
        entries = []
        for k, pair in enumerate(report.rotary_pairs):
            c = self._curve(k)
            c.setData(pos, np.cos(angles[:, k]))
            rate = angles[-1, k] / pos[-1] if pos[-1] > 0 else 0.0  # radians per token
            period = 2 * np.pi / rate if rate > 0 else np.inf
            text = f"pair {pair}: a turn every {period:,.0f} tokens" if np.isfinite(period) else f"pair {pair}"
            color = CLASS_COLORS[k % len(CLASS_COLORS)]
            entries.append(f"<span style='white-space:nowrap'><span style='color:{color}'>━━</span>&nbsp;"
                           f"{html.escape(text)}</span>")
        self.key.setText(" &nbsp; ".join(entries))
        for c in self.curves[len(report.rotary_pairs):]:
            c.setData([], [])
        shown = f"How far {len(report.rotary_pairs)} of the {rot.pairs} pairs of a head turn"
        self.title.set(f"{shown}, positions 0 to {pos[-1]:,.0f}", short=shown)
        self.plot.setYRange(-1.05, 1.05, padding=0)
        self.plot.setXRange(0, float(pos[-1]), padding=0.01)
        ctx = f" It was trained on texts of up to {rot.context_length:,} tokens." if rot.context_length else ""
        self.caption.setText(
            f"Inside attention, every pair j of a query and key head (head size {rot.head_dim}) is turned by "
            f"position × θ^(−2j/{rot.rotary_dim}), θ = {rot.theta:,.0f} (from the {rot.source}). A query and a key "
            f"then meet at an angle set by their distance, not by where they stand.{ctx} "
            "None of this is in the input vector: it is the token row alone.")
