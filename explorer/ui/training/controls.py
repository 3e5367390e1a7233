"""The training view's controls, one small class per group: what to train on,
the run's settings, the run buttons and the readout beside the charts.

They hold no run: they describe a TrainConfig, emit what the user asked for,
and show what the view tells them.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QWidget,
)
from superqt.utils import signals_blocked

from explorer.core.training.config import DEFAULT_LR, TrainConfig
from explorer.core.training.corpus import MAX_CORPUS_CHARS
from explorer.core.training.session import LOSS_WINDOW, Readout
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import ERROR, SPACING, mono_font

__all__ = ["CorpusControls", "SettingsControls", "RunButtons", "RunReadout", "SPEEDS", "OPTIMIZER_LABELS",
           "CORPUS_SYNTHETIC", "CORPUS_WORDS", "CORPUS_MODEL", "SNAPSHOT_NOTE"]

#: speed choices: (label, steps per second; 0 = as fast as possible)
SPEEDS = [("As fast as possible", 0.0), ("300 steps/s", 300.0), ("100 steps/s", 100.0),
          ("30 steps/s", 30.0), ("10 steps/s", 10.0)]
OPTIMIZER_LABELS = [("Adam", "adam"), ("AdamW", "adamw"), ("SGD", "sgd"), ("SparseAdam", "sparse_adam")]
CORPUS_SYNTHETIC, CORPUS_WORDS, CORPUS_MODEL = 0, 1, 2
SNAPSHOT_NOTE = "a new picture of the table every few steps"


def _compact(combo: QComboBox) -> None:
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)


class CorpusControls(QObject):
    """What to train on: the synthetic language, or a text file by words or by the model's tokenizer.

    Signals
    -------
    changed()
    open_requested()
        The user wants to pick a text file.
    """

    changed = Signal()
    open_requested = Signal()

    def __init__(self, form: QFormLayout, parent=None):
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.addItems(["Synthetic language", "Text file: words", "Text file: model tokenizer"])
        self.combo.setToolTip(
            "What to train on: the synthetic language the bundled model learned (word classes, Zipf "
            "frequencies), or a text file split into lower-cased words, or split by the open model's tokenizer")
        _compact(self.combo)
        self.open_button = QPushButton("Open text file…")
        self.open_button.setToolTip(f"A plain-text file (the first {MAX_CORPUS_CHARS:,} characters are used)")
        self.label = WrapLabel("no file")
        self.label.setToolTip("The text file to train on")
        form.addRow("Corpus", self.combo)
        form.addRow("", self.open_button)
        form.addRow("", self.label)
        self.text = ""
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        self.open_button.clicked.connect(self.open_requested)
        self._on_combo_changed()

    @property
    def mode(self) -> int:
        return self.combo.currentIndex()

    def set_text(self, text: str, name: str, use_model_tokenizer: bool) -> None:
        self.text = text[:MAX_CORPUS_CHARS]
        self.label.setText(f"{name}: {len(self.text):,} characters, {len(self.text.split()):,} words")
        self.combo.setCurrentIndex(CORPUS_MODEL if use_model_tokenizer else CORPUS_WORDS)
        self.changed.emit()

    def set_enabled(self, enabled: bool) -> None:
        self.combo.setEnabled(enabled)
        self.open_button.setEnabled(enabled)

    def _on_combo_changed(self, *_args) -> None:
        """A text file is needed for the two text modes."""
        needs_file = self.mode != CORPUS_SYNTHETIC
        self.open_button.setVisible(needs_file)
        self.label.setVisible(needs_file)
        self.changed.emit()


class SettingsControls(QObject):
    """The model, the optimiser, the run's length and its speed.

    Signals
    -------
    changed()
        A setting of the TrainConfig changed.
    speed_changed(float)
        Steps per second (0: as fast as possible); applies to a running job at once.
    """

    changed = Signal()
    speed_changed = Signal(float)

    def __init__(self, form: QFormLayout, parent=None):
        super().__init__(parent)
        self.tied_combo = QComboBox()
        self.tied_combo.addItems(["Untied", "Tied (output = E)"])  # short: the whole text shows at 1024 px
        self.tied_combo.setToolTip(
            "Untied: the output projection is a matrix of its own. Tied: the output projection reuses E "
            "(the same tensor), so the softmax over all V logits "
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
        # each optimiser starts from a rate that trains well with it; a rate the user sets is kept for it
        self._lr_by_optimizer = dict(DEFAULT_LR)
        self._optimizer = self.optimizer_combo.currentData()
        self.lr_spin.setValue(self._lr_by_optimizer[self._optimizer])
        defaults = ", ".join(f"{label} {DEFAULT_LR[key]:g}" for label, key in OPTIMIZER_LABELS)
        self.lr_spin.setToolTip(
            f"Learning rate (step size). Each optimiser starts from one that trains this model well: {defaults}. "
            "Plain SGD steps by the raw gradient, which is small here, so it needs a rate about 100 times Adam's "
            "(whose steps are normalised per coordinate). A rate you set is kept for its optimiser. "
            "Too big and the loss diverges; the run then stops")
        self._build_run_size()
        for combo in (self.tied_combo, self.optimizer_combo, self.speed_combo):
            _compact(combo)
        for label, w in (("Output", self.tied_combo), ("", self.sparse_check), ("Optimiser", self.optimizer_combo),
                         ("Learning rate", self.lr_spin), ("Weight decay", self.wd_spin),
                         ("Batch size", self.batch_spin), ("d", self.dim_spin), ("Seed", self.seed_spin),
                         ("Steps", self.steps_spin), ("Speed", self.speed_combo)):
            form.addRow(label, w)
        self.tied_combo.currentIndexChanged.connect(self._on_setting_changed)
        self.optimizer_combo.currentIndexChanged.connect(self._on_optimizer_combo_changed)
        self.sparse_check.toggled.connect(self._on_setting_changed)
        self.lr_spin.valueChanged.connect(self._on_lr_spin_changed)
        for w in (self.wd_spin, self.batch_spin, self.dim_spin, self.seed_spin, self.steps_spin):
            w.valueChanged.connect(self._on_setting_changed)
        self.speed_combo.currentIndexChanged.connect(self._on_speed_combo_changed)

    def _build_run_size(self) -> None:
        """Weight decay, batch size, d, seed, steps and speed."""
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

    @property
    def speed(self) -> float:
        return float(self.speed_combo.currentData())

    def config(self) -> TrainConfig:
        """The TrainConfig the controls describe."""
        return TrainConfig(
            steps=self.steps_spin.value(), dim=self.dim_spin.value(), batch_size=self.batch_spin.value(),
            lr=self.lr_spin.value(), optimizer=self.optimizer_combo.currentData(),
            weight_decay=self.wd_spin.value(), tied=self.tied_combo.currentIndex() == 1,
            sparse=self.sparse_check.isChecked(), seed=self.seed_spin.value(),
        )

    def set_config(self, **kw) -> None:
        """Set controls from TrainConfig field names, and ``steps_per_second``."""
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

    def set_enabled(self, enabled: bool) -> None:
        """Settings are fixed while a run goes on (the speed is not)."""
        for w in (self.tied_combo, self.sparse_check, self.optimizer_combo, self.lr_spin, self.wd_spin,
                  self.batch_spin, self.dim_spin, self.seed_spin, self.steps_spin):
            w.setEnabled(enabled)

    def _on_setting_changed(self, *_args) -> None:
        """Any setting changed: the view checks the combination."""
        self.changed.emit()

    def _on_optimizer_combo_changed(self, _index: int) -> None:
        """Another optimiser: its own learning rate (its default, or the one last set for it)."""
        self._optimizer = self.optimizer_combo.currentData()
        with signals_blocked(self.lr_spin):
            self.lr_spin.setValue(self._lr_by_optimizer[self._optimizer])
        self.changed.emit()

    def _on_lr_spin_changed(self, value: float) -> None:
        """The user's rate, kept for the current optimiser."""
        self._lr_by_optimizer[self._optimizer] = value
        self.changed.emit()

    def _on_speed_combo_changed(self, _index: int) -> None:
        """A new pace."""
        self.speed_changed.emit(self.speed)


