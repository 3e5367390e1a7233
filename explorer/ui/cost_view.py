"""What the table costs and why it is built this way: the cost card, famous
models compared, why vectors and not ids, and the context-free lookup."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from superqt.utils import signals_blocked

from ..core.errors import user_message
from ..core import cost
from ..core.context import (
    DEFAULT_SENTENCES,
    DEFAULT_WORD,
    DEFAULT_WORDS,
    ContextResult,
    SameRow,
    WhyVectors,
    context_support,
    contextual_job,
    repeated_word,
    same_row,
    why_vectors,
)
from ..core.geometry import random_cosine_bound, random_cosine_std, shell_volume_fraction
from ..state import AppState
from .export import export_graphics
from .style import ACCENT, DIVERGING, SPACING, TEXT_TOKENS, mono_font, plot_colors, style_plot

#: the reference models' bars; the loaded model's bar is ACCENT
REFERENCE_COLOR = "#0072B2"
FP16_COLOR = "#56B4E9"
TILE_STYLE = """
#CostTile { border: 1px solid palette(mid); border-radius: 8px; background: palette(base); }
#TileCaption { color: palette(placeholder-text); font-size: 10pt; }
#TileValue { font-size: 18pt; font-weight: 600; }
#TileSub { font-size: 10pt; }
#TileFormula { color: palette(placeholder-text); font-size: 9pt; }
#CardTitle { font-size: 16pt; font-weight: 600; }
#PanelTitle { font-size: 11pt; font-weight: 600; }
#Verdict { font-size: 13pt; font-weight: 600; }
"""


class Tile(QFrame):
    """One figure of the cost card: caption, big value, sub line and formula."""

    def __init__(self, caption: str, tooltip: str, parent=None):
        super().__init__(parent)
        self.setObjectName("CostTile")
        self.setToolTip(tooltip)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(2)
        self.caption = QLabel(caption)
        self.caption.setObjectName("TileCaption")
        self.value = QLabel("–")
        self.value.setObjectName("TileValue")
        f = QFont(self.value.font())
        f.setPointSize(18)
        f.setWeight(QFont.DemiBold)
        self.value.setFont(f)
        self.value.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.sub = QLabel("")
        self.sub.setObjectName("TileSub")
        self.sub.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.sub.setWordWrap(True)
        self.formula = QLabel("")
        self.formula.setObjectName("TileFormula")
        self.formula.setWordWrap(True)
        for w in (self.caption, self.value, self.sub, self.formula):
            lay.addWidget(w)
        lay.addStretch(1)

    def set(self, value: str, sub: str = "", formula: str = "") -> None:
        self.value.setText(value)
        self.sub.setText(sub)
        self.formula.setText(formula)


def _matrix_table(tooltip: str) -> QTableWidget:
    t = QTableWidget()
    t.setToolTip(tooltip)
    t.setEditTriggers(QAbstractItemView.NoEditTriggers)
    t.setSelectionMode(QAbstractItemView.NoSelection)
    t.setWordWrap(False)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
    t.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
    return t


def _fill_matrix(table: QTableWidget, labels: list[str], values: np.ndarray, fmt, colors=None) -> None:
    n = len(labels)
    table.setRowCount(n)
    table.setColumnCount(n)
    table.setHorizontalHeaderLabels(labels)
    table.setVerticalHeaderLabels(labels)
    for i in range(n):
        for j in range(n):
            v = values[i, j]
            item = QTableWidgetItem(fmt(v))
            item.setData(Qt.UserRole, float(v))
            item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            if colors is not None and np.isfinite(v):
                item.setBackground(colors(v))
            table.setItem(i, j, item)
    _fit_height(table)


def _fit_height(table: QTableWidget) -> None:
    """Fix a small table's height to its rows, so no empty band is left under them."""
    table.resizeRowsToContents()
    h = table.horizontalHeader().height() + 2 * table.frameWidth()
    h += sum(table.rowHeight(i) for i in range(table.rowCount()))
    table.setFixedHeight(max(h, 40))


