"""The two ways to get row i of E, side by side and in step: a one-hot vector
times E (walks through every row, multiplying almost all of them by zero)
versus a pointer offset (one address, one jump, d values copied). Below, the
real measurement of both on the loaded table."""

from __future__ import annotations

import html

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from superqt.utils import signals_blocked

from ..core.errors import user_message
from ..core import animation as anim
from ..core.lookup import DTYPE_CHOICES, compare_table_paths, measure_lookup_job, row_layout, stored_base
from ..core.tokens import display_piece
from ..state import AppState
from .style import ACCENT, DIVERGING, ERROR, SPACING, mono_font, plot_colors, style_plot

#: rows shown either side of the hot row in the zoomed window
ZOOM_HALF = 3
#: a table with at most this many rows is shown whole in the zoomed window
SMALL_V = 12
#: pixels (bins) of the compressed one-hot strip
STRIP_BINS = 800
#: output values are written as numbers when d is at most this
SMALL_D = 12
#: the on-GUI-thread equality check runs on tables up to this many values
CHECK_LIMIT = 60_000_000
SPEEDS = ((0.25, "¼×"), (0.5, "½×"), (1.0, "1×"), (2.0, "2×"), (5.0, "5×"), (20.0, "20×"))
TICK_MS = 33

_WASTED = (150, 150, 150)
_PENDING = (225, 225, 225)
_SWEEP = (209, 73, 91)


def _hex(n: int) -> str:
    return f"0x{n:X}"