class RunButtons(QWidget):
    """Start, Pause/Resume, Stop, Reset; Save as model and Export."""

    START_TIP = "Start a new run with these settings (the charts restart)"

    def __init__(self, parent=None):
        super().__init__(parent)
        self.start_button = QPushButton("Start")
        self.start_button.setToolTip(self.START_TIP)
        self.pause_button = QPushButton("Pause")
        self.pause_button.setToolTip("Hold the run between two steps; Resume continues it")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the run; the charts stay and the model can be saved")
        self.reset_button = QPushButton("Reset")
        self.reset_button.setToolTip("Stop and clear the charts")
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(SPACING // 2)
        for k, b in enumerate((self.start_button, self.pause_button, self.stop_button, self.reset_button)):
            b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
            grid.addWidget(b, k // 2, k % 2)
        self.save_button = QPushButton("Save as model…")
        self.save_button.setToolTip("Save the trained model as a folder (safetensors, word tokenizer, classes) "
                                    "and open it in the explorer")
        self.save_button.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        self.export_button.setToolTip("Save the charts (PNG, SVG) or their data (CSV)")
        self.export_button.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.export_menu = QMenu(self.export_button)
        self.export_button.setMenu(self.export_menu)
        grid.addWidget(self.save_button, 2, 0)
        grid.addWidget(self.export_button, 2, 1)

    def add_export(self, text: str, slot) -> QAction:
        act = QAction(text, self.export_menu)
        act.triggered.connect(slot)
        self.export_menu.addAction(act)
        return act


class RunReadout(QObject):
    """The latest step's figures (monospace) and a sentence about the run: two
    labels the view lays out (word-wrapped labels need the panel's own layout)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = QLabel()
        self.status.setFont(mono_font())
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.status.setToolTip(
            f"step / steps of the run; speed in steps per second (recent batches); loss = mean cross-entropy "
            f"of the last {LOSS_WINDOW} steps, in nats (ln V: the loss of a uniform guess over V tokens); "
            "gradient = rows of E with a non-zero gradient through the input this step = the batch's distinct "
            "ids, and its share 100 × rows / V; tied = rows with gradient in the shared table (all V: the softmax "
            "touches every logit); changed = rows whose values moved in this step (momentum and weight decay "
            "move rows without gradient)")
        self.message = WrapLabel()
        self.message.setToolTip("What happened to the last run")
        self._status_text = ""

    def show_readout(self, r: Readout | None) -> None:
        if r is None:
            text = ""
        else:
            v = r.vocab_size
            speed = f"{r.steps_per_second:,.0f} steps/s" if r.steps_per_second is not None else ""
            text = (f"step     {r.step:,} / {r.steps:,}\n"
                    f"speed    {speed}\n"
                    f"loss     {r.loss:.3f} nats\n"
                    f"ln V     {r.ln_v:.3f} nats\n"
                    f"V × d    {v:,} × {r.dim:,}\n"
                    f"gradient {r.grad_rows:,} rows, {100 * r.grad_rows / v:.1f} %\n"
                    + (f"tied     {r.tied_rows:,} rows, {100 * r.tied_rows / v:.1f} %\n"
                       if r.tied_rows is not None else "")
                    + f"changed  {r.changed_rows:,} rows, {100 * r.changed_rows / v:.1f} %")
        if text != self._status_text:  # a label relays out its panel on every setText
            self._status_text = text
            self.status.setText(text)

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {ERROR};" if error else "")
