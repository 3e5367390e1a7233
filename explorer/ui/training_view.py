"""Watch the table learn: a toy next-token model trained in the background,
with live charts of what happens to its embedding table (gradient sparsity,
rows that move without gradient, drift of rare rows, clusters forming)."""

from __future__ import annotations

import functools
import math
import time
from collections import deque
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers the exporters)
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGridLayout, QHBoxLayout, QLabel, QMenu,
    QPushButton, QScrollArea, QSizePolicy, QSpinBox, QToolButton, QVBoxLayout, QWidget,
)

from ..core.errors import ExplorerError, user_message
from ..core.training import (
    MAX_CORPUS_CHARS, ConfigError, TrainConfig, TrainingControl, TrainingRun, live_training_job,
    save_model_folder, synthetic_corpus, text_corpus,
)
from ..core.training_charts import (
    RASTER_CHANGED, RASTER_GRAD, AlignedPCA, TrainingHistory, binned, class_silhouette, moving_average,
)
from ..state import AppState
from .export import export_graphics
from .style import ERROR, class_color, SPACING, mono_font, plot_colors, style_plot

#: colours with one meaning in every chart of the view
GRAD_COLOR = "#0072B2"  # rows with gradient
CHANGED_COLOR = "#D55E00"  # rows that changed
TOTAL_COLOR = "#999999"  # the shared (tied) table's whole gradient
#: charts redraw at this rate from the latest data (not on every step)
FRAME_HZ = 15
#: ... but while training runs flat out the charts take at most this share of
#: the GUI thread's time, so drawing costs the training little (the worker
#: shares the GIL and, on small machines, the cores)
FRAME_DUTY = 0.05
#: the per-row charts (slow to change) redraw at most this often
ROWS_HZ = 2
#: refit the PCA basis every this many steps
PCA_EVERY = 200
#: copy of E from the worker every this many steps (drift, PCA)
SNAPSHOT_EVERY = 20
#: the raster keeps the last this many steps
RASTER_STEPS = 400
#: at most this many points per time-series curve
MAX_POINTS = 400
#: speed choices: (label, steps per second; 0 = as fast as possible)
SPEEDS = [("As fast as possible", 0.0), ("300 steps/s", 300.0), ("100 steps/s", 100.0),
          ("30 steps/s", 30.0), ("10 steps/s", 10.0)]
OPTIMIZER_LABELS = [("Adam", "adam"), ("AdamW", "adamw"), ("SGD", "sgd"), ("SparseAdam", "sparse_adam")]
CORPUS_SYNTHETIC, CORPUS_WORDS, CORPUS_MODEL = 0, 1, 2


class _TimedLayout(pg.GraphicsLayoutWidget):
    """A GraphicsLayoutWidget that remembers how long its last paint took (ms)."""

    last_paint_ms = 0.0

    def paintEvent(self, ev):
        t0 = time.perf_counter()
        super().paintEvent(ev)
        self.last_paint_ms = 1000 * (time.perf_counter() - t0)


def _nice_ceil(x: float) -> float:
    """The smallest of 1, 2, 5 x 10^k (k integer) that is >= x (x > 0), else 1."""
    if not (x > 0) or not math.isfinite(x):
        return 1.0
    k = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        v = m * 10.0 ** k
        if v >= x * (1 - 1e-12):
            return v
    return 10.0 ** (k + 1)


def _shrinkable(label: pg.LabelItem) -> None:
    """Let a plot title be narrower than its text (a long title must not widen
    the whole grid past the window; it is clipped instead)."""
    original = label.updateMin

    def update_min():
        original()
        label.setMinimumWidth(0)
        label._sizeHint[Qt.SizeHint.MinimumSize] = (0, label._sizeHint[Qt.SizeHint.MinimumSize][1])
        label._sizeHint[Qt.SizeHint.PreferredSize] = (0, label._sizeHint[Qt.SizeHint.PreferredSize][1])

    label.updateMin = update_min


def _plot(glw: pg.GraphicsLayoutWidget, row: int, col: int, title: str, left: str, bottom: str,
          fg: str) -> pg.PlotItem:
    p = glw.addPlot(row=row, col=col)
    _shrinkable(p.titleLabel)
    p.setTitle(title, color=fg, size="9pt")
    p.setLabel("left", left)
    p.setLabel("bottom", bottom)
    p.setMenuEnabled(False)
    p.disableAutoRange()  # ranges are set explicitly, in coarse steps (see _set_range)
    p.hideButtons()
    style_plot(p)
    return p