class CostView(QWidget):
    """The cost card, famous tables compared, why vectors, and the context-free lookup.

    Signals
    -------
    token_selected(int)
        The user clicked a token of the "why vectors" panels (its id).
    """

    token_selected = Signal(int)

    def __init__(self, state: AppState, runner=None, parent=None):
        super().__init__(parent)
        self._state = state
        # the app marks the view inactive while its tab is hidden (set_active);
        # work that arrives meanwhile is remembered as stale and done when shown
        self._active = True
        self._stale = False
        self._runner = runner
        self._why: WhyVectors | None = None
        self._same: SameRow | None = None
        self._context: ContextResult | None = None
        self._context_message = ""
        self._comparison: list[cost.NamedCost] = []
        self.setStyleSheet(TILE_STYLE)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        outer.addWidget(self.pages)
        self._build_card()
        self._build_compare()
        self._build_why()
        self._build_context()

        self._context_timer = QTimer(self)
        self._context_timer.setSingleShot(True)
        self._context_timer.setInterval(400)
        self._context_timer.timeout.connect(self._on_context_timer_timeout)

        state.model_changed.connect(self._on_state_model_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)
        if runner is not None:
            runner.progressed.connect(self._on_runner_progressed)
            runner.succeeded.connect(self._on_runner_succeeded)
            runner.failed.connect(self._on_runner_failed)
        if state.table is not None:
            self._on_state_model_changed(state.table)

    # -- building ------------------------------------------------------------------------
    def _build_card(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(SPACING * 2, SPACING * 2, SPACING * 2, SPACING * 2)
        lay.setSpacing(SPACING)
        self.card_title = QLabel("Open a model to see what its embedding table costs (Ctrl+O)")
        self.card_title.setObjectName("CardTitle")
        self.card_title.setWordWrap(True)
        self.card_title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.card_title)
        grid = QGridLayout()
        grid.setSpacing(SPACING + 4)
        specs = [
            ("params", "Parameters", "Number of learned numbers in E: V × d"),
            ("share", "Share of the model", "The table's parameters divided by all parameters of the checkpoint"),
            ("row", "One row", "Bytes read for one token: d × sizeof(dtype); the row stride"),
            ("tying", "Weight tying", "Whether the output projection (d → V) reuses E, and what that saves"),
            ("float32", "float32", "V × d × 4 bytes (1 MB = 1000² bytes, 1 MiB = 1024² bytes)"),
            ("float16", "float16", "V × d × 2 bytes (1 MB = 1000² bytes, 1 MiB = 1024² bytes)"),
            ("bfloat16", "bfloat16", "V × d × 2 bytes: same size as float16, wider exponent, fewer mantissa bits"),
            ("int8", "int8", "V × d × 1 byte, plus a few scale factors that quantisation needs (not counted)"),
            ("adam", "Training with Adam", "Weights + gradient + Adam's two moment estimates: 4 float32 copies"),
            ("factor", "Factorised E ≈ A·B", "A is V × k, B is k × d: V·k + k·d parameters. Move the slider to choose k"),
            ("scale", "√d scaling", "The original Transformer multiplies embeddings by √d_model so they match the scale of sinusoidal positions"),
            ("random", "Random directions", "Cosine of two random Gaussian vectors in d dimensions ≈ N(0, 1/d)"),
        ]
        self.tiles: dict[str, Tile] = {}
        for k, (key, cap, tip) in enumerate(specs):
            tile = Tile(cap, tip)
            self.tiles[key] = tile
            grid.addWidget(tile, k // 4, k % 4)
        for c in range(4):
            grid.setColumnStretch(c, 1)
        lay.addLayout(grid)
        krow = QHBoxLayout()
        klab = QLabel("Factorisation rank k")
        klab.setToolTip("Inner size k of the factorisation E ≈ A (V × k) · B (k × d)")
        self.k_slider = QSlider(Qt.Horizontal)
        self.k_slider.setToolTip("k for the factorised alternative V·k + k·d; it saves parameters while k < V·d / (V + d)")
        self.k_slider.setRange(1, 1)
        self.k_slider.valueChanged.connect(self._on_k_slider_value_changed)
        self.k_value = QLabel("k = 1")
        self.k_value.setFont(mono_font())
        self.k_value.setMinimumWidth(90)
        krow.addWidget(klab)
        krow.addWidget(self.k_slider, 1)
        krow.addWidget(self.k_value)
        lay.addLayout(krow)
        self.stored_note = QLabel("")
        self.stored_note.setObjectName("TileFormula")
        self.stored_note.setWordWrap(True)
        lay.addWidget(self.stored_note)
        lay.addStretch(1)
        self.pages.addTab(page, "Cost card")
        self.pages.setTabToolTip(0, "Parameters and bytes of the loaded table, with their formulas")

    def _build_compare(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        lay.setSpacing(SPACING)
        bg, fg = plot_colors()
        self.compare_glw = pg.GraphicsLayoutWidget()
        self.compare_glw.setBackground(bg)
        self.compare_glw.setToolTip("Bars are on a logarithmic scale: each step right is 10 times more")
        self.compare_glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.compare_glw.ci.setSpacing(SPACING * 3)
        self.param_plot = self.compare_glw.addPlot(row=0, col=0)
        self.bytes_plot = self.compare_glw.addPlot(row=0, col=1)
        self.param_plot.setTitle("Embedding parameters V × d (log scale)", color=fg, size="10pt")
        self.bytes_plot.setTitle(f"Bytes: <span style='color:{REFERENCE_COLOR}'>■</span> float32 "
                                 f"<span style='color:{FP16_COLOR}'>■</span> float16 (log scale)", color=fg, size="10pt")
        self.param_plot.setLabel("bottom", "parameters")
        self.bytes_plot.setLabel("bottom", "bytes")
        self.param_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.6, brushes=[], pen=None)
        self.bytes32_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.36, brush=REFERENCE_COLOR, pen=None)
        self.bytes16_bars = pg.BarGraphItem(x0=[], y=[], width=[], height=0.36, brush=FP16_COLOR, pen=None)
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
        self.bytes_plot.getAxis("left").setStyle(showValues=False)
        self.compare_glw.ci.layout.setColumnStretchFactor(0, 3)
        self.compare_glw.ci.layout.setColumnStretchFactor(1, 2)

        self.compare_table = QTableWidget()
        self.compare_table.setToolTip("The same figures as numbers; the loaded model is in bold")
        self.compare_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.compare_table.verticalHeader().hide()
        self.compare_table.setAlternatingRowColors(True)
        cols = ["model", "V", "d", "parameters V·d", "share", "float32 bytes", "float32", "float16 bytes", "tied"]
        self.compare_table.setColumnCount(len(cols))
        self.compare_table.setHorizontalHeaderLabels(cols)
        hh = self.compare_table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeToContents)
        hh.setStretchLastSection(True)
        tips = ["", "vocabulary size (rows)", "model width (columns)", "V × d", "V·d / all parameters of the model",
                "V × d × 4 bytes", "V × d × 4 bytes in MB (1 MB = 1000² bytes)", "V × d × 2 bytes (bfloat16 the same)",
                "output projection reuses E"]
        for i, tip in enumerate(tips):
            self.compare_table.horizontalHeaderItem(i).setToolTip(tip)

        split = QSplitter(Qt.Vertical)
        split.setChildrenCollapsible(False)
        split.addWidget(self.compare_glw)
        split.addWidget(self.compare_table)
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
        self.pages.addTab(page, "Famous models")
        self.pages.setTabToolTip(1, "The same figures for GPT-2, BERT, Llama 3, Gemma and the original Transformer")

    def _build_why(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(SPACING)
        row = QHBoxLayout()
        lab = QLabel("Tokens")
        self.words_edit = QLineEdit(", ".join(DEFAULT_WORDS))
        self.words_edit.setToolTip("Words to compare, separated by commas or spaces (2 to 6 that the vocabulary "
                                   "holds as single tokens); otherwise the first tokens of the text are used")
        self.words_edit.setPlaceholderText("e.g. cat, dog, airplane")
        self.words_edit.editingFinished.connect(self._on_words_edit_editing_finished)
        lab.setToolTip(self.words_edit.toolTip())
        row.addWidget(lab)
        row.addWidget(self.words_edit, 1)
        lay.addLayout(row)
        self.why_note = QLabel("")
        self.why_note.setObjectName("TileFormula")
        self.why_note.setWordWrap(True)
        lay.addWidget(self.why_note)

        panels = QHBoxLayout()
        panels.setSpacing(SPACING * 2)
        bg, fg = plot_colors()
        # 1: scalar ids
        p1 = QVBoxLayout()
        t1 = QLabel("1 · Ids as numbers")
        t1.setObjectName("PanelTitle")
        self.numberline = pg.PlotWidget(background=bg)
        self.numberline.setToolTip("Each token placed at its id on a number line")
        self.numberline.setMenuEnabled(False)
        self.numberline.setMouseEnabled(False, False)
        self.numberline.hideButtons()
        self.numberline.setFixedHeight(110)
        npi = self.numberline.getPlotItem()
        npi.setLabel("bottom", "token id")
        npi.hideAxis("left")
        style_plot(npi)
        self.numberline_points = pg.ScatterPlotItem(size=11, pen=None, brush=pg.mkBrush(TEXT_TOKENS))
        npi.addItem(self.numberline_points)
        self.numberline_points.sigClicked.connect(self._on_numberline_points_clicked)
        self._numberline_labels = []
        for _ in range(6):
            ti = pg.TextItem(color=fg, anchor=(0.5, 1.2))
            ti.hide()
            npi.addItem(ti)
            self._numberline_labels.append(ti)
        self.id_table = _matrix_table("|i − j|: the distance ids as numbers would impose")
        self.id_caption = QLabel("")
        self.id_caption.setWordWrap(True)
        for w in (t1, self.numberline, self.id_table, self.id_caption):
            p1.addWidget(w)
        # 2: one-hot
        p2 = QVBoxLayout()
        t2 = QLabel("2 · One-hot vectors")
        t2.setObjectName("PanelTitle")
        self.onehot_table = _matrix_table("Above the diagonal: distance ‖e_i − e_j‖; below it: cos(e_i, e_j); one-hot vectors of length V")
        self.onehot_caption = QLabel("")
        self.onehot_caption.setWordWrap(True)
        for w in (t2, self.onehot_table, self.onehot_caption):
            p2.addWidget(w)
        # 3: learned rows
        p3 = QVBoxLayout()
        t3 = QLabel("3 · The table's vectors")
        t3.setObjectName("PanelTitle")
        self.cos_table = _matrix_table("cos(E[i], E[j]) = E[i]·E[j] / (‖E[i]‖ ‖E[j]‖), from the loaded table")
        self.cos_caption = QLabel("")
        self.cos_caption.setWordWrap(True)
        for w in (t3, self.cos_table, self.cos_caption):
            p3.addWidget(w)
        for p in (p1, p2, p3):
            p.addStretch(1)
            panels.addLayout(p, 1)
        lay.addLayout(panels, 1)
        self._cmap = pg.colormap.get(DIVERGING)
        self.pages.addTab(page, "Why vectors")
        self.pages.setTabToolTip(2, "The same tokens as ids, as one-hot vectors and as learned vectors")

    def _build_context(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(SPACING)
        grid = QGridLayout()
        grid.setHorizontalSpacing(SPACING)
        self.word_edit = QLineEdit(DEFAULT_WORD)
        self.word_edit.setToolTip("The word to follow; it must be a single token of the vocabulary")
        self.sentence_edits = [QLineEdit(s) for s in DEFAULT_SENTENCES]
        for k, e in enumerate(self.sentence_edits):
            e.setToolTip(f"Sentence {k + 1}: use the word in a different sense")
            e.textEdited.connect(self._on_sentence_edit_text_edited)
        self.word_edit.textEdited.connect(self._on_sentence_edit_text_edited)
        for r, (name, w) in enumerate((("Word", self.word_edit), ("Sentence 1", self.sentence_edits[0]),
                                       ("Sentence 2", self.sentence_edits[1]))):
            lab = QLabel(name)
            lab.setToolTip(w.toolTip())
            grid.addWidget(lab, r, 0)
            grid.addWidget(w, r, 1)
        lay.addLayout(grid)

        self.same_title = QLabel("The lookup: same id → same row")
        self.same_title.setObjectName("PanelTitle")
        lay.addWidget(self.same_title)
        self.occ_table = QTableWidget()
        self.occ_table.setToolTip("Each occurrence of the word: its sentence, position, id and the row it reads")
        self.occ_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.occ_table.verticalHeader().hide()
        self.occ_table.setFont(mono_font())
        cols = ["sentence", "position", "piece", "token id", "byte offset", "first values of the row"]
        self.occ_table.setColumnCount(len(cols))
        self.occ_table.setHorizontalHeaderLabels(cols)
        self.occ_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.occ_table.horizontalHeader().setStretchLastSection(True)
        self.occ_table.setFixedHeight(92)
        lay.addWidget(self.occ_table)
        self.same_verdict = QLabel("")
        self.same_verdict.setObjectName("Verdict")
        self.same_verdict.setWordWrap(True)
        self.same_verdict.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.same_verdict)

        self.ctx_title = QLabel("The model's first layer: context changes the vector")
        self.ctx_title.setObjectName("PanelTitle")
        lay.addWidget(self.ctx_title)
        self.ctx_table = QTableWidget()
        self.ctx_table.setToolTip("Cosine between the two occurrences at each stage of the model")
        self.ctx_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.ctx_table.verticalHeader().hide()
        self.ctx_table.setFont(mono_font())
        self.ctx_table.setColumnCount(3)
        self.ctx_table.setHorizontalHeaderLabels(["stage", "cos(occurrence 1, occurrence 2)", "what it includes"])
        self.ctx_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.ctx_table.horizontalHeader().setStretchLastSection(True)
        self.ctx_table.setFixedHeight(120)
        lay.addWidget(self.ctx_table)
        self.ctx_status = QLabel("")
        self.ctx_status.setWordWrap(True)
        self.ctx_status.setObjectName("TileFormula")
        lay.addWidget(self.ctx_status)
        self.scale_note = QLabel("")
        self.scale_note.setWordWrap(True)
        self.scale_note.setToolTip("The original Transformer multiplies the looked-up row by √d_model before adding positions")
        lay.addWidget(self.scale_note)
        lay.addStretch(1)
        self.pages.addTab(page, "Context-free")
        self.pages.setTabToolTip(3, "One word in two sentences reads one row; only later layers add context")

    # -- state ---------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        """A new table: every figure, the comparison and the demonstrations."""
        if self._runner is not None:
            self._runner.cancel(emit=False)
        self._context = None
        self._update_card()
        self._update_compare()
        if table is not None and not same_row(table, [e.text() for e in self.sentence_edits], self.word_edit.text()).ok:
            self._fallback_sentences(table)
        self._update_why()
        self._update_same()

    def _on_state_tokens_changed(self, _tokens) -> None:
        """The text changed: only the "why vectors" fallback depends on it."""
        if self._why is None or self._why.from_text:
            self._update_why()

    def _fallback_sentences(self, table) -> None:
        """Tables without "bank": a word repeated in the example text, or the defaults."""
        for text in (self._state.text, table.example_text):
            word = repeated_word(table, text or "")
            if word:
                self.word_edit.setText(word)
                self.sentence_edits[0].setText(text)
                self.sentence_edits[1].setText("")
                return
        self.word_edit.setText(DEFAULT_WORD)
        for e, s in zip(self.sentence_edits, DEFAULT_SENTENCES):
            e.setText(s)

    # -- cost card -----------------------------------------------------------------------
    def _update_card(self) -> None:
        table = self._state.table
        if table is None:
            return
        v, d = table.vocab_size, table.dim
        c = cost.table_cost(v, d, table.model_params)
        self.card_title.setText(f"{table.name}: E is V × d = {v:,} × {d:,}")
        t = self.tiles
        t["params"].set(f"{c.params:,}", f"{cost.format_count(c.params)} parameters", f"V × d = {v:,} × {d:,}")
        if c.model_share is not None:
            t["share"].set(f"{100 * c.model_share:.1f} %", f"of {table.model_params:,} parameters",
                           f"V·d / all parameters = {c.params:,} / {table.model_params:,}")
        else:
            t["share"].set("unknown", "the whole model's size is not known", "this table has no checkpoint around it")
        row_sub = f"{d:,} values × 4 bytes"
        if table.dtype != "float32":
            row_sub = f"as stored ({table.dtype}): {table.row_bytes:,} bytes"
        t["row"].set(f"{c.row_bytes_float32:,} bytes", row_sub, f"d × 4 bytes in float32; offset of row i = i × {c.row_bytes_float32:,}")
        if table.tied is True:
            t["tying"].set("tied", f"saves {c.tying_saves:,} parameters", "the output projection d → V reuses E (same tensor)")
        elif table.tied is False:
            t["tying"].set("not tied", f"tying would save {c.tying_saves:,}",
                           "the output projection d → V is a second V × d matrix")
        else:
            t["tying"].set("none", f"a tied one would reuse these {c.tying_saves:,}",
                           "no output projection in the checkpoint, or it cannot be told")
        for db in cost.bytes_per_dtype(v, d):
            t[db.dtype].set(cost.format_mb(db.bytes), f"{cost.format_mib(db.bytes)} · {db.bytes:,} bytes",
                            f"V × d × {db.itemsize} byte{'s' if db.itemsize > 1 else ''}")
        t["adam"].set(cost.format_mb(c.adam_bytes_float32), f"{cost.format_mib(c.adam_bytes_float32)} · ≈ 4 × float32",
                      "weights + gradient + 2 Adam moments, float32")
        s = cost.embedding_scale(d)
        t["scale"].set(f"× {s:.1f}", f"√d = √{d:,}", f"original Transformer: √512 = {cost.embedding_scale(512):.1f}")
        t["random"].set(f"σ = {random_cosine_std(d):.4f}", f"99.7 % of pairs: |cos| ≤ {random_cosine_bound(d):.3f}",
                        f"1/√d; {100 * (1 - shell_volume_fraction(d)):.3g} % of a ball's volume lies in its outer 1 % shell")
        with signals_blocked(self.k_slider):
            self.k_slider.setRange(1, max(1, d))
            self.k_slider.setValue(max(1, min(d, 128 if d > 256 else max(1, d // 4))))
        self._update_factor()
        note = f"Stored as {table.dtype}: {table.stored_bytes:,} bytes ({cost.format_bytes(table.stored_bytes)})."
        if table.disk_bytes:
            note += f" The checkpoint's files: {cost.format_bytes(table.disk_bytes)}."
        note += " 1 MB = 1,000,000 bytes; 1 MiB = 1,048,576 bytes."
        self.stored_note.setText(note)

    def _update_factor(self) -> None:
        table = self._state.table
        if table is None:
            return
        v, d, k = table.vocab_size, table.dim, self.k_slider.value()
        p, fp = cost.params(v, d), cost.factorised_params(v, d, k)
        self.k_value.setText(f"k = {k:,}")
        ratio = fp / p if p else float("nan")
        verdict = f"{100 * ratio:.1f} % of V·d" if ratio <= 1 else f"{ratio:.2f} × V·d (more!)"
        self.tiles["factor"].set(f"{fp:,}", verdict,
                                 f"V·k + k·d = {v:,}·{k:,} + {k:,}·{d:,}; saves only while k < {cost.factorised_break_even(v, d):,.0f}")

    def _on_k_slider_value_changed(self, _value: int) -> None:
        """The factorisation rank moved."""
        self._update_factor()

    # -- comparison ----------------------------------------------------------------------
    def _update_compare(self) -> None:
        table = self._state.table
        loaded = None
        if table is not None:
            name = table.name if len(table.name) <= 22 else table.name[:21] + "…"
            loaded = (f"{name} (loaded)", table.vocab_size, table.dim, table.model_params, table.tied)
        rows = cost.comparison(loaded)
        self._comparison = rows
        n = len(rows)
        y = np.arange(n, dtype=float)
        params = np.array([max(r.cost.params, 1) for r in rows], float)
        b32 = np.array([max(r.cost.bytes_by_dtype["float32"], 1) for r in rows], float)
        b16 = np.array([max(r.cost.bytes_by_dtype["float16"], 1) for r in rows], float)
        lp, l32, l16 = np.log10(params), np.log10(b32), np.log10(b16)
        p0 = min(0.0, np.floor(lp.min()) - 0) if lp.min() < 1 else np.floor(lp.min()) - 1
        b0 = np.floor(l16.min()) - 1
        brushes = [pg.mkBrush(ACCENT if r.loaded else REFERENCE_COLOR) for r in rows]
        self.param_bars.setOpts(x0=np.full(n, p0), y=y, width=lp - p0, height=0.6, brushes=brushes)
        self.bytes32_bars.setOpts(x0=np.full(n, b0), y=y - 0.19, width=l32 - b0, height=0.36)
        self.bytes16_bars.setOpts(x0=np.full(n, b0), y=y + 0.19, width=l16 - b0, height=0.36)
        names = [(float(i), r.name) for i, r in enumerate(rows)]
        self.param_plot.getAxis("left").setTicks([names])
        self.bytes_plot.getAxis("left").setTicks([[(float(i), "") for i in range(n)]])
        self.param_plot.getAxis("bottom").setTicks([_log_ticks(p0, lp.max() + 1.2, _short_count)])
        self.bytes_plot.getAxis("bottom").setTicks([_log_ticks(b0, l32.max() + 0.2, _short_bytes)])
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
            if i < n:
                r = rows[i]
                share = f" · {100 * r.cost.model_share:.1f} %" if r.cost.model_share is not None else ""
                ti.setText(f"{cost.format_count(r.cost.params)}{share}")
                ti.setPos(lp[i] + 0.05, float(i))
                ti.show()
            else:
                ti.hide()
        self._fill_compare_table(rows)

    def _fill_compare_table(self, rows: list[cost.NamedCost]) -> None:
        t = self.compare_table
        t.setRowCount(len(rows))
        bold = QFont(t.font())
        bold.setBold(True)
        for i, r in enumerate(rows):
            c = r.cost
            share = f"{100 * c.model_share:.1f} %" if c.model_share is not None else "–"
            tied = {True: "yes", False: "no", None: "–"}[r.tied]
            vals = [r.name, f"{c.vocab_size:,}", f"{c.dim:,}", f"{c.params:,}", share,
                    f"{c.bytes_by_dtype['float32']:,}", cost.format_mb(c.bytes_by_dtype['float32']),
                    f"{c.bytes_by_dtype['float16']:,}", tied]
            for j, text in enumerate(vals):
                item = QTableWidgetItem(text)
                if j > 0:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    if r.loaded:
                        item.setFont(bold)
                elif r.loaded:
                    item.setFont(bold)
                if r.loaded:
                    item.setForeground(QColor(ACCENT))
                t.setItem(i, j, item)

    def comparison_csv(self) -> str:
        """The comparison as CSV (name, V, d, parameters, share, bytes float32, bytes float16, tied)."""
        lines = ["model,V,d,parameters,share_of_model,bytes_float32,bytes_float16,tied"]
        for r in self._comparison:
            c = r.cost
            share = f"{c.model_share:.6f}" if c.model_share is not None else ""
            name = r.name.replace('"', "'")
            lines.append(f'"{name}",{c.vocab_size},{c.dim},{c.params},{share},'
                         f"{c.bytes_by_dtype['float32']},{c.bytes_by_dtype['float16']},{'' if r.tied is None else r.tied}")
        return "\n".join(lines) + "\n"

    def _on_copy_button_clicked(self) -> None:
        """Copy the comparison as CSV."""
        QGuiApplication.clipboard().setText(self.comparison_csv())

    def _on_export_button_clicked(self) -> None:
        """Save the charts as PNG or SVG."""
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", "embedding-cost.png", "PNG image (*.png);;SVG (*.svg)")
        if path:
            self.export_chart(path)

    def export_chart(self, path: str) -> None:
        """Write both comparison charts to ``path`` (.png or .svg)."""
        export_graphics(self.compare_glw.ci, path)

    # -- why vectors ---------------------------------------------------------------------
    def _on_words_edit_editing_finished(self) -> None:
        """New words for the three panels."""
        self._update_why()

    def _update_why(self) -> None:
        table = self._state.table
        if table is None:
            self.why_note.setText("Open a model to compare ids, one-hot vectors and learned vectors.")
            return
        words = [w for w in self.words_edit.text().replace(",", " ").split() if w]
        try:
            why = why_vectors(table, words, self._state.tokens)
        except Exception as exc:  # a broken row or tokenizer must not take the view down
            self.why_note.setText(f"Cannot compare these tokens: {exc}")
            return
        self._why = why
        if why.n < 2:
            self.why_note.setText("Type at least two words the vocabulary holds as single tokens "
                                  "(or some text with two different tokens).")
        elif why.from_text:
            miss = ", ".join(why.missing) or "the words"
            self.why_note.setText(f"This vocabulary has no single token for {miss}: the first tokens of the text are used.")
        elif why.missing:
            self.why_note.setText(f"Not single tokens here, left out: {', '.join(why.missing)}.")
        else:
            self.why_note.setText("Same tokens, three ways of turning them into numbers.")
        labels = [f"{lab} ({i:,})" for lab, i in zip(why.labels, why.ids)]
        short = list(why.labels)
        # panel 1
        ids = why.ids.astype(float)
        self.numberline_points.setData(x=ids, y=np.zeros(why.n), data=list(why.ids))
        for k, ti in enumerate(self._numberline_labels):
            if k < why.n:
                ti.setText(short[k])
                ti.setPos(ids[k], 0.0)
                ti.show()
            else:
                ti.hide()
        if why.n:
            span = max(1.0, ids.max() - ids.min())
            self.numberline.setXRange(ids.min() - 0.15 * span, ids.max() + 0.15 * span, padding=0)
            self.numberline.setYRange(-0.5, 1.0, padding=0)
        _fill_matrix(self.id_table, short, why.id_distance, lambda x: f"{int(x):,}")
        if why.n >= 3:
            a, b, c = short[:3]
            self.id_caption.setText(
                f"|{b} − {a}| = {why.id_distance[0, 1]:,} and |{c} − {b}| = {why.id_distance[1, 2]:,}: distances "
                "the numbering invents. Ids are names, not quantities.")
        else:
            self.id_caption.setText("Ids are names, not quantities: |i − j| is a distance the numbering invents.")
        _fill_matrix(self.onehot_table, short,
                     np.where(np.eye(why.n, dtype=bool), why.onehot_distance, why.onehot_distance), lambda x: f"{x:.3f}")
        for i in range(why.n):
            for j in range(why.n):
                item = self.onehot_table.item(i, j)
                # above the diagonal the distance, below it the cosine: both fit a narrow cell
                item.setText("–" if i == j else (f"{why.onehot_distance[i, j]:.3f}" if j > i
                                                  else f"cos {why.onehot_cosine[i, j]:.0f}"))
                item.setTextAlignment(Qt.AlignCenter)
                item.setData(Qt.UserRole + 1, float(why.onehot_cosine[i, j]))
        _fit_height(self.onehot_table)
        self.onehot_caption.setText(
            f"Above the diagonal the distance, below it the cosine. Vectors of length V = {table.vocab_size:,} with a single 1. Every pair is √2 = {np.sqrt(2):.3f} apart "
            "and at cosine 0: no order, but also no notion of similar.")
        _fill_matrix(self.cos_table, short, why.cosine,
                     lambda x: "n/a" if not np.isfinite(x) else f"{x:+.3f}", self._cos_color)
        self.cos_caption.setText(
            f"Cosines of the learned rows (d = {table.dim:,}): related tokens can be close and unrelated ones far. "
            + ("(A random table has no meaning yet: its cosines are noise near 0.)" if table.kind == "random" else ""))
        self.id_table.setToolTip("|i − j| between the ids: " + ", ".join(labels))

    def _cos_color(self, x: float) -> QColor:
        c = self._cmap.map((float(x) + 1) / 2, mode="qcolor")
        c.setAlpha(110)
        return c

    def _on_numberline_points_clicked(self, _item, points, _ev=None) -> None:
        """A token on the number line was clicked: select it."""
        if len(points):
            self.token_selected.emit(int(points[0].data()))

    # -- context-free --------------------------------------------------------------------
    def _on_sentence_edit_text_edited(self, _text: str) -> None:
        """The word or a sentence changed: recompute (the model run is debounced)."""
        self._update_same()

    def _update_same(self) -> None:
        table = self._state.table
        self._context = None
        if table is None:
            self.same_verdict.setText("Open a model, then type a word in two sentences.")
            return
        sentences = [e.text() for e in self.sentence_edits]
        same = same_row(table, sentences, self.word_edit.text())
        self._same = same
        d = table.dim
        s = cost.embedding_scale(d)
        self.scale_note.setText(
            f"Note: the original Transformer multiplies each looked-up row by √d_model before adding positions "
            f"(√512 = {cost.embedding_scale(512):.1f}); for this table that factor would be √{d:,} = {s:.1f}.")
        self.occ_table.setRowCount(len(same.occurrences))
        for i, o in enumerate(same.occurrences):
            vals = same.rows[i][:4] if same.ok else table.row(o.id)[:4]
            first = "[" + ", ".join(f"{x:+.4f}" for x in vals) + ", …]"
            cells = [f"{o.sentence + 1}", f"{o.position}", o.piece, f"{o.id:,}",
                     _hex_offset(table, o.id), first]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment((Qt.AlignRight if j in (0, 1, 3, 4) else Qt.AlignLeft) | Qt.AlignVCenter)
                self.occ_table.setItem(i, j, item)
        if not same.ok:
            self.same_verdict.setText(same.message)
            self.same_verdict.setStyleSheet("")
        else:
            ids_same = "the same id" if same.same_id else "different ids"
            eq = "identical" if same.rows_equal else "different"
            self.same_verdict.setText(
                f"Both occurrences have {ids_same} ({same.occurrences[0].id:,}), so they read {'the same row' if same.same_id else 'different rows'}: "
                f"the vectors are {eq} (largest |difference| = {same.max_abs_difference:.6g}). "
                "The lookup sees neither the neighbours nor the position.")
            self.same_verdict.setStyleSheet(f"color: {ACCENT};" if same.rows_equal else "")
        self._request_context()

    def set_active(self, active: bool) -> None:
        """The app marks the view inactive while its tab is hidden: the
        model's first layer (seconds of work) runs only once it is shown."""
        self._active = bool(active)
        if self._active and self._stale:
            self._stale = False
            self._request_context()

    def _request_context(self) -> None:
        if not self._active:
            self._stale = True
            return
        table = self._state.table
        self._fill_context_table(None)
        folder, reason = context_support(table)
        if folder is None:
            self._set_context_status("Contextual vectors are not available for this table. " + reason)
            self._context_timer.stop()
            return
        if self._same is None or not self._same.ok:
            self._set_context_status("Contextual vectors need two occurrences of the word.")
            self._context_timer.stop()
            return
        if self._runner is None:
            self._set_context_status("Contextual vectors are not available (no background worker).")
            return
        self._set_context_status("Running the model's first layer on both sentences…")
        self._context_timer.start()

    def _on_context_timer_timeout(self) -> None:
        """The typing paused: run the model's first layer in the background."""
        table = self._state.table
        folder, _ = context_support(table)
        if folder is None or self._same is None or not self._same.ok or self._runner is None:
            return
        picks = [(o.sentence, o.position) for o in self._same.occurrences]
        self._runner.start(contextual_job, folder, self._same.sequences, picks)

    def _on_runner_progressed(self, fraction: float, message: str) -> None:
        """Progress of the first-layer run."""
        self._set_context_status(f"{message} ({100 * fraction:.0f} %)")

    def _on_runner_succeeded(self, result) -> None:
        """The first layer ran: show the cosines."""
        if not isinstance(result, ContextResult):
            return
        self._context = result
        self._fill_context_table(result)
        c1 = result.cosine(result.stages[-1])
        self._set_context_status(
            f"After one transformer layer the two “{self.word_edit.text().strip()}” vectors differ: cos = {c1:.4f} < 1. "
            "Attention mixed in the neighbouring words; the table row itself never changes.")

    def _on_runner_failed(self, exc: BaseException) -> None:
        """The model could not be run."""
        self._set_context_status(f"The model could not be run here: {user_message(exc)}")

    def _set_context_status(self, text: str) -> None:
        self._context_message = text
        self.ctx_status.setText(text)

    def _fill_context_table(self, result: ContextResult | None) -> None:
        notes = {
            "table row": "E[id]: the lookup alone",
            "embedding layer output": "row + position (+ segment) embeddings, normalised",
            "after transformer layer 1": "after attention over the sentence and the feed-forward block",
        }
        t = self.ctx_table
        if result is None:
            t.setRowCount(0)
            return
        t.setRowCount(len(result.stages))
        for i, stage in enumerate(result.stages):
            c = result.cosine(stage)
            for j, text in enumerate((stage, f"{c:.4f}", notes.get(stage, ""))):
                item = QTableWidgetItem(text)
                if j == 1:
                    item.setData(Qt.UserRole, float(c))
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    if c < 0.99995:
                        item.setForeground(QColor(TEXT_TOKENS))
                t.setItem(i, j, item)

    # -- for tests -----------------------------------------------------------------------
    @property
    def why(self) -> WhyVectors | None:
        return self._why

    @property
    def same(self) -> SameRow | None:
        return self._same

    @property
    def context(self) -> ContextResult | None:
        return self._context

    @property
    def context_message(self) -> str:
        return self._context_message


def _hex_offset(table, token_id: int) -> str:
    try:
        return f"0x{table.byte_offset(token_id):X}"
    except (IndexError, TypeError, ValueError):
        return "–"


def _short_count(n: float) -> str:
    for unit, p in (("B", 9), ("M", 6), ("k", 3)):
        if n >= 10.0**p:
            return f"{n / 10.0**p:g} {unit}"
    return f"{n:g}"


def _short_bytes(n: float) -> str:
    for unit, p in (("TB", 4), ("GB", 3), ("MB", 2), ("kB", 1)):
        if n >= 1000**p:
            return f"{n / 1000**p:g} {unit}"
    return f"{n:g} B"


def _log_ticks(lo: float, hi: float, fmt) -> list[tuple[float, str]]:
    """Ticks at powers of ten between ``lo`` and ``hi`` (log10 units)."""
    k0, k1 = int(np.ceil(lo)), int(np.floor(hi))
    step = max(1, (k1 - k0 + 1) // 6)
    return [(float(k), fmt(10.0**k)) for k in range(k0, k1 + 1, step)]
