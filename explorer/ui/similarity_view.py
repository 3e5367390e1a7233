"""How alike tokens are: the similarity matrix of the text's tokens next to
the two regimes without learned vectors (scalar ids, one-hot vectors), and
the random-vector check of high-dimensional geometry."""

from __future__ import annotations

import csv

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, QStringListModel, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFileDialog,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStackedLayout,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.errors import user_message
from ..core.geometry import (
    CosineCheck,
    id_distance_matrix,
    one_hot_distance_matrix,
    random_vector_check_job,
    similarity_matrix,
)
from ..core.projection import find_token_ids
from ..core.tokens import display_piece, short_piece
from ..state import MAX_EXTRA_TOKENS, AppState
from .export import export_graphics
from .style import ACCENT, DIVERGING, SEQUENTIAL, SPACING, TEXT_TOKENS, plot_colors, style_plot

METRICS = [
    ("cosine", "Cosine similarity", "cos(a, b) = a·b / (‖a‖ ‖b‖), from −1 (opposite) through 0 (orthogonal) to 1"),
    ("dot", "Dot product", "a·b = Σ_j a_j b_j: cosine scaled by both norms"),
    ("euclidean", "Euclidean distance", "‖a − b‖ = sqrt(Σ_j (a_j − b_j)²): 0 for the same row, larger is less alike"),
]
#: values are written in the cells up to this many tokens
CELL_TEXT_MAX = 14
#: tick labels on every row up to this many tokens
TICK_ALL_MAX = 40
N_PAIRS = 5000


#: the side maps are small: values are written only for this many tokens or fewer
SIDE_TEXT_MAX = 6


class _Heatmap:
    """One square heatmap with its highlight rectangles and a pool of cell texts."""

    def __init__(self, plot: pg.PlotItem, title: str):
        self.plot = plot
        self.title = title
        _bg, fg = plot_colors()
        plot.setTitle(title, color=fg, size="10pt")
        plot.invertY(True)
        plot.setAspectLocked(True)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setMouseEnabled(False, False)
        style_plot(plot)
        self.image = pg.ImageItem()
        plot.addItem(self.image)
        pen = pg.mkPen(ACCENT, width=2)
        pen.setCosmetic(True)
        self.row_rect = QGraphicsRectItem()
        self.row_rect.setPen(pen)
        self.col_rect = QGraphicsRectItem()
        self.col_rect.setPen(pen)
        cell_pen = pg.mkPen(ACCENT, width=3.5)
        cell_pen.setCosmetic(True)
        self.cell_rect = QGraphicsRectItem()
        self.cell_rect.setPen(cell_pen)
        for r in (self.row_rect, self.col_rect, self.cell_rect):
            r.setZValue(10)
            plot.addItem(r)
            r.hide()
        self.texts: list[pg.TextItem] = []
        self.values = np.zeros((0, 0))

    def set_values(self, values: np.ndarray, levels: tuple[float, float], cmap) -> None:
        self.values = values
        n = values.shape[0]
        self.image.setColorMap(cmap)
        if n:
            self.image.setImage(np.nan_to_num(values), levels=levels, autoLevels=False)
            self.image.setRect(QRectF(0, 0, n, n))
            self.image.show()
        else:
            self.image.hide()
        self.plot.setRange(xRange=(0, max(n, 1)), yRange=(0, max(n, 1)), padding=0.0)

    def write_cells(self, fmt: str, levels: tuple[float, float], cmap, limit: int = CELL_TEXT_MAX) -> None:
        n = self.values.shape[0]
        want = n * n if n <= limit else 0
        font = QFont()
        font.setPointSize(8 if n > 8 else 9)
        while len(self.texts) < want:
            t = pg.TextItem("", anchor=(0.5, 0.5))
            t.setZValue(5)
            self.plot.addItem(t, ignoreBounds=True)
            self.texts.append(t)
        lo, hi = levels
        k = 0
        for r in range(n if want else 0):
            for c in range(n):
                v = self.values[r, c]
                t = self.texts[k]
                k += 1
                frac = 0.5 if hi == lo else (float(np.clip(v, lo, hi)) - lo) / (hi - lo)
                bg = cmap.map(frac, mode="qcolor")
                light = bg.lightnessF() < 0.5
                t.setText(fmt.format(v), color="#ffffff" if light else "#1a1a1a")
                t.setFont(font)
                t.setPos(c + 0.5, r + 0.5)
                t.show()
        for t in self.texts[k:]:
            t.hide()

    def set_ticks(self, labels: list[str], bottom: bool = True) -> None:
        n = len(labels)
        step = 1 if n <= TICK_ALL_MAX else int(np.ceil(n / TICK_ALL_MAX))
        ticks = [(i + 0.5, labels[i]) for i in range(0, n, step)]
        self.plot.getAxis("left").setTicks([ticks, []])
        # the small side maps share the main map's order: their bottom labels would only collide
        self.plot.getAxis("bottom").setTicks([ticks if bottom else [], []])
        self.plot.getAxis("bottom").setStyle(tickTextOffset=4)

    def highlight(self, row: int, n: int, pair: tuple[int, int] | None) -> None:
        if 0 <= row < n:
            self.row_rect.setRect(QRectF(0, row, n, 1))
            self.col_rect.setRect(QRectF(row, 0, 1, n))
            self.row_rect.show()
            self.col_rect.show()
        else:
            self.row_rect.hide()
            self.col_rect.hide()
        if pair is not None and 0 <= pair[0] < n and 0 <= pair[1] < n:
            self.cell_rect.setRect(QRectF(pair[1], pair[0], 1, 1))
            self.cell_rect.show()
        else:
            self.cell_rect.hide()

    def cell_at(self, scene_pos) -> tuple[int, int] | None:
        vb = self.plot.getViewBox()
        if not self.plot.isVisible() or not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        r, c = int(np.floor(p.y())), int(np.floor(p.x()))
        n = self.values.shape[0]
        if 0 <= r < n and 0 <= c < n:
            return r, c
        return None