class TrainingView(QWidget):
    """Train the toy model and chart what happens to its embedding table.

    Signals
    -------
    model_saved(str)
        A trained model was saved as a folder (its path); the app opens it.
    steps_reached(int)
        The step asked for by :meth:`run_steps_then` was reached (or the run ended).
    """

    model_saved = Signal(str)
    steps_reached = Signal(int)

    def __init__(self, state: AppState, runner, parent=None):
        super().__init__(parent)
        self._state = state
        self._runner = runner
        self._control: TrainingControl | None = None
        self._run: TrainingRun | None = None
        self._history: TrainingHistory | None = None
        self._pca = AlignedPCA()
        self._pca_coords: np.ndarray | None = None
        self._pca_drawn_step = -1
        self._silhouette_init: float | None = None
        self._silhouette: float | None = None
        self._running = False
        self._dirty = False
        self._text: str = ""
        self._text_name: str = ""
        self._rate = deque(maxlen=64)  # (time, step) for the steps-per-second readout
        self._target: tuple[int, object] | None = None
        self._message = ""
        self._frame_ms = deque(maxlen=100)  # redraw durations, for the bench and the tooltip

        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self._build_controls())
        lay.addWidget(self._build_charts(), 1)

        self.frame_timer = QTimer(self)
        self.frame_timer.setInterval(int(1000 / FRAME_HZ))
        self.frame_timer.timeout.connect(self._on_frame_timer_timeout)

        runner.produced.connect(self._on_runner_produced)
        runner.progressed.connect(self._on_runner_progressed)
        runner.succeeded.connect(self._on_runner_succeeded)
        runner.failed.connect(self._on_runner_failed)
        state.model_changed.connect(self._on_state_model_changed)
        self._validate()
        self._update_buttons()

    # -- building -----------------------------------------------------------------------------
    def _build_controls(self) -> QWidget:
        panel = QWidget()
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setSpacing(SPACING - 2)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)

        self.corpus_combo = QComboBox()
        self.corpus_combo.addItems(["Synthetic language", "Text file: words", "Text file: model tokenizer"])
        self.corpus_combo.setToolTip(
            "What to train on: the synthetic language the bundled model learned (9 word classes, Zipf "
            "frequencies), or a text file split into lower-cased words, or split by the open model's tokenizer")
        self.open_text_button = QPushButton("Open text file…")
        self.open_text_button.setToolTip(f"A plain-text file (the first {MAX_CORPUS_CHARS:,} characters are used)")
        self.text_label = QLabel("no file")
        self.text_label.setWordWrap(True)
        self.text_label.setToolTip("The text file to train on")
        self.tied_combo = QComboBox()
        self.tied_combo.addItems(["Untied (own output matrix)", "Tied (output = E)"])
        self.tied_combo.setToolTip(
            "Tied: the output projection reuses E (the same tensor), so the softmax over all V logits "
            "gives every row a gradient each step (dense). Untied: only the rows of the batch's ids get one.")
        self.sparse_check = QCheckBox("Sparse gradients")
        self.sparse_check.setToolTip("nn.Embedding(sparse=True): the table's gradient holds only the rows "
                                     "that were used (needs untied output; SGD without weight decay or SparseAdam)")
        self.optimizer_combo = QComboBox()
        for label, key in OPTIMIZER_LABELS:
            self.optimizer_combo.addItem(label, key)
        self.optimizer_combo.setToolTip(
            "Adam keeps momentum, so rows keep moving after their gradient stops; AdamW's weight decay moves "
            "every row each step; SparseAdam moves only the rows that had gradient")
        self.lr_spin = QDoubleSpinBox()
        self.lr_spin.setDecimals(5)
        self.lr_spin.setRange(0.00001, 1000.0)
        self.lr_spin.setStepType(QDoubleSpinBox.AdaptiveDecimalStepType)
        self.lr_spin.setValue(0.01)
        self.lr_spin.setToolTip("Learning rate (step size). Too big and the loss diverges; the run then stops")
        self.wd_spin = QDoubleSpinBox()
        self.wd_spin.setDecimals(4)
        self.wd_spin.setRange(0.0, 10.0)
        self.wd_spin.setSingleStep(0.01)
        self.wd_spin.setToolTip("Weight decay: shrinks every row toward 0 each step, used or not "
                                "(Adam/SGD: added to the gradient; AdamW: decoupled)")
        self.batch_spin = QSpinBox()
        self.batch_spin.setRange(1, 4096)
        self.batch_spin.setValue(64)
        self.batch_spin.setToolTip("Examples per step; each has 3 context tokens. Fewer distinct ids "
                                   "per batch: a sparser gradient")
        self.dim_spin = QSpinBox()
        self.dim_spin.setRange(2, 512)
        self.dim_spin.setValue(32)
        self.dim_spin.setToolTip("d: the width of the table (columns of E)")
        self.seed_spin = QSpinBox()
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Random seed of the initial table and of the batches")
        self.steps_spin = QSpinBox()
        self.steps_spin.setRange(1, 1_000_000)
        self.steps_spin.setGroupSeparatorShown(True)
        self.steps_spin.setValue(3000)
        self.steps_spin.setToolTip("Training steps of a run")
        self.speed_combo = QComboBox()
        for label, sps in SPEEDS:
            self.speed_combo.addItem(label, sps)
        self.speed_combo.setToolTip("Slow the run down to watch single steps; changes apply at once")

        for combo in (self.corpus_combo, self.tied_combo, self.optimizer_combo, self.speed_combo):
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(8)
        form.addRow("Corpus", self.corpus_combo)
        form.addRow("", self.open_text_button)
        form.addRow("", self.text_label)
        form.addRow("Output", self.tied_combo)
        form.addRow("", self.sparse_check)
        form.addRow("Optimiser", self.optimizer_combo)
        form.addRow("Learning rate", self.lr_spin)
        form.addRow("Weight decay", self.wd_spin)
        form.addRow("Batch size", self.batch_spin)
        form.addRow("d", self.dim_spin)
        form.addRow("Seed", self.seed_spin)
        form.addRow("Steps", self.steps_spin)
        form.addRow("Speed", self.speed_combo)

        self.config_error = QLabel()
        self.config_error.setWordWrap(True)
        self.config_error.setObjectName("ErrorLine")
        self.config_error.setToolTip("Why this combination cannot train")
        self.config_error.hide()

        self.start_button = QPushButton("Start")
        self.start_button.setToolTip("Start a new run with these settings (the charts restart)")
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Hold the run between two steps; Resume continues it")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the run; the charts stay and the model can be saved")
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Stop and clear the charts")
        buttons = QGridLayout()
        buttons.setSpacing(SPACING // 2)
        for k, b in enumerate((self.start_button, self.pause_button, self.stop_button, self.reset_button)):
            b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            buttons.addWidget(b, k // 2, k % 2)

        self.save_button = QPushButton("Save as model…")
        self.save_button.setToolTip("Save the trained model as a folder (safetensors, word tokenizer, classes) "
                                    "and open it in the explorer")
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        self.export_button.setToolTip("Save the charts (PNG, SVG) or their data (CSV)")
        self.export_button.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        menu = QMenu(self.export_button)
        for text, slot in (("Charts as PNG…", self._on_export_png_triggered),
                           ("Charts as SVG…", self._on_export_svg_triggered),
                           ("Time series as CSV…", self._on_export_csv_triggered),
                           ("Rows as CSV…", self._on_export_rows_triggered)):
            act = QAction(text, menu)
            act.triggered.connect(slot)
            menu.addAction(act)
        self.export_button.setMenu(menu)
        out = QHBoxLayout()
        out.setSpacing(SPACING // 2)
        self.save_button.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        out.addWidget(self.save_button)
        out.addWidget(self.export_button)

        self.status = QLabel()
        self.status.setFont(mono_font())
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.status.setWordWrap(True)
        self.status.setToolTip(
            "step / steps of the run; speed in steps per second (recent batches); loss = mean cross-entropy "
            "of the last 50 steps, in nats (ln V: the loss of a uniform guess over V tokens); gradient = rows "
            "of E with a non-zero gradient through the input this step = the batch's distinct ids, and its share "
            "100 × rows / V; tied = rows with gradient in the shared table (all V: the softmax touches every "
            "logit); changed = rows whose values moved in this step (momentum and weight decay move rows "
            "without gradient)")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setToolTip("What happened to the last run")

        v = QVBoxLayout(panel)
        v.setContentsMargins(SPACING * 1.5, SPACING * 1.5, SPACING, SPACING * 1.5)
        v.setSpacing(SPACING)
        v.addLayout(form)
        v.addWidget(self.config_error)
        v.addLayout(buttons)
        v.addLayout(out)
        v.addWidget(self.status)
        v.addWidget(self.message)
        v.addStretch(1)

        for w in (self.corpus_combo, self.tied_combo, self.optimizer_combo):
            w.currentIndexChanged.connect(self._on_control_changed)
        self.sparse_check.toggled.connect(self._on_control_changed)
        for w in (self.lr_spin, self.wd_spin):
            w.valueChanged.connect(self._on_control_changed)
        for w in (self.batch_spin, self.dim_spin, self.seed_spin, self.steps_spin):
            w.valueChanged.connect(self._on_control_changed)
        self.speed_combo.currentIndexChanged.connect(self._on_speed_changed)
        self.open_text_button.clicked.connect(self._on_open_text_clicked)
        self.start_button.clicked.connect(self.start)
        self.pause_button.clicked.connect(self._on_pause_clicked)
        self.stop_button.clicked.connect(self.stop)
        self.reset_button.clicked.connect(self.reset)
        self.save_button.clicked.connect(self._on_save_clicked)

        scroll = QScrollArea()
        scroll.setWidget(panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setFixedWidth(272)
        return scroll

    def _build_charts(self) -> QWidget:
        bg, fg = plot_colors()
        self._fg = fg
        glw = _TimedLayout()
        glw.setBackground(bg)
        glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        glw.ci.setSpacing(SPACING)
        self.glw = glw

        self.loss_plot = _plot(glw, 0, 0, "Loss (dashed: ln V, a uniform guess)", "cross-entropy (nats)", "step", fg)
        self.loss_raw = self.loss_plot.plot(pen=pg.mkPen(QColor(120, 120, 120, 90), width=1), antialias=False)
        self.loss_avg = self.loss_plot.plot(pen=pg.mkPen(fg, width=2))
        self.loss_uniform = pg.InfiniteLine(angle=0, movable=False,
                                            pen=pg.mkPen(TOTAL_COLOR, width=1, style=Qt.DashLine))
        self.loss_plot.addItem(self.loss_uniform)
        self.loss_plot.setToolTip("Cross-entropy of each step's batch (grey) and its mean over the last 50 steps "
                                  "(bold), in nats; the dashed line is ln V, the loss of a uniform guess")

        self.sparsity_plot = _plot(glw, 0, 1, self._sparsity_title(False), "% of the V rows", "step", fg)
        self.sparsity_plot.setYRange(0, 100, padding=0.02)
        self.total_curve = self.sparsity_plot.plot(pen=pg.mkPen(TOTAL_COLOR, width=3, style=Qt.DashLine),
                                                   antialias=False)
        self.total_curve.setZValue(5)  # on top: with tying it lies on the 100 % line with "changed"
        self.changed_curve = self.sparsity_plot.plot(pen=pg.mkPen(CHANGED_COLOR, width=1.5), antialias=False)
        self.grad_curve = self.sparsity_plot.plot(pen=pg.mkPen(GRAD_COLOR, width=1.5), antialias=False)
        self.sparsity_plot.setToolTip(
            "Per step, as % of V: rows of the input table with a non-zero gradient (= the distinct ids of the "
            "batch, untied); rows whose values changed (momentum and weight decay move rows without gradient); "
            "tied: the shared table's whole gradient, dense (100 %)")

        self.raster_plot = _plot(glw, 1, 0, f"Rows with <span style='color:{GRAD_COLOR}'>gradient</span> / "
                                 f"<span style='color:{CHANGED_COLOR}'>changed</span> (last {RASTER_STEPS} steps)",
                                 "rows, frequent → rare", "steps before the latest", fg)
        self.raster_plot.invertY(True)
        self.raster_img = pg.ImageItem()
        lut = np.zeros((3, 4), np.uint8)
        bgc = QColor(bg)
        lut[0] = (bgc.red(), bgc.green(), bgc.blue(), 255)
        c = QColor(CHANGED_COLOR)
        lut[RASTER_CHANGED] = (c.red(), c.green(), c.blue(), 110)
        c = QColor(GRAD_COLOR)
        lut[RASTER_GRAD] = (c.red(), c.green(), c.blue(), 255)
        self.raster_img.setLookupTable(lut)
        self.raster_img.setLevels((0, 2))
        self.raster_plot.addItem(self.raster_img)
        self.raster_plot.setToolTip(
            "One column per step, one line per row of E, the most frequent token at the top: blue = the row "
            "had gradient; orange = it changed without gradient (momentum, weight decay); blank = untouched")

        self.updates_plot = _plot(glw, 1, 1, f"Steps per row with <span style='color:{GRAD_COLOR}'>gradient"
                                  f"</span> / <span style='color:{CHANGED_COLOR}'>change</span>", "steps",
                                  "occurrences of the token in the corpus (log)", fg)
        self.updates_plot.setLogMode(x=True, y=False)
        self.changes_scatter = self.updates_plot.plot(pen=None, symbol="o", symbolSize=6, symbolBrush=None,
                                                      symbolPen=pg.mkPen(CHANGED_COLOR, width=1), antialias=False)
        self.updates_scatter = self.updates_plot.plot(pen=None, symbol="o", symbolSize=5, symbolPen=None,
                                                      symbolBrush=pg.mkBrush(GRAD_COLOR), antialias=False)
        self.updates_plot.setToolTip(
            "One point per row: how many steps gave it a gradient (filled) and how many changed it (ring), "
            "against how often its token occurs in the corpus. Never-seen tokens are drawn at 0.5")

        self.drift_plot = _plot(glw, 2, 0, "Distance of each row from its start", "‖E_t[i] − E_0[i]‖",
                                "occurrences of the token in the corpus (log)", fg)
        self.drift_plot.setLogMode(x=True, y=False)
        self.drift_scatter = self.drift_plot.plot(pen=None, symbol="o", symbolSize=5, symbolPen=None,
                                                  symbolBrush=pg.mkBrush(GRAD_COLOR), antialias=False)
        self.drift_plot.setToolTip("One point per row: Euclidean distance of the row from its random start "
                                   f"(updated every {SNAPSHOT_EVERY} steps) against its token's frequency: "
                                   "rare rows stay near where they started")

        self.pca_plot = _plot(glw, 2, 1, "PCA of E, coloured by word class", "PC 2", "PC 1", fg)
        self.pca_scatter = pg.ScatterPlotItem(size=7, pen=None)
        self.pca_plot.addItem(self.pca_scatter)
        self.pca_plot.setToolTip(
            f"Rows of E projected on PC 1 and PC 2, refitted every {PCA_EVERY} steps (signs kept aligned so the "
            "picture does not flip); colours are the word classes of the synthetic language; the silhouette "
            "(cosine, by class, −1…1) says how well the classes separate")
        # class names at their class's centre (created once, moved by setPos)
        from ..core.corpus import CLASSES

        self.pca_labels = []
        for k, name in enumerate(CLASSES):
            t = pg.TextItem(name, color=QColor(class_color(k)).darker(150), anchor=(0.5, 0.5),
                            fill=pg.mkBrush(QColor(255, 255, 255, 170) if QColor(bg).lightness() > 128
                                            else QColor(0, 0, 0, 170)))
            f = t.textItem.font()
            f.setPointSize(8)
            f.setBold(True)
            t.setFont(f)
            t.setVisible(False)
            self.pca_plot.addItem(t, ignoreBounds=True)
            self.pca_labels.append(t)

        for c in range(2):
            glw.ci.layout.setColumnStretchFactor(c, 1)
        self.plots = [self.loss_plot, self.sparsity_plot, self.raster_plot, self.updates_plot, self.drift_plot,
                      self.pca_plot]
        self.empty = pg.TextItem("Press Start to train a small model and watch its embedding table learn",
                                 color=fg, anchor=(0.5, 0.5))
        self.loss_plot.addItem(self.empty, ignoreBounds=True)
        self.loss_plot.setRange(xRange=(0, 1), yRange=(0, 1))
        self.empty.setPos(0.5, 0.5)
        return glw

    @staticmethod
    def _sparsity_title(tied: bool) -> str:
        t = (f"% of rows: <span style='color:{GRAD_COLOR}'>{'input ' if tied else 'with '}gradient</span> / "
             f"<span style='color:{CHANGED_COLOR}'>changed</span>")
        if tied:
            t += f" / <span style='color:{TOTAL_COLOR}'>tied table</span>"
        return t

    # -- config -----------------------------------------------------------------------------
    def config(self) -> TrainConfig:
        """The TrainConfig the controls describe."""
        return TrainConfig(
            steps=self.steps_spin.value(), dim=self.dim_spin.value(), batch_size=self.batch_spin.value(),
            lr=self.lr_spin.value(), optimizer=self.optimizer_combo.currentData(),
            weight_decay=self.wd_spin.value(), tied=self.tied_combo.currentIndex() == 1,
            sparse=self.sparse_check.isChecked(), seed=self.seed_spin.value(), snapshot_every=SNAPSHOT_EVERY,
        )

    def set_config(self, **kw) -> None:
        """Set controls from TrainConfig field names (tests, command line)."""
        if "tied" in kw:
            self.tied_combo.setCurrentIndex(1 if kw["tied"] else 0)
        if "sparse" in kw:
            self.sparse_check.setChecked(bool(kw["sparse"]))
        if "optimizer" in kw:
            self.optimizer_combo.setCurrentIndex(max(0, self.optimizer_combo.findData(kw["optimizer"])))
        for key, spin in (("lr", self.lr_spin), ("weight_decay", self.wd_spin), ("batch_size", self.batch_spin),
                          ("dim", self.dim_spin), ("seed", self.seed_spin), ("steps", self.steps_spin)):
            if key in kw:
                spin.setValue(kw[key])
        if "steps_per_second" in kw:
            i = next((k for k, (_l, s) in enumerate(SPEEDS) if s == kw["steps_per_second"]), 0)
            self.speed_combo.setCurrentIndex(i)

    def set_text_corpus(self, text: str, name: str = "text", use_model_tokenizer: bool = False) -> None:
        """Train on ``text`` (from a file the user opened)."""
        self._text = text[:MAX_CORPUS_CHARS]
        self._text_name = name
        words = len(self._text.split())
        self.text_label.setText(f"{name}: {len(self._text):,} characters, {words:,} words")
        self.corpus_combo.setCurrentIndex(CORPUS_MODEL if use_model_tokenizer else CORPUS_WORDS)
        self._validate()

    def config_problem(self) -> str:
        """Why Start is disabled ('' when it is not)."""
        try:
            self.config().validate()
        except ConfigError as exc:
            return str(exc)[:1].upper() + str(exc)[1:] + "."
        mode = self.corpus_combo.currentIndex()
        if mode != CORPUS_SYNTHETIC and not self._text:
            return "Open a text file to train on it, or choose the synthetic language."
        if mode == CORPUS_MODEL:
            table = self._state.table
            if table is None or getattr(table, "tokenizer", None) is None:
                return "The open model has no tokenizer: split the text word by word instead."
        return ""

    def _validate(self) -> None:
        problem = self.config_problem()
        self.config_error.setText(problem)
        self.config_error.setVisible(bool(problem))
        self.open_text_button.setVisible(self.corpus_combo.currentIndex() != CORPUS_SYNTHETIC)
        self.text_label.setVisible(self.corpus_combo.currentIndex() != CORPUS_SYNTHETIC)
        self._update_buttons()

    def _on_control_changed(self, *_args) -> None:
        """Any setting changed: check the combination."""
        self._validate()

    def _on_speed_changed(self, _index: int) -> None:
        """The speed applies to a running job at once."""
        if self._control is not None:
            self._control.steps_per_second = float(self.speed_combo.currentData())

    def _update_buttons(self) -> None:
        running, paused = self._running, self.paused
        self.start_button.setEnabled(not running and not self.config_problem())
        self.start_button.setToolTip(self.config_problem() or "Start a new run with these settings "
                                     "(the charts restart)")
        self.pause_button.setEnabled(running)
        self.pause_button.setText("Resume" if paused else "Pause")
        self.stop_button.setEnabled(running)
        self.reset_button.setEnabled(running or self._history is not None)
        self.save_button.setEnabled(self._run is not None and self._history is not None
                                    and self._history.n > 0 and (not running or paused))
        self.export_button.setEnabled(self._history is not None and self._history.n > 0)
        for w in (self.corpus_combo, self.open_text_button, self.tied_combo, self.sparse_check,
                  self.optimizer_combo, self.lr_spin, self.wd_spin, self.batch_spin, self.dim_spin,
                  self.seed_spin, self.steps_spin):
            w.setEnabled(not running)

    # -- run control --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._running

    @property
    def paused(self) -> bool:
        return self._control is not None and self._control.paused and self._running

    @property
    def history(self) -> TrainingHistory | None:
        return self._history

    def start(self) -> None:
        """Start a new run with the controls' settings (the charts restart)."""
        if self._running or self.config_problem():
            return
        cfg = self.config()
        mode = self.corpus_combo.currentIndex()
        if mode == CORPUS_SYNTHETIC:
            factory = synthetic_corpus
        else:
            tok = self._state.table.tokenizer if mode == CORPUS_MODEL else None
            factory = functools.partial(text_corpus, self._text, tok)
        self._clear()
        self._control = TrainingControl(float(self.speed_combo.currentData()))
        self._running = True
        self._set_message("Preparing…")
        self._runner.start(live_training_job, factory, cfg, self._control)
        self.frame_timer.start()
        self._update_buttons()

    def pause(self) -> None:
        if self._running and self._control is not None:
            self._control.pause()
            self._set_message("Paused: the charts show the run so far.")
            self._dirty = True
            self._update_buttons()

    def resume(self) -> None:
        if self._running and self._control is not None:
            self._control.resume()
            self._rate.clear()
            self._set_message("")
            self._update_buttons()

    def _on_pause_clicked(self) -> None:
        """Pause or resume."""
        self.resume() if self.paused else self.pause()

    def stop(self) -> None:
        """End the run; the charts and the model stay."""
        if not self._running:
            return
        self._end_run(f"Stopped at step {self._history.last_step if self._history else 0:,}.")

    def reset(self) -> None:
        """Stop and clear everything."""
        if self._running:
            self._end_run("")
        self._clear()
        # the PCA chart keeps items between frames: empty them too
        self.pca_scatter.setData([], [])
        for label in self.pca_labels:
            label.setVisible(False)
        self._set_title(self.pca_plot, "PCA of E")
        self._set_message("")
        self._redraw()
        self._update_buttons()

    def shutdown(self) -> None:
        """Stop the run and let its thread end (the app calls this on close)."""
        if self._control is not None:
            self._control.stop()
        self._runner.cancel(emit=False)
        self._running = False
        self.frame_timer.stop()
        self._fire_target()

    def _end_run(self, message: str) -> None:
        if self._control is not None:
            self._control.stop()
        self._runner.cancel(emit=False)
        self._running = False
        self.frame_timer.stop()
        self._redraw()
        self._set_message(message)
        self._update_buttons()
        self._fire_target()

    def _clear(self) -> None:
        self._run = None
        self._history = None
        self._pca = AlignedPCA()
        self._pca_coords = None
        self._pca_drawn_step = -1
        self._silhouette_init = self._silhouette = None
        self._pca_brushes = self._pca_sizes = None
        self._rows_part = 0
        self._rows_drawn_at = 0.0
        self._rate.clear()
        self._dirty = True

    def run_steps_then(self, n: int, callback=None) -> None:
        """Train (a new run if none is going) until step ``n``, redraw, then call
        ``callback()`` and emit steps_reached(step). Also called when the run ends early."""
        self._target = (int(n), callback)
        if not self._running:
            self.steps_spin.setValue(int(n))  # the run ends at step n
            self.start()
            if not self._running:  # the settings cannot train
                self._fire_target()

    def _fire_target(self) -> None:
        if self._target is None:
            return
        _n, callback = self._target
        self._target = None
        self._redraw(full=True)
        step = self._history.last_step if self._history is not None else 0
        self.steps_reached.emit(step)
        if callback is not None:
            callback()

    # -- runner -------------------------------------------------------------------------------
    def _on_runner_produced(self, value) -> None:
        """A TrainingRun (before step 1) or a batch of StepMetrics."""
        if not self._running:
            return
        if isinstance(value, TrainingRun):
            self._run = value
            corpus = value.corpus
            labels = corpus.class_labels() if corpus.classes else None
            self._history = TrainingHistory(corpus.counts(), value.init_table, labels, RASTER_STEPS)
            if labels is not None:
                self._silhouette_init = class_silhouette(value.init_table, labels)
                self._silhouette = self._silhouette_init
            self._set_message("")
            self._dirty = True
            return
        if self._history is None:
            return
        batch = value if isinstance(value, list) else [value]
        self._history.extend(batch)
        self._rate.append((time.perf_counter(), self._history.last_step))
        self._dirty = True
        if (self._target is not None and self._history.last_step >= self._target[0]
                and self._run is not None and self._run.cfg.steps > self._target[0]):
            self._fire_target()  # a run that ends at the target fires when it has ended

    def _on_runner_progressed(self, _fraction: float, message: str) -> None:
        """Preparing the corpus or the model."""
        if self._running:
            self._set_message(message)

    def _on_runner_succeeded(self, run) -> None:
        """The run did all its steps."""
        if not self._running:
            return
        self._running = False
        self.frame_timer.stop()
        self._redraw()
        step = self._history.last_step if self._history else 0
        self._set_message(f"Finished {step:,} steps. Save the model to open it in the explorer.")
        self._update_buttons()
        self._fire_target()

    def _on_runner_failed(self, exc: BaseException) -> None:
        """Divergence or a corpus that cannot train: say why, keep the charts."""
        if not self._running:
            return
        self._running = False
        self.frame_timer.stop()
        self._redraw()
        message = str(exc) if isinstance(exc, (FloatingPointError, ExplorerError)) else user_message(exc)
        self._set_message(message[:1].upper() + message[1:] + ". The charts show the run up to there.",
                          error=True)
        self._update_buttons()
        self._fire_target()

    def _on_state_model_changed(self, _table) -> None:
        """A run on the model's tokenizer stops when the model changes; others go on."""
        if self._running and self.corpus_combo.currentIndex() == CORPUS_MODEL:
            self._end_run("The model changed, so the run on its tokenizer stopped.")
        self._validate()

    def _set_message(self, text: str, error: bool = False) -> None:
        self._message = text
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {ERROR};" if error else "")

    # -- drawing ------------------------------------------------------------------------------
    def _on_frame_timer_timeout(self) -> None:
        """Redraw from the latest data, if any arrived; slow the frame rate down
        when a frame (update + paint) costs more than FRAME_DUTY of the time."""
        if self._dirty:
            self._redraw()
            interval = 1000.0 / FRAME_HZ
            if self._control is not None and self._control.steps_per_second <= 0:
                cost = (self._frame_ms[-1] if self._frame_ms else 0.0) + self.glw.last_paint_ms
                interval = max(interval, cost / FRAME_DUTY)
            self.frame_timer.setInterval(int(min(interval, 1000.0)))

    def _redraw(self, full: bool = False) -> None:
        t0 = time.perf_counter()
        self._dirty = False
        h = self._history
        self.empty.setVisible(h is None or h.n == 0)
        if h is None or h.n == 0:
            for item in (self.loss_raw, self.loss_avg, self.grad_curve, self.changed_curve, self.total_curve):
                item.setData([], [])
            for sc in (self.updates_scatter, self.changes_scatter, self.drift_scatter, self.pca_scatter):
                sc.setData([], [])
            self.raster_img.clear()
            self.loss_uniform.setVisible(False)
            self._update_status()
            return
        steps, size = binned(h.series("step"), MAX_POINTS)
        loss = h.series("loss")
        self.loss_raw.setData(steps, binned(loss, MAX_POINTS)[0])
        self.loss_avg.setData(steps, binned(moving_average(loss, 50), MAX_POINTS)[0])
        ln_v = math.log(max(h.vocab_size, 2))
        self.loss_uniform.setVisible(True)
        self.loss_uniform.setValue(ln_v)
        # ranges move in coarse jumps, so axes are not rebuilt on every frame;
        # never past the run's planned length
        x_end = _nice_ceil(h.last_step)
        planned = self._run.cfg.steps if self._run is not None else 0
        if h.last_step <= planned < x_end:
            x_end = planned
        finite = loss[np.isfinite(loss)]
        top = max(ln_v, float(finite.max()) if finite.size else ln_v)
        self._set_range(self.loss_plot, (0, x_end), (0, math.ceil(top * 1.05 * 2) / 2))

        tied = self._run is not None and self._run.cfg.tied
        self._set_title(self.sparsity_plot, self._sparsity_title(tied))
        self.grad_curve.setData(steps, binned(h.fraction("input_grad_rows"), MAX_POINTS)[0])
        self.changed_curve.setData(steps, binned(h.fraction("changed_rows"), MAX_POINTS)[0])
        if tied:
            self.total_curve.setData(steps, binned(h.fraction("grad_rows"), MAX_POINTS)[0])
        else:
            self.total_curve.setData([], [])
        self.total_curve.setVisible(tied)
        self._set_range(self.sparsity_plot, (0, x_end), (0, 102))

        img, rsteps = h.raster()
        if img.shape[1]:
            self.raster_img.setImage(img, autoLevels=False, levels=(0, 2))
            # x: steps before the latest (a fixed axis; the picture scrolls left)
            n = float(len(rsteps))
            self.raster_img.setRect(QRectF(-n + 0.5, 0, n, float(h.vocab_size)))
            self._set_range(self.raster_plot, (-RASTER_STEPS, 0.5), (0, h.vocab_size))

        # per-row charts change slowly: at most ROWS_HZ, one of them per frame so
        # no frame carries all three; all of them on a last frame
        now = time.perf_counter()
        final = full or not self._running or self.paused
        if self._rows_part == 0 and now - self._rows_drawn_at >= 1.0 / ROWS_HZ:
            self._rows_drawn_at = now
            self._rows_part = 1
        if final:
            for part in (1, 2, 3):
                self._draw_rows_part(h, part)
            self._rows_part = 0
        elif self._rows_part:
            self._draw_rows_part(h, self._rows_part)
            self._rows_part = (self._rows_part + 1) % 4
        self._update_status()
        self._frame_ms.append(1000 * (time.perf_counter() - t0))

    _rows_part = 0

    def _draw_rows_part(self, h: TrainingHistory, part: int) -> None:
        x = np.maximum(h.counts, 0.5).astype(np.float64)
        lx = (math.log10(0.5) - 0.15, math.log10(max(float(x.max()), 1.0)) + 0.15)
        if part == 1:
            self.updates_scatter.setData(x, h.grad_count.astype(np.float64))
            self.changes_scatter.setData(x, h.change_count.astype(np.float64))
            self._set_range(self.updates_plot, lx, (0, _nice_ceil(h.last_step) * 1.04))
        elif part == 2:
            drift = h.drift()
            ok = np.isfinite(drift)
            self.drift_scatter.setData(x[ok], drift[ok])
            dmax = float(drift[ok].max()) if ok.any() else 0.0
            self._set_range(self.drift_plot, lx, (0, _nice_ceil(dmax * 1.05) if dmax > 0 else 1.0))
        else:
            self._draw_pca(h)

    def _draw_pca(self, h: TrainingHistory) -> None:
        if h.latest_step == self._pca_drawn_step and self._pca_coords is not None:
            return
        table = h.latest
        if self._pca.components is None or h.latest_step - self._pca.fitted_step >= PCA_EVERY:
            self._pca.fit(table, h.latest_step)
            if (h.labels >= 0).any():
                self._silhouette = class_silhouette(table, h.labels)
        coords = self._pca.transform(table)
        self._pca_coords = coords
        fin = coords[np.isfinite(coords).all(axis=1)]
        if fin.size:
            lo, hi = fin.min(axis=0), fin.max(axis=0)
            cur = getattr(self.pca_plot, "_explorer_range", None)
            refit = self._pca.fitted_step == h.latest_step
            outside = cur is None or lo[0] < cur[0][0] or hi[0] > cur[0][1] or lo[1] < cur[1][0] or hi[1] > cur[1][1]
            if refit or outside:
                pad = np.maximum((hi - lo) * 0.12, 1e-6)
                self._set_range(self.pca_plot, (lo[0] - pad[0], hi[0] + pad[0]), (lo[1] - pad[1], hi[1] + pad[1]))
        self._pca_drawn_step = h.latest_step
        if self._pca_brushes is None or len(self._pca_brushes) != h.vocab_size:
            self._make_pca_brushes(h)
        self.pca_scatter.setData(coords[:, 0], coords[:, 1], brush=self._pca_brushes, size=self._pca_sizes)
        for k, label in enumerate(self.pca_labels):
            mask = h.labels == k
            label.setVisible(bool(mask.any()))
            if mask.any():
                c = coords[mask].mean(axis=0)
                label.setPos(float(c[0]), float(c[1]))
        title = f"PCA of E at step {h.latest_step:,}"
        if self._silhouette is not None:
            start = f"{self._silhouette_init:+.2f} → " if self._silhouette_init is not None else ""
            title = f"PCA of E · class silhouette {start}{self._silhouette:+.2f}"
        self._set_title(self.pca_plot, title)

    _pca_brushes = None

    def _set_range(self, plot: pg.PlotItem, xr: tuple, yr: tuple) -> None:
        # setRange only when the bounds change: a new range rebuilds the axes
        key = (tuple(float(v) for v in xr), tuple(float(v) for v in yr))
        if getattr(plot, "_explorer_range", None) != key:
            plot._explorer_range = key
            plot.setRange(xRange=key[0], yRange=key[1], padding=0)
    _rows_drawn_at = 0.0

    def _set_title(self, plot: pg.PlotItem, title: str) -> None:
        # setHtml costs ~1 ms: only when the text changed
        if getattr(plot, "_explorer_title", None) != title:
            plot._explorer_title = title
            plot.setTitle(title, color=self._fg, size="9pt")
    _pca_sizes = None

    def _make_pca_brushes(self, h: TrainingHistory) -> None:
        from ..core.corpus import CLASSES

        labels = h.labels
        brushes, sizes = [], np.full(h.vocab_size, 7.0)
        cache = {}
        for i, lab in enumerate(labels):
            if lab < 0 or lab >= len(CLASSES):  # specials, function words, text corpora
                color = QColor(TOTAL_COLOR)
                color.setAlpha(150)
                sizes[i] = 5
            else:
                color = QColor(class_color(lab))
            key = color.name(QColor.HexArgb)
            if key not in cache:
                cache[key] = pg.mkBrush(color)
            brushes.append(cache[key])
        self._pca_brushes, self._pca_sizes = brushes, sizes

    def _update_status(self) -> None:
        h = self._history
        cfg = self._run.cfg if self._run is not None else self.config()
        if h is None or h.n == 0:
            self.status.setText("")
            return
        rate = ""
        if len(self._rate) >= 2:
            (t0, s0), (t1, s1) = self._rate[0], self._rate[-1]
            if t1 > t0:
                rate = f"{(s1 - s0) / (t1 - t0):,.0f} steps/s"
        loss = float(np.mean(h.series("loss")[-50:]))
        last_grad = int(h.series("input_grad_rows")[-1])
        last_total = int(h.series("grad_rows")[-1])
        last_changed = int(h.series("changed_rows")[-1])
        v = h.vocab_size
        self.status.setText(
            f"step     {h.last_step:,} / {cfg.steps:,}\n"
            f"speed    {rate}\n"
            f"loss     {loss:.3f} nats\n"
            f"ln V     {math.log(max(h.vocab_size, 2)):.3f} nats\n"
            f"V × d    {h.vocab_size:,} × {h.init.shape[1]:,}\n"
            f"gradient {last_grad:,} rows, {100 * last_grad / v:.1f} %\n"
            + (f"tied     {last_total:,} rows, {100 * last_total / v:.1f} %\n" if cfg.tied else "")
            + f"changed  {last_changed:,} rows, {100 * last_changed / v:.1f} %")

    @property
    def frame_times_ms(self) -> list[float]:
        """Durations of recent redraws, in ms."""
        return list(self._frame_ms)

    # -- files ----------------------------------------------------------------------------------
    def _on_open_text_clicked(self) -> None:
        """Ask for a text file to train on."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a text file to train on", "",
                                              "Text (*.txt *.md *.csv);;All files (*)")
        if not path:
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(MAX_CORPUS_CHARS)
        except OSError as exc:
            self._set_message(f"Cannot read {path}: {exc.strerror or exc}", error=True)
            return
        mode = self.corpus_combo.currentIndex()
        self.set_text_corpus(text, Path(path).name, use_model_tokenizer=mode == CORPUS_MODEL)

    def save_model(self, folder: str) -> str:
        """Save the run's model as a folder the explorer opens; emits model_saved."""
        if self._run is None or (self._running and not self.paused):
            raise RuntimeError("nothing to save: train, then stop or pause the run")
        corpus = self._run.corpus
        example = corpus.sentences[0] if corpus.sentences else ""
        save_model_folder(self._run.model, self._run.cfg, corpus.words, corpus.classes, folder,
                          example_text=example[:200])
        self.model_saved.emit(str(folder))
        return str(folder)

    def _on_save_clicked(self) -> None:
        """Ask for a folder name and save the model there."""
        step = self._history.last_step if self._history else 0
        default = f"toy-lm-{self._run.cfg.optimizer}-{'tied' if self._run.cfg.tied else 'untied'}-{step}"
        path, _ = QFileDialog.getSaveFileName(self, "Save the trained model as a folder", default, "Folder (*)")
        if not path:
            return
        try:
            self.save_model(path)
            self._set_message(f"Saved to {path}.")
        except (OSError, RuntimeError) as exc:
            self._set_message(f"Could not save: {exc}", error=True)

    def export_image(self, path: str) -> None:
        """Save all six charts as one PNG or SVG (by the file's suffix)."""
        self._redraw(full=True)
        export_graphics(self.glw.ci, path)
        if not Path(path).is_file():
            raise OSError(f"cannot write {path}")

    def export_csv(self, path: str, rows: bool = False) -> None:
        """Save the per-step time series (or the per-row data) as CSV."""
        if self._history is None:
            raise RuntimeError("nothing to export yet")
        names = self._run.corpus.words if self._run is not None else None
        text = self._history.rows_csv(names) if rows else self._history.to_csv()
        Path(path).write_text(text, encoding="utf-8")

    def _ask_export(self, title: str, default: str, filt: str, write) -> None:
        path, _ = QFileDialog.getSaveFileName(self, title, default, filt)
        if not path:
            return
        try:
            write(path)
            self._set_message(f"Exported {Path(path).name}.")
        except (OSError, RuntimeError) as exc:
            self._set_message(f"Could not export: {exc}", error=True)

    def _on_export_png_triggered(self) -> None:
        """Charts as PNG."""
        self._ask_export("Export the charts as PNG", "training-charts.png", "PNG (*.png)", self.export_image)

    def _on_export_svg_triggered(self) -> None:
        """Charts as SVG."""
        self._ask_export("Export the charts as SVG", "training-charts.svg", "SVG (*.svg)", self.export_image)

    def _on_export_csv_triggered(self) -> None:
        """Time series as CSV."""
        self._ask_export("Export the time series as CSV", "training-steps.csv", "CSV (*.csv)", self.export_csv)

    def _on_export_rows_triggered(self) -> None:
        """Per-row data as CSV."""
        self._ask_export("Export the per-row data as CSV", "training-rows.csv", "CSV (*.csv)",
                         lambda p: self.export_csv(p, rows=True))
