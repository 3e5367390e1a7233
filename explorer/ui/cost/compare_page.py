"""Famous models compared: parameters and bytes of their embedding tables next
to the loaded one, as log-scale bars and as a table (copy as CSV, export)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core import units
from explorer.core.cost import parameters as cost
from explorer.state.app_state import AppState
from explorer.ui.common.binding import ShownGate
from explorer.ui.common.export import export_graphics
from explorer.ui.common.table_fit import fit_to_contents
from explorer.ui.style import ACCENT, REFERENCE, REFERENCE_LIGHT, SPACING, plot_colors, shrinkable, style_plot

#: longest name of the loaded model in the chart
NAME_CHARS = 22
COLUMNS = [
    ("model", ""),
    ("V", "vocabulary size (rows)"),
    ("d", "model width (columns)"),
    ("parameters V·d", "V × d"),
    ("share", "V·d / all parameters of the model"),
    ("float32 bytes", "V × d × 4 bytes"),
    ("float32", "V × d × 4 bytes in decimal units (1 MB = 1000² bytes)"),
    ("float16 bytes", "V × d × 2 bytes (bfloat16 the same)"),
    ("tied", "output projection reuses E"),
]


def _log_ticks(lo: float, hi: float, fmt) -> list[tuple[float, str]]:
    """Ticks at powers of ten between ``lo`` and ``hi`` (log10 units)."""
    k0, k1 = int(np.ceil(lo)), int(np.floor(hi))
    step = max(1, (k1 - k0 + 1) // 6)
    return [(float(k), fmt(10.0**k)) for k in range(k0, k1 + 1, step)]


class ComparePage(QWidget):
    """The reference models and the loaded one, smallest table first."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._rows: list[cost.NamedCost] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        lay.setSpacing(SPACING)
        self._build_chart()
        self._build_table()
        split = QSplitter(Qt.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self.glw)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        lay.addWidget(split, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.export_button = QPushButton("Export chart…")
        self.export_button.setToolTip("Save both charts as PNG or SVG")
        self.export_button.clicked.connect(self._on_export_button_clicked)
        self.copy_button = QPushButton("Copy table as CSV")
        self.copy_button.setToolTip("Copy the comparison table to the clipboard as CSV")
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.copy_button)
        lay.addLayout(buttons)

        self._gate = ShownGate(self, self._synchronize)
        state.model_changed.connect(self._on_state_model_changed)

    def _build_chart(self) -> None:
        bg, fg = plot_colors()
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(bg)
        self.glw.setMinimumHeight(220)
        self.glw.setToolTip("Bars are on a logarithmic scale: each step right is 10 times more")
        self.glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.glw.ci.setSpacing(SPACING * 3)
        self.param_plot = self.glw.addPlot(row=0, col=0, enableMenu=False)
        self.bytes_plot = self.glw.addPlot(row=0, col=1, enableMenu=False)
        self.param_plot.setTitle("Parameters V × d", color=fg, size="10pt")
        self.bytes_plot.setTitle(f"Bytes <span style='color:{REFERENCE}'>■</span> float32 "
                                 f"<span style='color:{REFERENCE_LIGHT}'>■</span> float16", color=fg, size="10pt")
        self.param_plot.setLabel("bottom", "parameters (log scale)")
        self.bytes_plot.setLabel("bottom", "bytes (log scale)")
        self.param_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.6, brushes=[], pen=None)
        self.bytes32_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.36, brush=REFERENCE, pen=None)
        self.bytes16_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.36, brush=REFERENCE_LIGHT, pen=None)
        self.param_plot.addItem(self.param_bars)
        self.bytes_plot.addItem(self.bytes32_bars)
        self.bytes_plot.addItem(self.bytes16_bars)
        self._bar_labels: list[pg.TextItem] = []
        for p in (self.param_plot, self.bytes_plot):
            p.setMenuEnabled(False)
            p.setMouseEnabled(False, False)
            p.hideButtons()
            p.invertY(True)
            style_plot(p)
            shrinkable(p.titleLabel)
        self.bytes_plot.getAxis("left").setStyle(showValues=False)
        self.glw.ci.layout.setColumnStretchFactor(0, 3)
        self.glw.ci.layout.setColumnStretchFactor(1, 2)

    def _build_table(self) -> None:
        self.table = QTableWidget()
        self.table.setToolTip("The same figures as numbers; the loaded model is in bold")
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setMinimumHeight(120)
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHorizontalHeaderLabels([name for name, _ in COLUMNS])
        self.table.horizontalHeader().setStretchLastSection(True)  # columns fit their cells: _fill_table
        for i, (_, tip) in enumerate(COLUMNS):
            self.table.horizontalHeaderItem(i).setToolTip(tip)

    # -- state -------------------------------------------------------------------------
    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._synchronize)

    def _synchronize(self) -> None:
        table = self._state.table
        loaded = None
        if table is not None:
            name = units.shorten(table.name, NAME_CHARS)
            loaded = (f"{name} (loaded)", table.vocab_size, table.dim, table.model_params, table.tied)
        self._rows = cost.comparison(loaded)
        self._draw_chart(self._rows)
        self._fill_table(self._rows)

    @property
    def rows(self) -> list[cost.NamedCost]:
        """The models compared, smallest table first."""
        return list(self._rows)

    # -- drawing -----------------------------------------------------------------------
    def _draw_chart(self, rows: list[cost.NamedCost]) -> None:
        n = len(rows)
        y = np.arange(n, dtype=float)
        lp = np.log10([max(r.cost.params, 1) for r in rows])
        l32 = np.log10([max(r.cost.bytes_by_dtype["float32"], 1) for r in rows])
        l16 = np.log10([max(r.cost.bytes_by_dtype["float16"], 1) for r in rows])
        p0 = min(0.0, np.floor(lp.min())) if lp.min() < 1 else np.floor(lp.min()) - 1
        b0 = np.floor(l16.min()) - 1
        brushes = [pg.mkBrush(ACCENT if r.loaded else REFERENCE) for r in rows]
        self.param_bars.setOpts(x0=np.full(n, p0), y=y, width=lp - p0, height=0.6, brushes=brushes)
        self.bytes32_bars.setOpts(x0=np.full(n, b0), y=y - 0.19, width=l32 - b0, height=0.36)
        self.bytes16_bars.setOpts(x0=np.full(n, b0), y=y + 0.19, width=l16 - b0, height=0.36)
        self.param_plot.getAxis("left").setTicks([[(float(i), r.name) for i, r in enumerate(rows)]])
        self.bytes_plot.getAxis("left").setTicks([[(float(i), "") for i in range(n)]])
        self.param_plot.getAxis("bottom").setTicks([_log_ticks(p0, lp.max() + 1.2, units.short_count)])
        self.bytes_plot.getAxis("bottom").setTicks([_log_ticks(b0, l32.max() + 0.2, units.short_size)])
        self.param_plot.setXRange(p0, lp.max() + 1.3, padding=0)
        self.bytes_plot.setXRange(b0, l32.max() + 0.3, padding=0)
        for p in (self.param_plot, self.bytes_plot):
            p.setYRange(-0.6, n - 0.4, padding=0)
        # value labels at the ends of the parameter bars (a pool, reused)
        _, fg = plot_colors()
        while len(self._bar_labels) < n:
            ti = pg.TextItem(color=fg, anchor=(0, 0.5))
            self.param_plot.addItem(ti)
            self._bar_labels.append(ti)
        for i, ti in enumerate(self._bar_labels):
            if i < n:  # the count only: the share is in the table, and a long label would be clipped
                ti.setText(units.format_count(rows[i].cost.params))
                ti.setPos(lp[i] + 0.05, float(i))
                ti.show()
            else:
                ti.hide()

    def _fill_table(self, rows: list[cost.NamedCost]) -> None:
        t = self.table
        t.setRowCount(len(rows))
        bold = QFont(t.font())
        bold.setBold(True)
        for i, r in enumerate(rows):
            c = r.cost
            share = f"{100 * c.model_share:.1f} %" if c.model_share is not None else "–"
            tied = {True: "yes", False: "no", None: "–"}[r.tied]
            vals = [r.name, f"{c.vocab_size:,}", f"{c.dim:,}", f"{c.params:,}", share,
                    f"{c.bytes_by_dtype['float32']:,}", units.format_size(c.bytes_by_dtype['float32']),
                    f"{c.bytes_by_dtype['float16']:,}", tied]
            for j, text in enumerate(vals):
                item = QTableWidgetItem(text)
                if j > 0:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                if r.loaded:
                    item.setFont(bold)
                    item.setForeground(QColor(ACCENT))
                t.setItem(i, j, item)
        fit_to_contents(t)

    # -- copy and export ---------------------------------------------------------------
    def comparison_csv(self) -> str:
        """The comparison as CSV (name, V, d, parameters, share, bytes float32, bytes float16, tied)."""
        self._sync_if_stale()
        lines = ["model,V,d,parameters,share_of_model,bytes_float32,bytes_float16,tied"]
        for r in self._rows:
            c = r.cost
            share = f"{c.model_share:.6f}" if c.model_share is not None else ""
            name = r.name.replace('"', "'")
            tied = "" if r.tied is None else r.tied
            lines.append(f'"{name}",{c.vocab_size},{c.dim},{c.params},{share},'
                         f"{c.bytes_by_dtype['float32']},{c.bytes_by_dtype['float16']},{tied}")
        return "\n".join(lines) + "\n"

    def export_chart(self, path: str) -> None:
        """Write both comparison charts to ``path`` (.png or .svg)."""
        self._sync_if_stale()
        export_graphics(self.glw.ci, path)

    def _sync_if_stale(self) -> None:
        # asked for while hidden (a menu, a test): draw from the state first
        if self._gate.stale:
            self._gate.sync_now()

    def _on_copy_button_clicked(self) -> None:
        """Copy the comparison as CSV."""
        QGuiApplication.clipboard().setText(self.comparison_csv())

    def _on_export_button_clicked(self) -> None:
        """Save the charts as PNG or SVG."""
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", "embedding-cost.png",
                                              "PNG image (*.png);;SVG (*.svg)")
        if path:
            self.export_chart(path)