class SimilarityView(QWidget):
    """Similarity matrix of the text's tokens and added tokens, with the
    scalar-id and one-hot regimes beside it and the random-vector check.

    Signals
    -------
    token_selected(int)
        The user clicked a cell (the row's token id).
    pair_selected(int, int)
        The user clicked a cell: (row token id, column token id).
    token_added(int)
        The user asked to add a token (search box).
    """

    token_selected = Signal(int)
    pair_selected = Signal(int, int)
    token_added = Signal(int)

    def __init__(self, state: AppState, runner=None, parent=None):
        super().__init__(parent)
        self._state = state
        self._runner = runner
        self._ids: list[int] = []
        self._pair: tuple[int, int] | None = None
        self._check: CosineCheck | None = None
        self._check_spec = ""
        bg, fg = plot_colors()
        self._fg = fg

        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)
        bar = QHBoxLayout()
        bar.setSpacing(SPACING)
        bar.addWidget(QLabel("Measure"))
        self.metric_combo = QComboBox()
        for key, text, tip in METRICS:
            self.metric_combo.addItem(text, key)
            self.metric_combo.setItemData(self.metric_combo.count() - 1, tip, Qt.ToolTipRole)
        self.metric_combo.setToolTip("How the learned vectors are compared")
        self.metric_combo.currentIndexChanged.connect(self._on_metric_combo_changed)
        bar.addWidget(self.metric_combo)
        bar.addSpacing(SPACING)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Add a token…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(f"Type a piece (or #id) and press Enter to add it to the matrix "
                               f"(up to {MAX_EXTRA_TOKENS} tokens in all)")
        self._completer_model = QStringListModel(self)
        comp = QCompleter(self._completer_model, self)
        comp.setCaseSensitivity(Qt.CaseInsensitive)
        comp.setMaxVisibleItems(12)
        self.search.setCompleter(comp)
        self.search.returnPressed.connect(self._on_search_return_pressed)
        bar.addWidget(self.search, 1)
        self.count_label = QLabel()
        self.count_label.setToolTip("Distinct tokens in the matrix: the text's (special tokens left out) "
                                    f"and the added ones, at most {MAX_EXTRA_TOKENS}")
        bar.addWidget(self.count_label)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save the plots (PNG/SVG) or the similarity matrix (CSV)")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Matrices as PNG…", lambda: self._export_dialog("matrix", "png"))
        menu.addAction("Matrices as SVG…", lambda: self._export_dialog("matrix", "svg"))
        menu.addAction("Random-vector histograms as PNG…", lambda: self._export_dialog("random", "png"))
        menu.addAction("Random-vector histograms as SVG…", lambda: self._export_dialog("random", "svg"))
        menu.addAction("Similarity matrix as CSV…", lambda: self._export_dialog("csv", "csv"))
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        outer.addLayout(bar)

        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        outer.addWidget(self.pages, 1)

        # -- page 1: three regimes ------------------------------------------------------------
        page1 = QWidget()
        self._stack = QStackedLayout(page1)
        self.empty = QLabel("Open a model and type some text to compare its tokens")
        self.empty.setObjectName("EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setWordWrap(True)
        mats = QWidget()
        ml = QVBoxLayout(mats)
        ml.setContentsMargins(0, 0, 0, 0)
        ml.setSpacing(4)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(bg)
        self.glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.glw.ci.setSpacing(SPACING * 2)
        ml.addWidget(self.glw, 1)
        self.info = QLabel("Hover a cell to read its value; click it to select that pair")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextSelectableByMouse)
        ml.addWidget(self.info)
        self._stack.addWidget(self.empty)
        self._stack.addWidget(mats)
        self._mats = mats
        self.pages.addTab(page1, "Three ways to compare tokens")
        self.pages.setTabToolTip(0, "Learned vectors next to scalar ids and one-hot vectors")

        self.main = _Heatmap(self.glw.addPlot(row=0, col=0, rowspan=2), "Learned vectors: cosine similarity")
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get(DIVERGING), interactive=False,
                                        width=14)
        self.colorbar.setImageItem(self.main.image)
        self.colorbar.axis.enableAutoSIPrefix(False)
        self.glw.addItem(self.colorbar, row=0, col=1, rowspan=2)
        self.ids_map = _Heatmap(self.glw.addPlot(row=0, col=2), "Scalar ids: |i − j|")
        self.onehot = _Heatmap(self.glw.addPlot(row=1, col=2), "One-hot vectors: ‖e_i − e_j‖")
        self.glw.ci.layout.setColumnStretchFactor(0, 5)
        self.glw.ci.layout.setColumnStretchFactor(2, 3)
        self._maps = [self.main, self.ids_map, self.onehot]
        self.glw.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.glw.scene().sigMouseClicked.connect(self._on_scene_clicked)

        # -- page 2: random vectors ----------------------------------------------------------
        page2 = QWidget()
        pl = QVBoxLayout(page2)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(4)
        self.hist_glw = pg.GraphicsLayoutWidget()
        self.hist_glw.setBackground(bg)
        self.hist_glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.hist_glw.ci.setSpacing(SPACING * 3)
        pl.addWidget(self.hist_glw, 1)
        self.facts = QLabel("Open a model to compare its rows with random vectors")
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.facts.setContentsMargins(SPACING, 0, SPACING, SPACING)
        pl.addWidget(self.facts)
        self.pages.addTab(page2, "Random vectors")
        self.pages.setTabToolTip(1, "Cosines of random Gaussian vectors at the table's d against its real rows")
        self.rand_plot = self.hist_glw.addPlot(row=0, col=0)
        self.real_plot = self.hist_glw.addPlot(row=0, col=1)
        quiet = QColor(fg)
        quiet.setAlpha(90)
        self.rand_hist = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(quiet),
                                         pen=pg.mkPen(fg, width=1))
        self.rand_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=2.5))
        self.rand_band = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(0, 163, 108, 28),
                                             pen=pg.mkPen(ACCENT, width=1, style=Qt.DashLine))
        real_brush = QColor(TEXT_TOKENS)
        real_brush.setAlpha(120)
        self.real_hist = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(real_brush),
                                         pen=pg.mkPen(TEXT_TOKENS, width=1))
        self.real_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=2, style=Qt.DashLine))
        for plot, title in ((self.rand_plot, "Random Gaussian vectors"), (self.real_plot, "Rows of this table")):
            plot.setTitle(title, color=fg, size="10pt")
            plot.setLabel("bottom", "cosine of a random pair")
            plot.setLabel("left", "density (per unit of cosine)")
            plot.setMenuEnabled(False)
            plot.showGrid(x=True, y=True, alpha=0.12)
            style_plot(plot)
        self.rand_plot.addItem(self.rand_band)
        self.rand_plot.addItem(self.rand_hist)
        self.rand_plot.addItem(self.rand_curve)
        self.real_plot.addItem(self.real_hist)
        self.real_plot.addItem(self.real_curve)
        self.pages.currentChanged.connect(self._on_pages_current_changed)

        state.model_changed.connect(self._on_state_model_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)
        state.extra_tokens_changed.connect(self._on_state_extra_tokens_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        if runner is not None:
            runner.succeeded.connect(self._on_runner_succeeded)
            runner.failed.connect(self._on_runner_failed)
        if state.table is not None:
            self._on_state_model_changed(state.table)

    # -- public -----------------------------------------------------------------------
    @property
    def metric(self) -> str:
        return self.metric_combo.currentData()

    def set_metric(self, metric: str) -> None:
        self.metric_combo.setCurrentIndex(self.metric_combo.findData(metric))

    def token_ids(self) -> list[int]:
        """The tokens of the matrix, in order (rows and columns)."""
        return list(self._ids)

    def matrix(self) -> np.ndarray:
        """The learned-vector matrix shown (n, n)."""
        return self.main.values.copy()

    def id_distances(self) -> np.ndarray:
        return self.ids_map.values.copy()

    def one_hot_distances(self) -> np.ndarray:
        return self.onehot.values.copy()

    def cell_texts(self) -> list[str]:
        """Texts written in the learned matrix's cells, row by row."""
        return [t.textItem.toPlainText() for t in self.main.texts if t.isVisible()]

    def value_text(self, row_id: int, col_id: int) -> str:
        """The value of a cell as the view writes it."""
        r, c = self._ids.index(row_id), self._ids.index(col_id)
        return self._fmt().format(self.main.values[r, c])

    def check(self) -> CosineCheck | None:
        return self._check

    def show_page(self, index: int) -> None:
        self.pages.setCurrentIndex(index)

    def select_cell(self, row: int, col: int) -> None:
        """Select the pair of a cell (row, col), as a click does."""
        if not (0 <= row < len(self._ids) and 0 <= col < len(self._ids)):
            return
        a, b = self._ids[row], self._ids[col]
        self._pair = (a, b)
        self._describe_cell(row, col)
        self._draw_highlight()
        self.pair_selected.emit(a, b)
        self.token_selected.emit(a)

    # -- state ------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        # a check still running is for the old table: its result must not be shown for this one
        if self._runner is not None and self._runner.running:
            self._runner.cancel(emit=False)
        self._check_spec = ""
        self._pair = None
        self._check = None
        self._completer_model.setStringList(table.completion_pieces() if table is not None else [])
        self._rebuild()
        self._clear_check()
        if self.pages.currentIndex() == 1:
            self._start_check()

    def _on_state_tokens_changed(self, _tokens) -> None:
        self._rebuild()

    def _on_state_extra_tokens_changed(self, _ids) -> None:
        self._rebuild()

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._draw_highlight()

    def _on_metric_combo_changed(self, _i: int) -> None:
        self._rebuild()

    def _on_pages_current_changed(self, index: int) -> None:
        # the measure and the search act on the matrices, not on the random-vector page
        self.metric_combo.setEnabled(index == 0)
        self.search.setEnabled(index == 0)
        if index == 1:
            self._start_check()

    def _on_search_return_pressed(self) -> None:
        table = self._state.table
        if table is None:
            return
        hits = find_token_ids(table, self.search.text(), limit=1)
        if not hits:
            self.info.setText(f"No token “{self.search.text()}” in this vocabulary")
            return
        self.token_added.emit(hits[0])
        self.search.clear()

    # -- matrices -------------------------------------------------------------------------
    def _fmt(self) -> str:
        # narrower cells past 8 tokens: two decimals fit where three overflow
        if len(self._ids) > 8:
            return {"cosine": "{:+.2f}", "dot": "{:+.2g}", "euclidean": "{:.2g}"}[self.metric]
        return {"cosine": "{:+.3f}", "dot": "{:+.3g}", "euclidean": "{:.3g}"}[self.metric]

    def _collect_ids(self) -> list[int]:
        st = self._state
        ids = [t.id for t in st.tokens if not t.special and st.in_range(t.id)]
        ids += [i for i in st.extra_ids if st.in_range(i)]
        return list(dict.fromkeys(ids))[:MAX_EXTRA_TOKENS]

    def _rebuild(self) -> None:
        table = self._state.table
        self._ids = self._collect_ids() if table is not None else []
        n = len(self._ids)
        self.count_label.setText(f"{n:,} tokens" if n else "")
        if table is None or n == 0:
            self.empty.setText("Open a model to compare its tokens (Ctrl+O)" if table is None
                               else "Type some text or add tokens to compare them")
            self._stack.setCurrentWidget(self.empty)
            for m in self._maps:
                m.values = np.zeros((0, 0))
            return
        self._stack.setCurrentWidget(self._mats)
        rows = table.rows(self._ids)
        finite = np.isfinite(rows)
        rows = np.where(finite, rows, 0.0)
        metric = self.metric
        with np.errstate(over="ignore", invalid="ignore"):
            m = similarity_matrix(rows, metric)
        m = np.nan_to_num(m, nan=0.0, posinf=0.0, neginf=0.0)
        labels = [short_piece(table.piece(i), 12) for i in self._ids]
        div = pg.colormap.get(DIVERGING)
        seq = pg.colormap.get(SEQUENTIAL)
        if metric == "cosine":
            levels, cmap, bar = (-1.0, 1.0), div, "cosine similarity (−1 … 1)"
        elif metric == "dot":
            lim = float(np.abs(m).max()) or 1.0
            levels, cmap, bar = (-lim, lim), div, "dot product a·b"
        else:
            levels, cmap, bar = (0.0, float(m.max()) or 1.0), seq, "distance ‖a − b‖"
        title = {"cosine": "cosine similarity", "dot": "dot product", "euclidean": "Euclidean distance"}[metric]
        self.main.plot.setTitle(f"Learned vectors: {title}", color=self._fg, size="10pt")
        self.main.set_values(m, levels, cmap)
        self.main.write_cells(self._fmt(), levels, cmap)
        self.colorbar.setColorMap(cmap)
        self.colorbar.setLevels(levels)
        self.colorbar.setLabel("right", bar)
        idd = id_distance_matrix(self._ids)
        oh = one_hot_distance_matrix(self._ids)
        id_levels = (0.0, float(idd.max()) or 1.0)
        self.ids_map.set_values(idd, id_levels, seq)
        self.ids_map.write_cells("{:,.0f}", id_levels, seq, limit=SIDE_TEXT_MAX)
        oh_levels = (0.0, 2.0)
        self.onehot.set_values(oh, oh_levels, seq)
        self.onehot.write_cells("{:.2f}", oh_levels, seq, limit=SIDE_TEXT_MAX)
        for h in self._maps:
            h.set_ticks(labels, bottom=h is self.main)
        note = ""
        if not finite.all():
            note = " Some rows hold NaN or inf; those values were counted as 0."
        self.info.setText(
            f"Same {n:,} tokens three ways. Scalar ids invent an order: |i − j| calls neighbours in the numbering alike. "
            f"One-hot vectors are all √2 ≈ 1.414 apart (cosine 0): no pair is more alike than another. "
            f"Learned vectors put related tokens close.{note}  Hover a cell to read it; click to select the pair.")
        self._draw_highlight()

    def _draw_highlight(self) -> None:
        n = len(self._ids)
        sel = self._state.selected_id
        row = self._ids.index(sel) if sel in self._ids else -1
        pair = None
        if self._pair is not None and self._pair[0] in self._ids and self._pair[1] in self._ids:
            pair = (self._ids.index(self._pair[0]), self._ids.index(self._pair[1]))
        for h in self._maps:
            h.highlight(row, n, pair)

    def _cell_under(self, scene_pos):
        for h in self._maps:
            cell = h.cell_at(scene_pos)
            if cell is not None:
                return h, cell
        return None, None

    def _describe_cell(self, r: int, c: int) -> str:
        table = self._state.table
        a, b = self._ids[r], self._ids[c]
        pa, pb = display_piece(table.piece(a)), display_piece(table.piece(b))
        name = {"cosine": "cos", "dot": "a·b", "euclidean": "‖a − b‖"}[self.metric]
        text = (f"<b>{pa}</b> (id {a:,}) and <b>{pb}</b> (id {b:,}): {name} = {self._fmt().format(self.main.values[r, c])}"
                f" · |i − j| = {abs(a - b):,} · one-hot distance = {self.onehot.values[r, c]:.3f}")
        self.info.setText(text)
        return text

    def _on_scene_mouse_moved(self, pos) -> None:
        h, cell = self._cell_under(pos)
        if cell is not None and self._state.table is not None:
            text = self._describe_cell(*cell)
            self.glw.setToolTip(text)

    def _on_scene_clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or self._state.table is None:
            return
        _h, cell = self._cell_under(event.scenePos())
        if cell is not None:
            self.select_cell(*cell)

    # -- random vectors ------------------------------------------------------------------------
    def _clear_check(self) -> None:
        for item in (self.rand_hist, self.real_hist, self.rand_curve, self.real_curve):
            item.setData([], [])
        self.facts.setText("Open a model to compare its rows with random vectors" if self._state.table is None
                           else "Counting cosines of random pairs…")

    def _start_check(self) -> None:
        table = self._state.table
        if table is None or (self._check is not None and self._check_spec == table.spec):
            return
        self._check_spec = table.spec
        if self._runner is None:
            gen = random_vector_check_job(table, N_PAIRS)
            try:
                while True:
                    next(gen)
            except StopIteration as stop:
                self._on_runner_succeeded(stop.value)
            return
        self._runner.start(random_vector_check_job, table, N_PAIRS)

    def _on_runner_succeeded(self, check) -> None:
        table = self._state.table
        if not isinstance(check, CosineCheck) or table is None or check.dim != table.dim:
            return
        self._check = check
        self.rand_hist.setData(check.random_edges, check.random_density)
        self.rand_curve.setData(check.curve_x, check.curve_y)
        self.rand_band.setRegion((-check.bound, check.bound))
        self.rand_plot.setTitle(f"{check.n_pairs:,} pairs of random Gaussian vectors, d = {check.dim:,}",
                                color=self._fg, size="10pt")
        self.real_hist.setData(check.real_edges, check.real_density)
        # the same N(0, 1/d) law over the real histogram, for comparison
        cx = np.linspace(check.real_edges[0], check.real_edges[-1], 241)
        from ..core.geometry import cosine_normal_pdf

        self.real_curve.setData(cx, cosine_normal_pdf(cx, check.dim))
        self.real_plot.setTitle(f"{check.n_real:,} random pairs of this table's rows", color=self._fg, size="10pt")
        for p in (self.rand_plot, self.real_plot):
            p.enableAutoRange()
        f = check.shell_fraction
        self.facts.setText(
            f"<b>Random vectors</b>: cosines of independent Gaussian vectors in d = {check.dim:,} dimensions follow "
            f"about N(0, 1/d) (green curve): standard deviation 1/√d = {check.theory_std:.4f}, measured "
            f"{check.random_std:.4f}; {check.within_bound:.1%} of pairs have |cos| ≤ 3/√d = {check.bound:.3f} "
            f"(shaded). In high dimensions random directions are nearly orthogonal. "
            f"<b>This table</b>: mean cosine {check.real_mean:+.4f}, standard deviation {check.real_std:.4f} "
            f"(dashed: the random law at the same d). "
            f"<b>Volume</b>: a unit ball in {check.dim:,} dimensions keeps (1 − 0.01)^{check.dim:,} = {f:.5g} of its "
            f"volume inside radius 0.99, so {1 - f:.3%} lies in the outer 1 % shell.")

    def _on_runner_failed(self, exc: BaseException) -> None:
        self.facts.setText(f"The random-vector check failed: {user_message(exc)}")

    # -- export -----------------------------------------------------------------------------
    def _export_dialog(self, what: str, ext: str) -> None:
        names = {"matrix": "similarity", "random": "random_vectors", "csv": "similarity"}
        filt = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV (*.csv)"}[ext]
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"{names[what]}.{ext}", filt)
        if not path:
            return
        if what == "csv":
            self.export_matrix_csv(path)
        else:
            self.export_plot(path, what)

    def export_plot(self, path: str, what: str = "matrix") -> None:
        """Save the matrices (``matrix``) or the histograms (``random``) as PNG or SVG."""
        item = self.glw.ci if what == "matrix" else self.hist_glw.ci
        export_graphics(item, path)

    def export_matrix_csv(self, path: str) -> int:
        """Write the learned-vector matrix with a header of pieces; returns rows written."""
        table = self._state.table
        if table is None or not self._ids:
            return 0
        pieces = [table.piece(i) for i in self._ids]
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow([f"{self.metric}", "id"] + [f"{p} ({i})" for p, i in zip(pieces, self._ids)])
            for r, tid in enumerate(self._ids):
                w.writerow([pieces[r], tid] + [f"{v:.6g}" for v in self.main.values[r]])
        return len(self._ids)


__all__ = ["SimilarityView"]