def _fmt_s(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


class LookupView(QWidget):
    """One-hot product versus pointer offset, animated, then measured.

    Signals
    -------
    animation_finished()
        The one-hot walk reached the last row.
    """

    animation_finished = Signal()

    def __init__(self, state: AppState, runner=None, parent=None):
        super().__init__(parent)
        self._state = state
        # the app marks the view inactive while its tab is hidden (set_active);
        # work that arrives meanwhile is remembered as stale and done when shown
        self._active = True
        self._stale = False
        self._runner = runner
        self._schedule: anim.WalkSchedule | None = None
        self._hot = -1
        self._hot_row = np.zeros(0, np.float32)
        self._window_ids = np.zeros(0, np.int64)
        self._t = 0.0
        self._playing = False
        self._anchor_wall = 0.0
        self._anchor_t = 0.0
        self._speed = 1.0
        self._dtype = "stored"
        self._base: int | None = None
        self._base_what = ""
        self._base_keep = None
        self._comparison = None
        self._result: dict | None = None
        self._last_frame: anim.Frame | None = None
        self._right_ticks = None
        self._emitted_finished = False
        self._resume_after_measure = False
        self._lim = 1.0
        bg, fg = plot_colors()
        self._fg = fg

        lay = QStackedLayout(self)
        self.empty = QLabel("Open a model and click a token to see how its row of E is looked up")
        self.empty.setObjectName("EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        lay.addWidget(self.empty)
        content = QWidget()
        lay.addWidget(content)
        self._stack = lay
        self._content = content
        outer = QVBoxLayout(content)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)

        # -- controls -----------------------------------------------------------------------
        ctl = QHBoxLayout()
        ctl.setSpacing(SPACING)
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Play or pause the animation of both paths")
        self.play_button.clicked.connect(self._on_play_button_clicked)
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Pause and move on by one row (a block of rows where they race by)")
        self.step_button.clicked.connect(self._on_step_button_clicked)
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Start both paths again from the first row")
        self.restart_button.clicked.connect(self._on_restart_button_clicked)
        self.speed_combo = QComboBox()
        for value, text in SPEEDS:
            self.speed_combo.addItem(text, value)
        self.speed_combo.setCurrentIndex(2)
        self.speed_combo.setToolTip("Animation speed (1× walks 50,000 rows in about 15 s)")
        self.speed_combo.currentIndexChanged.connect(self._on_speed_combo_changed)
        self.dtype_combo = QComboBox()
        self.dtype_combo.setToolTip(
            "Element type of the table: changes bytes per value, the row stride d × itemsize, "
            "the offset of the row and the bytes read")
        self.dtype_combo.currentIndexChanged.connect(self._on_dtype_combo_changed)
        ctl.addWidget(self.play_button)
        ctl.addWidget(self.step_button)
        ctl.addWidget(self.restart_button)
        speed_label = QLabel("Speed")
        ctl.addSpacing(SPACING)
        ctl.addWidget(speed_label)
        ctl.addWidget(self.speed_combo)
        ctl.addSpacing(SPACING)
        ctl.addWidget(QLabel("Stored as"))
        ctl.addWidget(self.dtype_combo)
        ctl.addSpacing(SPACING)
        self.title = QLabel()
        self.title.setTextFormat(Qt.RichText)
        self.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.title.setMinimumWidth(40)
        ctl.addWidget(self.title, 1)
        outer.addLayout(ctl)

        # -- the two paths ------------------------------------------------------------------
        split = QSplitter(Qt.Horizontal)
        split.setChildrenCollapsible(False)
        self.splitter = split
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, SPACING // 2, 0)
        ll.setSpacing(SPACING // 2)
        self.left_title = QLabel("<b>One-hot vector × E</b>")
        self.left_title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.left_title.setMinimumWidth(40)
        self.left_title.setToolTip("x = one_hot(i), length V; output = x @ E = Σ_r x[r] · E[r]")
        ll.addWidget(self.left_title)
        self.now_label = QLabel()
        self.now_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.now_label.setMinimumWidth(40)
        self.now_label.setToolTip("What the matrix product is doing at this moment")
        ll.addWidget(self.now_label)
        self.left_glw = pg.GraphicsLayoutWidget()
        self.left_glw.setBackground(bg)
        self.left_glw.ci.setContentsMargins(2, 2, 2, 2)
        self.left_glw.ci.setSpacing(2)
        ll.addWidget(self.left_glw, 1)
        self.left_counters = QLabel()
        self.left_counters.setFont(mono_font())
        self.left_counters.setTextFormat(Qt.RichText)
        self.left_counters.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.left_counters.setMinimumWidth(40)
        self.left_counters.setToolTip(
            "A multiply-add is one multiplication and one addition (2 FLOPs).\n"
            "The one-hot product does d of them for every one of the V rows: 2·V·d FLOPs per token.")
        ll.addWidget(self.left_counters)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(SPACING // 2, 0, 0, 0)
        rl.setSpacing(SPACING // 2)
        self.right_title = QLabel("<b>Pointer offset</b> (nn.Embedding): jump to row i, copy d values")
        self.right_title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.right_title.setMinimumWidth(40)
        self.right_title.setToolTip("address of row i = base + i × d × itemsize; then copy d values")
        rl.addWidget(self.right_title)
        self.formula = QLabel()
        self.formula.setFont(mono_font(9))
        self.formula.setTextFormat(Qt.RichText)
        self.formula.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.formula.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.formula.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.formula.setMinimumWidth(40)
        rl.addWidget(self.formula)
        self.right_glw = pg.GraphicsLayoutWidget()
        self.right_glw.setBackground(bg)
        self.right_glw.ci.setContentsMargins(2, 2, 2, 2)
        self.right_glw.ci.setSpacing(2)
        rl.addWidget(self.right_glw, 1)
        self.right_counters = QLabel()
        self.right_counters.setFont(mono_font())
        self.right_counters.setTextFormat(Qt.RichText)
        self.right_counters.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.right_counters.setMinimumWidth(40)
        self.right_counters.setToolTip("The pointer path does no arithmetic on the values: 0 FLOPs.\n"
                                       "It reads one row: d × itemsize bytes.")
        rl.addWidget(self.right_counters)
        split.addWidget(left)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([500, 400])
        outer.addWidget(split, 1)

        self.verdict = QLabel()
        # no word wrap here: a height-for-width label makes the scroll area size the view by its size hint
        self.verdict.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.verdict.setMinimumWidth(40)
        self.verdict.setTextFormat(Qt.RichText)
        self.verdict.setToolTip("A real check on the loaded table: one_hot(i) @ E compared with E[i], value by value")
        outer.addWidget(self.verdict)

        # -- measurement --------------------------------------------------------------------
        mrow = QHBoxLayout()
        mrow.setSpacing(SPACING)
        self.measure_button = QPushButton("Measure")
        self.measure_button.setToolTip(
            "Time torch's gather (nn.Embedding), one-hot @ E and a bias-free nn.Linear on one-hot inputs "
            "on the loaded table, for 1 token and for 64 tokens, and check that all three agree")
        self.measure_button.clicked.connect(self._on_measure_button_clicked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the measurement")
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)

        self.progress.setToolTip("Progress of the measurement")
        self.measure_status = QLabel("Press Measure to time both ways on this table")
        self.measure_status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.measure_status.setMinimumWidth(40)
        self.measure_status.setTextFormat(Qt.RichText)

        mcol = QVBoxLayout()
        mcol.setSpacing(SPACING // 2)
        brow = QHBoxLayout()
        brow.addWidget(self.measure_button)
        brow.addWidget(self.cancel_button)
        brow.addWidget(self.progress, 1)
        mcol.addLayout(brow)
        mcol.addWidget(self.measure_status)
        mleft = QWidget()
        mleft.setLayout(mcol)
        mleft.setFixedWidth(360)
        mcol.setContentsMargins(0, 0, 0, 0)
        mrow.addWidget(mleft, 0, Qt.AlignTop)
        outer.addLayout(mrow)
        self.results = QWidget()
        res = QHBoxLayout(self.results)
        res.setContentsMargins(0, 0, 0, 0)
        res.setSpacing(SPACING)
        self.measure_table = QLabel()
        self.measure_table.setFont(mono_font())
        self.measure_table.setTextFormat(Qt.RichText)
        self.measure_table.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.measure_table.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        self.measure_table.setToolTip("Median times per call; ratio = one-hot time / gather time")
        mcol.addWidget(self.measure_table)
        self.chart_glw = pg.GraphicsLayoutWidget()
        self.chart_glw.setBackground(bg)
        self.chart_glw.setFixedHeight(150)
        self.chart = self.chart_glw.addPlot()
        self.chart.setMenuEnabled(False)
        self.chart.setMouseEnabled(False, False)
        self.chart.hideButtons()
        self.chart.setTitle("Time per call, log scale (shorter is faster)", color=fg, size="9pt")
        self.chart_bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brushes=[])
        self.chart.addItem(self.chart_bars)
        self.chart_texts = []
        for _ in range(6):
            t = pg.TextItem(color=fg, anchor=(0, 0.5))
            self.chart.addItem(t)
            self.chart_texts.append(t)
        style_plot(self.chart)
        res.addWidget(self.chart_glw, 1)
        mrow.addWidget(self.results, 1)
        self.measure_spacer = QWidget()
        mrow.addWidget(self.measure_spacer, 1)
        self.results.hide()

        self._build_left_plots()
        self._build_right_plots()

        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)

        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        if runner is not None:
            runner.progressed.connect(self._on_runner_progressed)
            runner.succeeded.connect(self._on_runner_succeeded)
            runner.failed.connect(self._on_runner_failed)
            runner.cancelled.connect(self._on_runner_cancelled)
            runner.running_changed.connect(self._on_runner_running_changed)
        else:
            self.measure_button.setEnabled(False)
            self.measure_status.setText("Measuring needs a background worker (not available here)")
        if state.table is not None:
            self._on_state_model_changed(state.table)
            self._on_state_selected_token_changed(state.selected_id)
        self._show_empty()

    # -- building --------------------------------------------------------------------------
    def _plot(self, glw: pg.GraphicsLayoutWidget, row: int, title: str) -> pg.PlotItem:
        p = glw.addPlot(row=row, col=0)
        if title:
            p.setTitle(title, color=self._fg, size="9pt")
        p.setMenuEnabled(False)
        p.setMouseEnabled(False, False)
        p.hideButtons()
        style_plot(p)
        return p

    def _build_left_plots(self) -> None:
        cmap = pg.colormap.get(DIVERGING)
        # the compressed one-hot strip
        self.strip_plot = self._plot(self.left_glw, 0, "")
        self.strip_img = pg.ImageItem()
        self.strip_plot.addItem(self.strip_img)
        self.strip_cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ERROR, width=2))
        self.strip_plot.addItem(self.strip_cursor)
        self.strip_hot = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ACCENT, width=3))
        self.strip_plot.addItem(self.strip_hot)
        self.strip_label = pg.TextItem(color=ACCENT, anchor=(0, 0.5), fill=pg.mkBrush(255, 255, 255, 200))
        bold = QFont(self.font())
        bold.setBold(True)
        self.strip_label.setFont(bold)
        self.strip_label.setZValue(10)
        self.strip_plot.addItem(self.strip_label, ignoreBounds=True)
        # the zoomed window: rows of E next to their one-hot entries
        self.zoom_plot = self._plot(self.left_glw, 1, "")
        self.zoom_plot.invertY(True)
        self.zoom_plot.showAxis("right")
        self.zoom_img = pg.ImageItem()
        self.zoom_img.setColorMap(cmap)
        self.zoom_plot.addItem(self.zoom_img)
        self.zoom_shade = pg.ImageItem()
        self.zoom_plot.addItem(self.zoom_shade)
        self.zoom_shade.setZValue(5)
        pen = pg.mkPen(ACCENT, width=3)
        pen.setCosmetic(True)
        self.zoom_hot = QGraphicsRectItem()
        self.zoom_hot.setPen(pen)
        self.zoom_hot.setZValue(8)
        self.zoom_plot.addItem(self.zoom_hot)
        cur_pen = pg.mkPen(ERROR, width=2)
        cur_pen.setCosmetic(True)
        self.zoom_cur = QGraphicsRectItem()
        self.zoom_cur.setPen(cur_pen)
        self.zoom_cur.setBrush(pg.mkBrush(209, 73, 91, 60))
        self.zoom_cur.setZValue(9)
        self.zoom_plot.addItem(self.zoom_cur)
        self.zoom_gap = pg.TextItem(color="#202020", anchor=(0.5, 0.5))
        self.zoom_gap.setZValue(10)
        self.zoom_plot.addItem(self.zoom_gap, ignoreBounds=True)
        self.zoom_texts = self._make_value_texts(self.zoom_plot, 3 * SMALL_V * 4)
        # the output vector of the product
        self.left_out_plot = self._plot(self.left_glw, 2, "")
        self.left_out_plot.showAxis("right")
        self.left_out_img = pg.ImageItem()
        self.left_out_img.setColorMap(cmap)
        self.left_out_plot.addItem(self.left_out_img)
        self.left_out_texts = self._make_value_texts(self.left_out_plot)
        self.left_out_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=1))
        self.left_out_plot.addItem(self.left_out_curve)
        for plot in (self.strip_plot, self.zoom_plot, self.left_out_plot):
            plot.showAxis("left")
            plot.showAxis("right")
            plot.getAxis("left").setWidth(112)
            plot.getAxis("right").setWidth(92)
        for plot in (self.strip_plot, self.left_out_plot):
            plot.getAxis("right").setStyle(showValues=False)
            plot.getAxis("right").setPen(pg.mkPen(None))
            plot.setMinimumHeight(40)
        self.strip_plot.setMaximumHeight(64)
        self.left_out_plot.setMaximumHeight(40)
        self.strip_plot.getAxis("left").setTicks([[(0.5, "x = one_hot(i)")], []])
        self.left_out_plot.getAxis("left").setTicks([[(0.5, "x @ E =")], []])
        self.left_out_plot.hideAxis("bottom")
        lay = self.left_glw.ci.layout
        lay.setRowStretchFactor(0, 1)
        lay.setRowStretchFactor(1, 6)
        lay.setRowStretchFactor(2, 1)

    def _make_value_texts(self, plot: pg.PlotItem, n: int = SMALL_D) -> list[pg.TextItem]:
        texts = []
        for _ in range(n):
            t = pg.TextItem(color="#202020", anchor=(0.5, 0.5))
            t.setZValue(10)
            plot.addItem(t, ignoreBounds=True)
            texts.append(t)
        return texts

    def _build_right_plots(self) -> None:
        cmap = pg.colormap.get(DIVERGING)
        self.mem_plot = self._plot(self.right_glw, 0, "The whole table: one contiguous block of memory")
        self.mem_plot.hideAxis("left")
        self.mem_table = QGraphicsRectItem()
        self.mem_table.setPen(pg.mkPen(self._fg, width=1))
        self.mem_table.setBrush(pg.mkBrush(*_PENDING))
        self.mem_plot.addItem(self.mem_table)
        self.mem_bounds = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(150, 150, 150, 255, width=1))
        self.mem_plot.addItem(self.mem_bounds)
        self.mem_row = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ACCENT, width=3))
        self.mem_plot.addItem(self.mem_row)
        self.mem_arrow = pg.ArrowItem(angle=-90, headLen=14, tipAngle=40, brush=pg.mkBrush(ERROR), pen=None)
        self.mem_plot.addItem(self.mem_arrow)
        self.mem_jump = pg.PlotDataItem(pen=pg.mkPen(ERROR, width=2, style=Qt.DashLine))
        self.mem_plot.addItem(self.mem_jump)
        self.mem_plot.setYRange(-0.6, 2.6, padding=0)
        self.mem_plot.getAxis("bottom").setStyle(showValues=False)
        self.mem_plot.getAxis("bottom").setPen(pg.mkPen(None))
        self.mem_plot.getAxis("bottom").setHeight(4)
        self.mem_labels = []
        for anchor in ((0, 0.5), (1, 0.5), (0, 0.5)):
            t = pg.TextItem(color=self._fg, anchor=anchor)
            f8 = QFont(self.font())
            f8.setPointSize(8)
            t.setFont(f8)
            self.mem_plot.addItem(t, ignoreBounds=True)
            self.mem_labels.append(t)

        self.near_plot = self._plot(self.right_glw, 1, "Around the row: each row is one stride of bytes")
        self.near_plot.hideAxis("left")
        self.near_rects = []
        self.near_texts = []
        for _ in range(5):
            r = QGraphicsRectItem()
            r.setPen(pg.mkPen(self._fg, width=1))
            self.near_plot.addItem(r)
            self.near_rects.append(r)
            t = pg.TextItem(color="#202020", anchor=(0.5, 0.5))
            f8 = QFont(self.font())
            f8.setPointSize(8)
            t.setFont(f8)
            self.near_plot.addItem(t, ignoreBounds=True)
            self.near_texts.append(t)
        self.near_fill = QGraphicsRectItem()
        self.near_fill.setPen(pg.mkPen(None))
        self.near_fill.setBrush(pg.mkBrush(ACCENT))
        self.near_fill.setZValue(3)
        self.near_plot.addItem(self.near_fill)
        self.near_plot.setYRange(-0.1, 1.1, padding=0)

        self.right_out_plot = self._plot(self.right_glw, 2, "")
        self.right_out_plot.getAxis("left").setTicks([[(0.5, "E[i] =")], []])
        self.right_out_plot.getAxis("left").setWidth(50)
        self.right_out_plot.hideAxis("bottom")
        self.right_out_plot.setMinimumHeight(40)
        self.right_out_img = pg.ImageItem()
        self.right_out_img.setColorMap(cmap)
        self.right_out_plot.addItem(self.right_out_img)
        self.right_out_texts = self._make_value_texts(self.right_out_plot)
        self.right_out_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=1))
        self.right_out_plot.addItem(self.right_out_curve)
        lay = self.right_glw.ci.layout
        lay.setRowStretchFactor(0, 3)
        lay.setRowStretchFactor(1, 3)
        lay.setRowStretchFactor(2, 2)
        self.right_out_plot.setMaximumHeight(40)

    # -- state ------------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        """A new table: forget the base address, the measurement and the walk."""
        if self._runner is not None and self._runner.running:
            self._runner.cancel()
        self._base, self._base_keep, self._base_what = None, None, ""
        self._result = None
        self._draw_measurement()
        self.measure_status.setText("Press Measure to time both ways on this table")
        self.progress.setValue(0)
        with signals_blocked(self.dtype_combo):
            self.dtype_combo.clear()
            if table is not None:
                for name in DTYPE_CHOICES:
                    if name == "stored":
                        self.dtype_combo.addItem(f"as stored ({table.dtype})", "stored")
                    elif name != table.dtype:
                        self.dtype_combo.addItem(name, name)
            self.dtype_combo.setCurrentIndex(0)
        self._dtype = "stored"
        self._schedule = None
        self._hot = -1
        self._show_empty()

    def set_active(self, active: bool) -> None:
        """The app marks the view inactive while its tab is hidden: selections
        are then only remembered, and the walk is rebuilt when it is shown."""
        self._active = bool(active)
        if self._active and self._stale:
            self._stale = False
            self._on_state_selected_token_changed(self._state.selected_id)

    def _on_state_selected_token_changed(self, token_id: int) -> None:
        """Follow the selected token: new hot row, new walk, started from the top."""
        if not self._active:
            self._stale = True
            self.pause()
            return
        table = self._state.table
        if table is None or not 0 <= token_id < table.vocab_size:
            self._schedule = None
            self._hot = -1
            self.pause()
            self._show_empty()
            return
        self._hot = int(token_id)
        self._schedule = anim.make_schedule(table.vocab_size, table.dim, self._hot)
        self._hot_row = table.row(self._hot)
        self._prepare_window(table)
        self._comparison = compare_table_paths(table, self._hot) if table.params <= CHECK_LIMIT else None
        self._show_verdict()
        self._stack.setCurrentWidget(self._content)
        self._update_layout()
        self._t = 0.0
        self._emitted_finished = False
        self._right_ticks = None
        if self._runner is not None and self._runner.running:
            self._resume_after_measure = True  # starts when the measurement ends
        else:
            self.play()
        self._render()

    def _show_empty(self) -> None:
        if self._schedule is None:
            table = self._state.table
            self.empty.setText("Open a model to see how a row of E is looked up (Ctrl+O)" if table is None
                               else "Click a token to see the two ways of looking up its row of E")
            self._stack.setCurrentWidget(self.empty)

    # -- the static parts for one token -----------------------------------------------------
    def _prepare_window(self, table) -> None:
        v, d, hot = table.vocab_size, table.dim, self._hot
        if v <= SMALL_V:
            ids = np.arange(v)
        else:
            lo = max(0, min(hot - ZOOM_HALF, v - 2 * ZOOM_HALF - 1))
            ids = np.arange(lo, min(v, lo + 2 * ZOOM_HALF + 1))

        self._window_ids = ids.astype(np.int64)
        rows = table.rows(self._window_ids)
        finite = rows[np.isfinite(rows)]
        lim = float(np.max(np.abs(finite))) if finite.size else 1.0
        self._lim = lim if lim > 0 else 1.0
        n = len(ids)
        # rows are drawn at display positions 0..n-1 (a gap row is left after 0, 1 when they jump)
        self._ypos = np.arange(n, dtype=float)
        if n > 2 and ids[2] - ids[1] > 1:
            self._ypos[2:] += 1.0
        img = np.full((int(self._ypos[-1]) + 1, d), np.nan, np.float32)
        img[self._ypos.astype(int)] = rows
        self.zoom_img.setImage(img, levels=(-self._lim, self._lim), autoLevels=False)
        self.zoom_img.setRect(QRectF(0, 0, d, img.shape[0]))
        if n > 2 and ids[2] - ids[1] > 1:
            self.zoom_gap.setText(f"⋮  rows 2 … {ids[2] - 1:,}: all multiplied by 0")
            self.zoom_gap.setPos(d / 2, 2.5)
            self.zoom_gap.show()
        else:
            self.zoom_gap.hide()
        ticks = []
        for k, i in enumerate(ids):
            piece = display_piece(table.piece(int(i)))
            piece = piece if len(piece) <= 6 else piece[:5] + "…"
            x = 1 if i == self._hot else 0
            name = f"{i:,}" if piece == str(i) else f"{piece} {i:,}"
            ticks.append((self._ypos[k] + 0.5, f"{name}  x={x} ×"))
        self.zoom_plot.getAxis("left").setTicks([ticks, []])
        hk = int(np.nonzero(ids == self._hot)[0][0])
        self.zoom_hot.setRect(QRectF(0, self._ypos[hk], d, 1))
        self.zoom_plot.setRange(xRange=(0, d), yRange=(0, img.shape[0]), padding=0.02)
        if d <= 40:
            step = 1 if d <= 16 else 5
            self.zoom_plot.getAxis("bottom").setTicks([[(j + 0.5, str(j)) for j in range(0, d, step)], []])
        else:
            self.zoom_plot.getAxis("bottom").setTicks(None)
        # outputs
        for plot in (self.left_out_plot, self.right_out_plot):
            plot.setRange(xRange=(0, d), yRange=(0, 1), padding=0.02)
            plot.getAxis("bottom").setTicks(self.zoom_plot.getAxis("bottom")._tickLevels)
        for img_item in (self.left_out_img, self.right_out_img):
            img_item.setRect(QRectF(0, 0, d, 1))
        # the strip
        self.strip_plot.setRange(xRange=(0, v), yRange=(0, 1), padding=0.01)
        self.strip_plot.getAxis("bottom").setStyle(showValues=v <= 20)
        self.strip_plot.getAxis("bottom").setTicks([[(r + 0.5, str(r)) for r in range(v)] if v <= 20 else [], []])
        self.strip_label.setText(f"x[{hot:,}] = 1")
        self.strip_label.setAnchor((0, 0.5) if hot < v / 2 else (1, 0.5))
        self.strip_label.setPos(hot + 0.5 + (v * 0.01 if hot < v / 2 else -v * 0.01), 0.5)
        self.strip_label.setVisible(v > 20)
        self.strip_hot.setValue(hot + 0.5)
        self.left_title.setText(f"<b>One-hot vector × E</b>: x has V = {v:,} entries, all 0 but "
                                f"<b style='color:{ACCENT}'>x[{hot:,}] = 1</b>")
        # values written in the cells of small tables
        small = len(ids) * d <= len(self.zoom_texts) and d <= SMALL_D
        for k, t in enumerate(self.zoom_texts):
            if small and k < len(ids) * d:
                r, c = divmod(k, d)
                val = rows[r, c]
                t.setText(f"{val:+.2f}")
                t.setColor(QColor("#ffffff") if abs(val) > 0.55 * self._lim else QColor("#202020"))
                t.setPos(c + 0.5, self._ypos[r] + 0.5)
                t.show()
            else:
                t.hide()
        token = display_piece(table.piece(hot))
        self.title.setText(f"Row <b style='color:{ACCENT}'>{hot:,}</b> of E, token "
                           f"<b style='color:{ACCENT}'>{html.escape(token, quote=False)}</b>")

    def _update_layout(self) -> None:
        """The pointer path's numbers for the chosen dtype (stride, offset, bytes)."""
        table = self._state.table
        if table is None or self._hot < 0:
            return
        self._ensure_base()
        lay = row_layout(table.vocab_size, table.dim, self._hot, self._dtype, table.dtype, table.row_bytes)
        self._layout = lay
        v = table.vocab_size
        stored = self._dtype == "stored"
        self.mem_table.setRect(QRectF(0, 0.3, lay.table_bytes, 0.9))
        if v <= 64:
            xs = np.repeat(np.arange(1, v) * lay.stride, 2).astype(float)
            ys = np.tile([0.3, 1.2], v - 1)
            self.mem_bounds.setData(xs, ys)
        else:
            self.mem_bounds.setData([], [])
        self.mem_row.setValue(lay.offset + lay.stride / 2)
        self.mem_plot.setRange(xRange=(0, lay.table_bytes), padding=0.02)
        self.mem_plot.setTitle(f"Whole table, one block: {lay.table_bytes:,} B", size="9pt")
        start, end, row_lab = self.mem_labels
        start.setText(" base")
        start.setPos(0, 0.75)
        end.setText(f"base + {lay.table_bytes:,} B ")
        end.setPos(lay.table_bytes, 0.75)
        right_half = lay.offset > lay.table_bytes / 2
        row_lab.setAnchor((1, 0.5) if right_half else (0, 0.5))
        row_lab.setText(f"row {self._hot:,} at base + {_hex(lay.offset)} " if right_half
                        else f"  row {self._hot:,} at base + {_hex(lay.offset)}")
        row_lab.setColor(QColor(ACCENT).darker(130))
        row_lab.setPos(lay.offset + lay.stride / 2, 2.1)
        # rows around the hot one
        lo = max(0, min(self._hot - 2, v - 5))
        rows = list(range(lo, min(v, lo + 5)))
        for k, (rect, text) in enumerate(zip(self.near_rects, self.near_texts)):
            if k < len(rows):
                r = rows[k]
                rect.setRect(QRectF(r * lay.stride, 0, lay.stride, 1))
                hot = r == self._hot
                rect.setBrush(pg.mkBrush(QColor(ACCENT).lighter(170)) if hot else pg.mkBrush(*_PENDING))
                rect.setPen(pg.mkPen(ACCENT if hot else self._fg, width=2 if hot else 1))
                text.setText(f"row {r:,}")
                text.setColor(QColor("#000000") if hot else QColor("#404040"))
                text.setPos(r * lay.stride + lay.stride / 2, 0.5)
                text.setZValue(6)
                rect.show()
                text.show()
            else:
                rect.hide()
                text.hide()
        x0, x1 = rows[0] * lay.stride, (rows[-1] + 1) * lay.stride
        self.near_plot.setRange(xRange=(x0, x1), padding=0.02)
        self.near_plot.getAxis("bottom").setTicks(
            [[(r * lay.stride, f"+{_hex(r * lay.stride)}") for r in (self._hot, self._hot + 1)], []])
        self.near_plot.setTitle(f"Around row {self._hot:,}: one row = {lay.stride:,} B", size="9pt")
        d = table.dim
        size_txt = f"{lay.itemsize:g}" if not lay.quantised else f"{lay.stride:,}/{d:,}"
        if stored and self._base is not None:
            base_txt = _hex(self._base)
            addr = _hex(self._base + lay.offset)
        else:
            base_txt = "base"
            addr = f"base + {_hex(lay.offset)}"
        stride_expr = (f"{d:,} × {int(lay.itemsize)} B" if not lay.quantised else f"{lay.stride:,} B (row_bytes)")
        lines = [
            f"stride  = d × itemsize = {stride_expr} = <b>{lay.stride:,} B</b>",
            f"offset  = i × stride = {self._hot:,} × {lay.stride:,}",
            f"        = <b>{lay.offset:,} B = {_hex(lay.offset)}</b>",
            f"address = base + offset = {base_txt} + {_hex(lay.offset)}",
            f"        = <b style='color:{ACCENT}'>{addr}</b>",
        ]
        self._formula_lines = lines
        if stored and self._base is not None:
            note = f"base = {self._base_what}"
        elif stored:
            note = "base = where the table starts in memory"
        else:
            article = "an" if lay.dtype[:1] in "aeiou" else "a"  # an int8, a float16
            note = f"{article} {lay.dtype} copy of E starts at its own base;<br>the offset is what changes"
        if lay.quantised:
            note += f"<br>{html.escape(lay.note.split(';')[0], quote=False)}"
        self._formula_note = note
        self.formula.setToolTip(f"itemsize = bytes per value ({size_txt}); {lay.note}")
        self._render()

    def _ensure_base(self) -> None:
        """The real data pointer of the stored tensor, read once per model."""
        table = self._state.table
        if table is None or self._base is not None or not table.fits_in_memory:
            return
        try:
            self._base, self._base_keep, self._base_what = stored_base(table)
        except Exception:  # a table that cannot be turned into a tensor: offsets only
            self._base, self._base_keep = None, None

    def _show_verdict(self) -> None:
        c = self._comparison
        d = self._state.table.dim if self._state.table is not None else 0
        if c is None:
            self.verdict.setText("This table is too big to multiply on every click; "
                                 "<b>Measure</b> checks that the paths agree.")
        elif c.equal:
            self.verdict.setText(
                f"<span style='color:{ACCENT}; font-size:12pt'>✔ <b>Both outputs are identical</b></span>: "
                f"one_hot({self._hot:,}) @ E == E[{self._hot:,}] in all {d:,} values (checked on the loaded table)")
        else:
            self.verdict.setText(f"<span style='color:{ERROR}; font-size:12pt'>✘ <b>The outputs differ</b></span>: "
                                 f"{html.escape(c.message, quote=False)}")

    # -- animation --------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def schedule(self) -> anim.WalkSchedule | None:
        return self._schedule

    @property
    def frame(self) -> anim.Frame | None:
        """The frame on screen (None without a selected token)."""
        return self._last_frame

    @property
    def layout_info(self):
        """The pointer path's RowLayout for the chosen dtype."""
        return getattr(self, "_layout", None)

    def play(self) -> None:
        if self._schedule is None:
            return
        if self._t >= self._schedule.total_s:
            self._t = 0.0
            self._emitted_finished = False
        if self._playing:
            self._t = self._current_time()
        self._playing = True
        self._anchor()
        self.play_button.setText("Pause")
        if self.isVisible():
            self._timer.start()

    def pause(self) -> None:
        if self._playing and self._schedule is not None:
            self._t = min(self._current_time(), self._schedule.total_s)
            self._render()
        self._playing = False
        self._timer.stop()
        self.play_button.setText("Play")

    def seek(self, fraction: float) -> None:
        """Show the animation at ``fraction`` (0..1) of its length; keeps playing or paused."""
        if self._schedule is None:
            return
        self.seek_time(self._schedule.time_at_fraction(fraction))

    def seek_time(self, seconds: float) -> None:
        """Show the animation ``seconds`` (at speed 1) after its start."""
        if self._schedule is None:
            return
        self._t = float(min(max(seconds, 0.0), self._schedule.total_s))
        if self._t < self._schedule.total_s:
            self._emitted_finished = False
        self._anchor()
        self._render()

    def step(self) -> None:
        """Pause and move on by one row (or one block of fast rows)."""
        if self._schedule is None:
            return
        self.pause()
        self.seek_time(self._schedule.next_stop(self._t))

    def restart(self) -> None:
        self.seek_time(0.0)
        self.play()

    def set_speed(self, speed: float) -> None:
        self._t = self._current_time()
        self._speed = float(speed)
        self._anchor()

    def _anchor(self) -> None:
        self._anchor_wall = time.perf_counter()
        self._anchor_t = self._t

    def _current_time(self) -> float:
        if not self._playing:
            return self._t
        return self._anchor_t + (time.perf_counter() - self._anchor_wall) * self._speed

    def _on_timer_timeout(self) -> None:
        """Advance to the frame of the current time."""
        if self._schedule is None or not self._playing:
            self._timer.stop()
            return
        self._t = min(self._current_time(), self._schedule.total_s)
        self._render()
        if self._t >= self._schedule.total_s:
            self.pause()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._playing and self._schedule is not None:
            self._anchor()  # carry on from where it was hidden, no jump
            self._timer.start()
        if self._base is None and self._hot >= 0:
            QTimer.singleShot(0, self._update_layout)

    def hideEvent(self, event) -> None:
        super().hideEvent(event)
        if self._playing:
            self._t = self._current_time()
        self._timer.stop()

    # -- controls ---------------------------------------------------------------------------
    def _on_play_button_clicked(self) -> None:
        self.pause() if self._playing else self.play()

    def _on_step_button_clicked(self) -> None:
        self.step()

    def _on_restart_button_clicked(self) -> None:
        self.restart()

    def _on_speed_combo_changed(self, _index: int) -> None:
        self.set_speed(self.speed_combo.currentData() or 1.0)

    def _on_dtype_combo_changed(self, _index: int) -> None:
        self._dtype = self.dtype_combo.currentData() or "stored"
        self._update_layout()

    # -- drawing a frame --------------------------------------------------------------------
    def _render(self) -> None:
        s, table = self._schedule, self._state.table
        if s is None or table is None or not hasattr(self, "_layout"):
            return
        f = s.frame(self._t)
        self._last_frame = f
        v, d, hot = s.vocab_size, s.dim, s.hot
        lay = self._layout
        # strip
        states = anim.strip_states(f, v, hot, STRIP_BINS)
        lut = np.array([_PENDING, _WASTED, _SWEEP, QColor(ACCENT).getRgb()[:3]], np.uint8)
        self.strip_img.setImage(lut[states][None, :, :], autoLevels=False)
        self.strip_img.setRect(QRectF(0, 0, v, 1))
        self.strip_cursor.setValue(min(f.current_row, v - 1) + 0.5)
        self.strip_cursor.setVisible(not f.finished)
        # zoomed rows: shade the rows multiplied by zero, outline the current one
        ids = self._window_ids
        n_img = int(self._ypos[-1]) + 1
        shade = np.zeros((n_img, 1, 4), np.uint8)
        done = ids < f.rows_done
        wasted = done & (ids != hot)
        shade[self._ypos[wasted].astype(int)] = (128, 128, 128, 190)
        if n_img > len(ids):  # the gap row stands for the rows in between
            gap_done = f.rows_done > 2
            shade[2] = (128, 128, 128, 190) if gap_done else (255, 255, 255, 0)
        self.zoom_shade.setImage(shade, autoLevels=False, levels=(0, 255))
        self.zoom_shade.setRect(QRectF(0, 0, d, n_img))
        where = np.nonzero(ids == f.current_row)[0]
        if not f.finished and where.size:
            y = self._ypos[where[0]]
            self.zoom_cur.setRect(QRectF(0, y, max(f.columns_done, 0.15 * min(d, 4)), 1))
            self.zoom_cur.show()
        else:
            self.zoom_cur.hide()
        ticks = []
        for k, i in enumerate(ids):
            if i < f.rows_done:
                txt = "→ row added" if i == hot else "→ 0, wasted"
            elif i == f.current_row:
                txt = "× now"
            else:
                txt = ""
            ticks.append((self._ypos[k] + 0.5, txt))
        if ticks != self._right_ticks:
            self._right_ticks = ticks
            self.zoom_plot.getAxis("right").setTicks([ticks, []])
        # outputs
        out_l = np.where(np.arange(d) < f.output_filled, self._hot_row, 0.0).astype(np.float32)
        out_r = np.where(np.arange(d) < f.gather_values, self._hot_row, 0.0).astype(np.float32)
        self._set_output(self.left_out_img, self.left_out_curve, self.left_out_texts, out_l, f.output_filled)
        self._set_output(self.right_out_img, self.right_out_curve, self.right_out_texts, out_r, f.gather_values)
        # now line
        if f.finished:
            now = f"Done: {v:,} rows, {v - 1:,} of them × 0"
        elif f.current_row == hot:
            now = (f"Row {hot:,} × <b style='color:{ACCENT}'>1</b>: added to the output "
                   f"({f.columns_done:,} of {d:,})")
        else:
            block = f.current_row - f.recent_start
            what = (f"rows {f.recent_start:,} – {f.current_row:,}" if block > 1 else f"row {f.current_row:,}")
            now = f"Multiplying {what} × <b>0</b>: nothing added"
        legend = (f"<span style='color:rgb{_WASTED}'>■</span> × 0 done &nbsp; "
                  f"<span style='color:rgb{_SWEEP}'>■</span> now")
        self.now_label.setText(f"{now} &nbsp; <span style='font-size:8pt'>{legend}</span>")
        # counters
        pct = 100.0 * f.zero_multiply_adds / f.multiply_adds if f.multiply_adds else 0.0
        bytes_read = f.rows_done * lay.stride + int(f.columns_done * lay.itemsize)
        w = len(f"{2 * v * d:,}")
        self.left_counters.setText(
            "<pre style='margin:0'>"
            f"multiply-adds {f.multiply_adds:>{w},}   of which × 0: "
            f"<span style='color:{ERROR}'>{f.zero_multiply_adds:,}</span> ({pct:.3f} %)\n"
            f"FLOPs so far  <b>{f.flops:>{w},}</b>   of 2·V·d = {2 * v * d:,}\n"
            f"work left     {f.work_left:>{w},}   multiply-adds · bytes read {bytes_read:,}</pre>"
        )
        # pointer path
        phase_px = lay.offset + lay.stride / 2
        if f.gather_phase == 0:
            ax = 0.0
        elif f.gather_phase == 1:
            ax = phase_px * f.gather_progress
        else:
            ax = phase_px
        self.mem_arrow.setPos(ax, 1.25)
        self.mem_jump.setData([0, ax], [1.55, 1.55]) if f.gather_phase >= 1 else self.mem_jump.setData([], [])
        fill = lay.stride * (f.gather_values / d)
        self.near_fill.setRect(QRectF(lay.offset, 0.0, fill, 0.14))
        phase_names = ("1. compute the address", "2. jump to it", "3. copy d values", "done")
        lines = []
        for k, line in enumerate(self._formula_lines):
            active = (f.gather_phase == 0 and k < 5) or (f.gather_phase == 1 and k >= 3)
            lines.append(f"<span style='background:rgba(0,163,108,50)'>{line}</span>" if active else line)
        self.formula.setText("<pre style='margin:0'>" + "\n".join(lines) + "</pre>"
                             f"<span style='font-size:8pt'>{self._formula_note}</span>")
        g_bytes = int(round(f.gather_values * lay.itemsize)) if f.gather_phase < 3 else lay.stride
        w = len(f"{lay.stride:,}")
        self.right_counters.setText(
            "<pre style='margin:0'>"
            f"step           {phase_names[f.gather_phase]}\n"
            f"FLOPs          <b>{0:>{w},}</b>\n"
            f"bytes read     {g_bytes:>{w},} of {lay.stride:,} (one row)</pre>"
        )
        if f.finished and not self._emitted_finished:
            self._emitted_finished = True
            self.animation_finished.emit()

    def _set_output(self, item: pg.ImageItem, curve: pg.PlotDataItem, texts: list[pg.TextItem],
                    values: np.ndarray, filled: int) -> None:
        d = values.size
        small = d <= SMALL_D
        item.setVisible(small)
        curve.setVisible(not small)
        if small:
            item.setImage(values[None, :], levels=(-self._lim, self._lim), autoLevels=False)
        else:  # many values: a curve (a colour strip of 768 cells would blur into one colour)
            x = np.arange(d) + 0.5
            curve.setData(x[:max(filled, 0)], 0.5 + 0.45 * values[:max(filled, 0)] / self._lim)
        for j, t in enumerate(texts):
            if j < d and small:
                t.setText(f"{values[j]:+.2f}" if j < filled else "0")
                t.setColor(QColor("#ffffff") if j < filled and abs(values[j]) > 0.55 * self._lim else QColor("#202020"))
                t.setPos(j + 0.5, 0.5)
                t.show()
            else:
                t.hide()

    # -- measuring --------------------------------------------------------------------------
    def measure(self) -> None:
        """Time the three ways on the loaded table in the background."""
        table = self._state.table
        if table is None or self._runner is None:
            return
        self._result = None
        # the animation would compete for the GIL and distort microsecond timings: hold it
        self._resume_after_measure = self._playing or self._resume_after_measure
        self.pause()
        self.measure_status.setText("Starting… (the animation waits)")
        self.progress.setValue(0)
        self._runner.start(measure_lookup_job, table, (1, 64))

    def cancel_measure(self) -> None:
        if self._runner is not None and self._runner.running:
            self._runner.cancel()

    def _on_measure_button_clicked(self) -> None:
        self.measure()

    def _on_cancel_button_clicked(self) -> None:
        self.cancel_measure()

    def _on_runner_progressed(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(1000 * fraction))
        self.measure_status.setText(message)

    def _on_runner_succeeded(self, result) -> None:
        if not isinstance(result, dict) or "batches" not in result:
            return
        self._result = result
        self.progress.setValue(1000)
        agree = all(b["agree"] for b in result["batches"])
        msg = ("All three give identical outputs." if agree else
               "The outputs differ" + (": " + result["notes"][0] if result.get("notes") else "."))
        b1 = result["batches"][0]
        self.measure_status.setText(
            f"<b>one-hot @ E took {b1['ratio']:,.0f}× as long as the gather</b><br>for {b1['batch']:,} token "
            f"on this table. {msg}")
        self.measure_status.setToolTip(f"{result['threads']} torch thread(s), median of {result['repeats']} runs "
                                       f"({result['gather_repeats']} for the gather), computed in float32")
        self._draw_measurement()

    def _on_runner_failed(self, exc: BaseException) -> None:
        message = user_message(exc)
        self.measure_status.setText(f"The measurement failed:<br>{html.escape(message, quote=False)}")
        self.measure_status.setToolTip(message)

    def _on_runner_cancelled(self) -> None:
        self.progress.setValue(0)
        self.measure_status.setText("Measurement cancelled. Press Measure to start again.")

    def _on_runner_running_changed(self, running: bool) -> None:
        self.cancel_button.setEnabled(running)
        self.measure_button.setEnabled(not running)
        if not running and self._resume_after_measure:
            self._resume_after_measure = False
            self.play()

    @property
    def measurement(self) -> dict | None:
        return self._result

    def _draw_measurement(self) -> None:
        r = self._result
        if r is None:
            self.chart_bars.setOpts(x0=[], y=[], width=[], brushes=[])
            for t in self.chart_texts:
                t.hide()
            self.measure_table.setText("")
            self.measure_table.hide()
            self.chart.getAxis("left").setTicks([[], []])
            self.results.hide()
            self.measure_spacer.show()
            return
        self.results.show()
        self.measure_spacer.hide()
        rows = []
        for b in r["batches"]:
            n = b["batch"]
            rows += [(f"gather, {n:,}", b["gather_s"], ACCENT, ""),
                     (f"one-hot @ E, {n:,}", b["onehot_s"], ERROR, f"  ({b['ratio']:,.0f}×)"),
                     (f"nn.Linear, {n:,}", b["linear_s"], "#8E6CC7", "")]
        logs = np.log10([max(x[1], 1e-9) for x in rows])
        base = np.floor(logs.min()) - 0.3
        top = logs.max() + 3.1
        ys = list(range(len(rows)))[::-1]
        self.chart_bars.setOpts(x0=[base] * len(rows), y=ys, width=list(logs - base), height=0.7,
                                brushes=[pg.mkBrush(c) for *_x, c, _ in rows], pens=[pg.mkPen(None)] * len(rows))
        for t, (name, s, _c, extra), y, lg in zip(self.chart_texts, rows, ys, logs):
            t.setText(f" {_fmt_s(s)}{extra}")
            t.setPos(lg, y)
            t.show()
        self.chart.getAxis("left").setTicks([[(y, row[0]) for y, row in zip(ys, rows)], []])
        names = {-9: "1 ns", -8: "10 ns", -7: "100 ns", -6: "1 µs", -5: "10 µs", -4: "100 µs", -3: "1 ms",
                 -2: "10 ms", -1: "100 ms", 0: "1 s", 1: "10 s", 2: "100 s"}
        self.chart.getAxis("bottom").setTicks(
            [[(k, names.get(k, f"1e{k} s")) for k in range(int(np.ceil(base)), int(top) + 1)], []])
        self.chart.setXRange(base, top, padding=0)
        self.chart.setYRange(-0.6, len(rows) - 0.4, padding=0)
        lines = ["batch    gather    one-hot   ratio equal"]
        for b in r["batches"]:
            lines.append(f"{b['batch']:>5,} {_fmt_s(b['gather_s']):>9} {_fmt_s(b['onehot_s']):>10} "
                         f"{b['ratio']:>6,.0f}×  {'yes' if b['agree'] else 'NO'}")
        self.measure_table.setText("<pre style='margin:0'>" + "\n".join(lines) + "</pre>")
        self.measure_table.show()
