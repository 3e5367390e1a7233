"""The real measurement of both ways on the loaded table: Measure, Cancel,
progress, and the timings as a table and a log-scale bar chart."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from explorer.core.bench import LookupMeasurement
from explorer.core.errors import user_message
from explorer.core.units import format_seconds, short_seconds
from explorer.ui.common.progress import ProgressBar
from explorer.ui.lookup.plots import elastic_label
from explorer.ui.style import ACCENT, ERROR, SPACING, THIRD_PATH, mono_font, plot_colors, style_plot

#: the buttons, the status and the table of figures
LEFT_WIDTH = 330
IDLE_TEXT = "Press Measure to time both ways on this table"


class MeasurePanel(QWidget):
    """Measure and Cancel with progress on the left, the results beside them.

    Signals
    -------
    measure_clicked()
        The user asked for a measurement.
    """

    measure_clicked = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        bg, fg = plot_colors()
        self._measurement: LookupMeasurement | None = None
        self._chosen = "stored"
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(SPACING)
        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(SPACING // 2)
        left.setFixedWidth(LEFT_WIDTH)
        buttons = QHBoxLayout()
        self.measure_button = QPushButton("Measure")
        self.measure_button.setToolTip(
            "Time torch's gather (nn.Embedding), one-hot @ E and a bias-free nn.Linear on one-hot inputs "
            "on the loaded table, for 1 token and for 64 tokens, and check that all three agree")
        self.measure_button.clicked.connect(self.measure_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the measurement")
        self.cancel_button.hide()
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setToolTip("Progress of the measurement")
        self.progress.hide()
        for button in (self.measure_button, self.cancel_button):
            button.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Fixed)
            buttons.addWidget(button)
        buttons.addWidget(self.progress, 1)
        buttons.addStretch(0)
        col.addLayout(buttons)
        self.status = elastic_label(rich=True)
        self.status.setText(IDLE_TEXT)
        col.addWidget(self.status)
        self.table = QLabel()
        self.table.setFont(mono_font())
        self.table.setTextFormat(Qt.RichText)
        self.table.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.table.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        col.addWidget(self.table)
        col.addStretch(1)
        row.addWidget(left, 0, Qt.AlignTop)
        self.results = pg.GraphicsLayoutWidget()  # the chart is made with the first results (_build_chart)
        self.results.setBackground(bg)
        self.results.setFixedHeight(140)
        self.chart: pg.PlotItem | None = None
        self._fg = fg
        row.addWidget(self.results, 1)
        self.spacer = QWidget()
        row.addWidget(self.spacer, 1)
        self.clear()

    def _build_chart(self) -> None:
        """The timings as bars with their figures written beside them (made once, with the first results)."""
        fg = self._fg
        self.chart = self.results.addPlot(enableMenu=False)  # no menu: none is built
        self.chart.setMouseEnabled(False, False)
        self.chart.hideButtons()
        self.chart_bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brushes=[])
        self.chart.addItem(self.chart_bars)
        self.chart_texts = []
        for _ in range(6):
            t = pg.TextItem(color=fg, anchor=(0, 0.5))
            self.chart.addItem(t)
            self.chart_texts.append(t)
        style_plot(self.chart)

    @property
    def measurement(self) -> LookupMeasurement | None:
        return self._measurement

    # -- states --------------------------------------------------------------------------
    def clear(self, message: str = IDLE_TEXT) -> None:
        """No results (a new table, or a new run starting)."""
        self._measurement = None
        self.status.setText(message)
        self.status.setToolTip("")
        self.table.hide()
        self.results.hide()
        self.spacer.show()

    def show_error(self, exc: BaseException) -> None:
        message = user_message(exc)
        self.status.setText(f"The measurement failed:<br>{html.escape(message, quote=False)}")
        self.status.setToolTip(message)

    def show_cancelled(self) -> None:
        self.status.setText("Measurement cancelled. Press Measure to start again.")

    def set_running(self, running: bool) -> None:
        self.measure_button.setEnabled(not running)

    def set_chosen_dtype(self, dtype: str) -> None:
        """The "Stored as" choice changed: the caption says what the timings were measured on."""
        self._chosen = dtype
        self._show_caption()

    # -- results ---------------------------------------------------------------------------
    def show_measurement(self, m: LookupMeasurement) -> None:
        self._measurement = m
        b1 = m.batches[0]
        if m.agree:
            verdict = "all three outputs identical."
        else:
            verdict = f"<span style='color:{ERROR}'>the outputs differ</span> (see the tooltip)."
        token = "token" if b1.batch == 1 else "tokens"
        self.status.setText(f"<b>one-hot @ E: {b1.ratio:,.0f}× the gather's time</b><br>"
                            f"for {b1.batch:,} {token}; {verdict}" + self.busy_text)
        self.status.setToolTip(f"{m.threads} torch thread(s); best (shortest) of {m.repeats} interleaved runs "
                               f"({m.gather_repeats} for the gather), computed in {m.compute_dtype}"
                               + "".join(f"\n{n}" for n in m.notes))
        lines = ["batch    gather    one-hot   ratio equal"]
        for b in m.batches:
            lines.append(f"{b.batch:>5,} {format_seconds(b.gather_s):>9} {format_seconds(b.onehot_s):>10} "
                         f"{b.ratio:>6,.0f}×  {'yes' if b.agree else 'NO'}")
        self.table.setText("<pre style='margin:0'>" + "\n".join(lines) + "</pre>")
        self.table.setToolTip(f"Best (shortest) time per call of {m.repeats} runs ({m.gather_repeats} for "
                              "the gather); ratio = one-hot time / gather time")
        self.table.show()
        if self.chart is None:
            self._build_chart()
        self._show_caption()
        self._draw_chart(m)
        self.results.show()
        self.spacer.hide()

    @property
    def busy_text(self) -> str:
        """The warning shown when the machine was too busy for the figures to be the lesson ("" otherwise)."""
        m = self._measurement
        if m is None or not m.disturbed:
            return ""
        # short enough for the column; the tooltip carries the note that says why
        return f"<br><span style='color:{ERROR}'>The machine was busy: times inflated. Measure again.</span>"

    @property
    def caption(self) -> str:
        """What the timings were measured on, as the chart's title says ("" without results)."""
        m = self._measurement
        if m is None:
            return ""
        how = (m.stored_dtype if m.stored_dtype == m.compute_dtype
               else f"{m.stored_dtype}, computed in {m.compute_dtype}")
        text = f"Best time per call · E as stored ({how})"
        if self._chosen not in ("stored", m.stored_dtype):
            text += (f"<br><span style='color:{ERROR}'>Not measured on the {html.escape(self._chosen)} layout "
                     "chosen above</span>")
        return text

    def _show_caption(self) -> None:
        if self.chart is not None:  # no chart before the first results
            self.chart.setTitle(self.caption, color=self._fg, size="9pt")

    def _draw_chart(self, m: LookupMeasurement) -> None:
        rows = []
        for b in m.batches:
            n = b.batch
            rows += [(f"gather, {n:,}", b.gather_s, ACCENT, ""),
                     (f"one-hot @ E, {n:,}", b.onehot_s, ERROR, f"  ({b.ratio:,.0f}×)"),
                     (f"nn.Linear, {n:,}", b.linear_s, THIRD_PATH, "")]
        rows = rows[:len(self.chart_texts)]
        logs = np.log10([max(r[1], 1e-9) for r in rows])
        base = np.floor(logs.min()) - 0.3
        top = logs.max() + 3.1
        ys = list(range(len(rows)))[::-1]
        self.chart_bars.setOpts(x0=[base] * len(rows), y=ys, width=list(logs - base), height=0.7,
                                brushes=[pg.mkBrush(r[2]) for r in rows], pens=[pg.mkPen(None)] * len(rows))
        for t, (_name, s, _c, extra), y, lg in zip(self.chart_texts, rows, ys, logs):
            t.setText(f" {format_seconds(s)}{extra}")
            t.setPos(lg, y)
            t.show()
        for t in self.chart_texts[len(rows):]:
            t.hide()
        self.chart.getAxis("left").setTicks([[(y, r[0]) for y, r in zip(ys, rows)], []])
        self.chart.getAxis("bottom").setTicks(
            [[(k, short_seconds(10.0**k)) for k in range(int(np.ceil(base)), int(top) + 1)], []])
        self.chart.setXRange(base, top, padding=0)
        self.chart.setYRange(-0.6, len(rows) - 0.4, padding=0)
