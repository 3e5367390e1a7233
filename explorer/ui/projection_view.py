"""Where tokens sit: a PCA projection of the table, the text's tokens and
their neighbours highlighted, and word analogies drawn as arrows."""

from __future__ import annotations

import csv
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedLayout,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.errors import user_message
from ..core.geometry import Neighbor, analogy, nearest_neighbors
from ..core.projection import (
    DEFAULT_SAMPLE,
    N_COMPONENTS,
    WHOLE_VOCAB_LIMIT,
    ProjectionResult,
    find_token_ids,
    projection_job,
    tokens_of_interest,
)
from ..core.tokens import display_piece, short_piece
from ..state import AppState
from .export import export_graphics
from .style import ACCENT, EXTRA, SPACING, TEXT_TOKENS, class_color, mono_font, plot_colors, style_plot

#: neighbours joined to the selected token by lines
N_SELECTED_NEIGHBORS = 8
#: neighbours of each text token that are highlighted
N_TEXT_NEIGHBORS = 3
#: labels drawn at most (the rest are culled)
MAX_LABELS = 90
#: faint points get labels too when at most this many are in view
LABEL_FAINT_IN_VIEW = 250
NEIGHBOR_COLOR = "#5D8AA8"

FIT_MODES = [
    ("all", "Whole vocabulary", "Fit the PCA on every trained row of the table"),
    ("sample", "Random sample + tokens of interest",
     "Fit on a seeded random sample of rows plus the text's tokens, their neighbours and added tokens"),
    ("chosen", "Only the chosen tokens", "Fit on the text's tokens, their neighbours and added tokens only"),
]


#: Okabe-Ito first, then two of Paul Tol's colour-blind-safe colours: no two classes share one


class ProjectionView(QWidget):
    """PCA scatter of the embedding table.

    Signals
    -------
    token_selected(int)
        The user clicked a point, a search hit or an analogy answer (its id).
    token_added(int)
        The user asked to add a token (search box).
    """

    token_selected = Signal(int)
    token_added = Signal(int)

    def __init__(self, state: AppState, runner=None, parent=None):
        super().__init__(parent)
        self._state = state
        # the app marks the view inactive while its tab is hidden (set_active);
        # work that arrives meanwhile is remembered as stale and done when shown
        self._active = True
        self._stale = False
        self._runner = runner
        self._result: ProjectionResult | None = None
        self._xy = np.zeros((0, 2), np.float32)
        self._interest: dict[str, list[int]] = {"text": [], "neighbors": [], "extra": []}
        self._interest_xy: dict[int, np.ndarray] = {}
        self._sel_neighbors: list[Neighbor] = []
        self._analogy: tuple[int, int, int] | None = None
        self._analogy_results: list[Neighbor] = []
        self._class_of: np.ndarray | None = None
        self._class_names: list[str] = []
        self._labels_shown: list[tuple[int, str]] = []
        bg, fg = plot_colors()
        self._fg = fg

        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)

        # -- controls ------------------------------------------------------------------
        bar = QHBoxLayout()
        bar.setSpacing(SPACING)
        bar.addWidget(QLabel("Fit on"))
        self.fit_combo = QComboBox()
        for key, text, tip in FIT_MODES:
            self.fit_combo.addItem(text, key)
            self.fit_combo.setItemData(self.fit_combo.count() - 1, tip, Qt.ToolTipRole)
        self.fit_combo.setToolTip("Which rows the PCA is fitted on; the others are projected with the same components")
        self.fit_combo.currentIndexChanged.connect(self._on_fit_combo_changed)
        bar.addWidget(self.fit_combo)
        self.sample_spin = QSpinBox()
        self.sample_spin.setRange(100, 500_000)
        self.sample_spin.setSingleStep(5_000)
        self.sample_spin.setValue(DEFAULT_SAMPLE)
        self.sample_spin.setGroupSeparatorShown(True)
        self.sample_spin.setSuffix(" rows")
        self.sample_spin.setKeyboardTracking(False)
        self.sample_spin.setToolTip("Size of the random sample of rows the PCA is fitted on (seeded, so repeatable)")
        self.sample_spin.valueChanged.connect(self._on_sample_spin_changed)
        bar.addWidget(self.sample_spin)
        bar.addSpacing(SPACING)
        bar.addWidget(QLabel("Axes"))
        self.x_combo = QComboBox()
        self.y_combo = QComboBox()
        for combo, which in ((self.x_combo, "horizontal"), (self.y_combo, "vertical")):
            for k in range(N_COMPONENTS):
                combo.addItem(f"PC{k + 1}", k)
            combo.setToolTip(f"Principal component on the {which} axis (PC1 explains the most variance)")
            combo.currentIndexChanged.connect(self._on_axes_changed)
        self.y_combo.setCurrentIndex(1)
        bar.addWidget(self.x_combo)
        bar.addWidget(QLabel("×"))
        bar.addWidget(self.y_combo)
        bar.addSpacing(SPACING)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a token…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Type a piece (or #id) and press Enter: the token is added, selected and labelled")
        self.search.setMinimumWidth(140)
        self._completer_model = QStringListModel(self)
        comp = QCompleter(self._completer_model, self)
        comp.setCaseSensitivity(Qt.CaseInsensitive)
        comp.setFilterMode(Qt.MatchStartsWith)
        comp.setMaxVisibleItems(12)
        self.search.setCompleter(comp)
        self.search.returnPressed.connect(self._on_search_return_pressed)
        bar.addWidget(self.search, 1)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save the plot (PNG/SVG), the coordinates or the neighbour lists (CSV)")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.export_button)
        menu.addAction("Plot as PNG…", lambda: self._export_dialog("png"))
        menu.addAction("Plot as SVG…", lambda: self._export_dialog("svg"))
        menu.addAction("Projected coordinates as CSV…", lambda: self._export_dialog("coords"))
        menu.addAction("Neighbour lists as CSV…", lambda: self._export_dialog("neighbors"))
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        outer.addLayout(bar)

        # -- plot + side panel -----------------------------------------------------------
        split = QSplitter(Qt.Horizontal)
        split.setChildrenCollapsible(False)
        left = QWidget()
        self._stack = QStackedLayout(left)
        self.empty = QLabel("Open a model to see where its tokens sit (Ctrl+O)")
        self.empty.setObjectName("EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setWordWrap(True)
        busy = QWidget()
        bl = QVBoxLayout(busy)
        bl.addStretch(1)
        self.busy_label = QLabel("Computing the projection…")
        self.busy_label.setObjectName("EmptyState")
        self.busy_label.setAlignment(Qt.AlignCenter)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(320)
        self.progress.setToolTip("PCA runs in the background; the window stays usable")
        bl.addWidget(self.busy_label)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.progress)
        row.addStretch(1)
        bl.addLayout(row)
        bl.addStretch(1)
        self.plot = pg.PlotWidget(background=bg)
        self.plot.setMenuEnabled(False)
        self._stack.addWidget(self.empty)
        self._stack.addWidget(busy)
        self._stack.addWidget(self.plot)
        self._busy = busy
        split.addWidget(left)

        side = QWidget()
        side.setMinimumWidth(230)
        side.setMaximumWidth(340)
        sl = QVBoxLayout(side)
        sl.setContentsMargins(SPACING, 0, 0, 0)
        sl.setSpacing(SPACING)
        self.fit_label = QLabel()
        self.fit_label.setWordWrap(True)
        self.fit_label.setToolTip("The rows the PCA was fitted on; tokens outside them are projected with the same "
                                  "components: (row − mean) · componentsᵀ")
        sl.addWidget(self.fit_label)
        self.variance_label = QLabel()
        self.variance_label.setWordWrap(True)
        self.variance_label.setToolTip("Explained variance ratio: the variance along a component divided by the "
                                       "total variance of the fitted rows (sum over all d directions)")
        sl.addWidget(self.variance_label)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setToolTip("Colours: the selected token, the text's tokens, their neighbours, added tokens "
                               "and, for the bundled model, the classes of its synthetic language")
        sl.addWidget(self.legend)

        an_title = QLabel("<b>Analogy</b>  a − b + c")
        an_title.setToolTip("Answers are the rows with the highest cosine to â − b̂ + ĉ (unit rows), "
                            "the three inputs excluded; drawn as arrows on the projection")
        sl.addWidget(an_title)
        grid = QGridLayout()
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(4)
        self.an_edits = []
        for col, (name, hint) in enumerate((("a", "king"), ("b", "man"), ("c", "woman"))):
            e = QLineEdit()
            e.setPlaceholderText(f"{name}: {hint}")
            e.setToolTip(f"Token {name} of a − b + c (a piece or #id)")
            e.returnPressed.connect(self._on_analogy_requested)
            grid.addWidget(e, 0, col)
            self.an_edits.append(e)
        self.an_button = QPushButton("Solve")
        self.an_button.setToolTip("Find the 5 tokens nearest to a − b + c by cosine")
        self.an_button.clicked.connect(self._on_analogy_requested)
        grid.addWidget(self.an_button, 1, 0, 1, 3)
        sl.addLayout(grid)
        self.an_status = QLabel("Type three tokens, e.g. from the text")
        self.an_status.setWordWrap(True)
        self.an_status.setObjectName("ChipId")
        sl.addWidget(self.an_status)
        self.an_table = QTableWidget(0, 3)
        self.an_table.setHorizontalHeaderLabels(["answer", "id", "cosine"])
        self.an_table.verticalHeader().setVisible(False)
        self.an_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.an_table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.an_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        for col in (1, 2):
            self.an_table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.an_table.setToolTip("The top 5 answers; click one to select it")
        self.an_table.cellClicked.connect(self._on_analogy_cell_clicked)
        self.an_table.setMaximumHeight(170)
        sl.addWidget(self.an_table)
        self.hover_label = QLabel("Hover a point to see its piece and id; click it to select it")
        self.hover_label.setWordWrap(True)
        self.hover_label.setObjectName("ChipId")
        sl.addWidget(self.hover_label)
        sl.addStretch(1)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        split.setSizes([700, 260])
        outer.addWidget(split, 1)

        # -- plot items: created once --------------------------------------------------
        pi = self.plot.getPlotItem()
        self._pi = pi
        pi.setTitle("Tokens projected on two principal components", color=fg, size="10pt")
        pi.showGrid(x=True, y=True, alpha=0.12)
        style_plot(pi)
        pi.addLine(x=0, pen=pg.mkPen(QColor(fg).name(), width=0.5, style=Qt.DotLine))
        pi.addLine(y=0, pen=pg.mkPen(QColor(fg).name(), width=0.5, style=Qt.DotLine))
        faint = QColor(fg)
        faint.setAlpha(55)
        self._faint_brush = pg.mkBrush(faint)
        self.scatter = pg.ScatterPlotItem(size=4, pen=None, brush=self._faint_brush, pxMode=True, useCache=True,
                                          hoverable=True, tip=None)
        self.scatter.sigClicked.connect(self._on_scatter_clicked)
        self.scatter.sigHovered.connect(self._on_scatter_hovered)
        pi.addItem(self.scatter)
        self.nb_lines = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(ACCENT, width=1.5))
        pi.addItem(self.nb_lines)
        self.highlight = pg.ScatterPlotItem(size=9, pxMode=True, hoverable=True, tip=None)
        self.highlight.sigClicked.connect(self._on_scatter_clicked)
        self.highlight.sigHovered.connect(self._on_scatter_hovered)
        pi.addItem(self.highlight)
        self.an_lines = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(EXTRA, width=2))
        self.an_dashed = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(EXTRA, width=2, style=Qt.DashLine))
        pi.addItem(self.an_lines)
        pi.addItem(self.an_dashed)
        self.an_heads = [pg.ArrowItem(headLen=14, tipAngle=30, tailLen=0, pen=None, brush=pg.mkBrush(EXTRA))
                         for _ in range(3)]
        for h in self.an_heads:
            pi.addItem(h, ignoreBounds=True)
            h.hide()
        self.an_points = pg.ScatterPlotItem(size=12, pxMode=True, symbol="d", pen=pg.mkPen(bg, width=1.5),
                                            brush=pg.mkBrush(EXTRA))
        pi.addItem(self.an_points)
        self.selected_item = pg.ScatterPlotItem(size=15, pxMode=True, pen=pg.mkPen(bg, width=2),
                                                brush=pg.mkBrush(ACCENT))
        self.selected_item.sigClicked.connect(self._on_scatter_clicked)
        pi.addItem(self.selected_item)
        self._label_font = QFont()
        self._label_font.setPointSize(9)
        self._label_bold = QFont(self._label_font)
        self._label_bold.setBold(True)
        self._metrics = QFontMetricsF(self._label_font)
        label_bg = QColor(bg)
        label_bg.setAlpha(200)
        self._label_fill = pg.mkBrush(label_bg)
        self._no_fill = pg.mkBrush(None)
        self.labels: list[pg.TextItem] = []
        for _ in range(MAX_LABELS):
            t = pg.TextItem("", anchor=(0, 1), fill=self._label_fill)
            t.setFont(self._label_font)
            t.hide()
            pi.addItem(t, ignoreBounds=True)
            self.labels.append(t)
        self._cull_timer = QTimer(self)
        self._cull_timer.setSingleShot(True)
        self._cull_timer.setInterval(40)
        self._cull_timer.timeout.connect(self._place_labels)
        pi.getViewBox().sigRangeChanged.connect(self._on_viewbox_range_changed)
        pi.getViewBox().sigResized.connect(self._on_viewbox_range_changed)

        state.model_changed.connect(self._on_state_model_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)
        state.extra_tokens_changed.connect(self._on_state_extra_tokens_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        if runner is not None:
            runner.progressed.connect(self._on_runner_progressed)
            runner.succeeded.connect(self._on_runner_succeeded)
            runner.failed.connect(self._on_runner_failed)
        self._update_fit_controls()
        if state.table is not None:
            self._on_state_model_changed(state.table)

    # -- public, for the app and tests -------------------------------------------------
    @property
    def result(self) -> ProjectionResult | None:
        return self._result

    @property
    def fit_mode(self) -> str:
        return self.fit_combo.currentData()

    def axes(self) -> tuple[int, int]:
        """The components on the (horizontal, vertical) axes, 0-based."""
        return int(self.x_combo.currentData()), int(self.y_combo.currentData())

    def set_axes(self, x: int, y: int) -> None:
        self.x_combo.setCurrentIndex(x)
        self.y_combo.setCurrentIndex(y)

    def set_fit_mode(self, mode: str, sample_size: int | None = None) -> None:
        if sample_size is not None:
            self.sample_spin.blockSignals(True)
            self.sample_spin.setValue(int(sample_size))
            self.sample_spin.blockSignals(False)
        i = self.fit_combo.findData(mode)
        if i == self.fit_combo.currentIndex():
            self.recompute()
        else:
            self.fit_combo.setCurrentIndex(i)

    def point_xy(self, token_id: int) -> np.ndarray | None:
        """Where ``token_id`` is drawn (x, y), or None."""
        if self._result is None or self._state.table is None:
            return None
        x, y = self.axes()
        c = self._result.coords_of(self._state.table, [token_id])[0]
        return np.array([self._comp(c, x), self._comp(c, y)], np.float32)

    def labelled(self) -> list[tuple[int, str]]:
        """(token id, text) of the labels currently drawn."""
        return list(self._labels_shown)

    def label_rects(self) -> list[QRectF]:
        """Scene rectangles of the labels drawn (they never overlap)."""
        return list(getattr(self, "_label_rects", []))

    def interest(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self._interest.items()}

    def selected_neighbors(self) -> list[Neighbor]:
        return list(self._sel_neighbors)

    def analogy_results(self) -> list[Neighbor]:
        return list(self._analogy_results)

    def recompute(self) -> None:
        """Start the PCA of the current table with the chosen fit set."""
        table = self._state.table
        if table is None:
            return
        mode = self.fit_mode
        ids = self._chosen_ids()
        if mode == "chosen" and len(ids) < 2:
            self._result = None
            self.empty.setText("Fitting on the chosen tokens needs at least two: type some text or add tokens")
            self._stack.setCurrentWidget(self.empty)
            return
        self.busy_label.setText(f"Computing the projection of {table.name}…")
        self.progress.setValue(0)
        self._stack.setCurrentWidget(self._busy)
        if self._runner is None:
            # no worker (a test or a headless use): compute here
            gen = projection_job(table, mode, self.sample_spin.value(), ids)
            try:
                while True:
                    next(gen)
            except StopIteration as stop:
                self._on_runner_succeeded(stop.value)
            except ValueError as exc:
                self._on_runner_failed(exc)
            return
        self._runner.start(projection_job, table, mode, self.sample_spin.value(), ids)

    # -- state ------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        self._result = None
        self._analogy = None
        self._analogy_results = []
        self.an_table.setRowCount(0)
        self.an_status.setText("Type three tokens, e.g. from the text")
        self._class_of = None
        self._class_names = []
        if table is None:
            self._stack.setCurrentWidget(self.empty)
            return
        if table.classes:
            names = sorted(set(table.classes.values()))
            self._class_names = names
            idx = {n: i for i, n in enumerate(names)}
            arr = np.full(table.vocab_size, -1, np.int64)
            for tid, name in table.classes.items():
                if 0 <= int(tid) < table.vocab_size:
                    arr[int(tid)] = idx[name]
            self._class_of = arr
        self._completer_model.setStringList(table.completion_pieces())
        mode = "all" if table.trained_rows <= WHOLE_VOCAB_LIMIT else "sample"
        self.fit_combo.blockSignals(True)
        self.fit_combo.setCurrentIndex(self.fit_combo.findData(mode))
        self.fit_combo.blockSignals(False)
        self._update_fit_controls()
        self._prefill_analogy()
        if self._active:
            self._update_interest()
            self.recompute()
        else:
            self._stale = True  # neighbours of interest and the fit wait until the tab is shown

    def set_active(self, active: bool) -> None:
        """The app marks the view inactive while its tab is hidden: no PCA is
        fitted and nothing is redrawn until it is shown."""
        self._active = bool(active)
        if self._active and self._stale:
            self._stale = False
            if self._result is None or self._result.spec != getattr(self._state.table, "spec", None):
                self._update_interest()
                self.recompute()
            else:
                self._refresh_interest()

    def _on_state_tokens_changed(self, _tokens) -> None:
        self._refresh_interest()

    def _on_state_extra_tokens_changed(self, _ids) -> None:
        self._refresh_interest()

    def _refresh_interest(self) -> None:
        if not self._active:
            self._stale = True
            return
        old = self._chosen_ids()
        self._update_interest()
        if self.fit_mode == "chosen" and self._state.table is not None and self._chosen_ids() != old:
            self.recompute()
            return
        self._draw_interest()
        self._draw_selected()

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        if not self._active:
            self._stale = True
            return
        self._draw_selected()

    # -- worker -----------------------------------------------------------------------
    def _on_runner_progressed(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.busy_label.setText(message)

    def _on_runner_succeeded(self, result) -> None:
        table = self._state.table
        if not isinstance(result, ProjectionResult) or table is None or result.spec != table.spec:
            return
        self._result = result
        self._stack.setCurrentWidget(self.plot)
        self._draw_all(autorange=True)

    def _on_runner_failed(self, exc: BaseException) -> None:
        self.empty.setText(f"The projection failed: {user_message(exc)}")
        self._stack.setCurrentWidget(self.empty)

    # -- controls ----------------------------------------------------------------------
    def _on_fit_combo_changed(self, _i: int) -> None:
        self._update_fit_controls()
        self.recompute()

    def _on_sample_spin_changed(self, _v: int) -> None:
        if self.fit_mode == "sample":
            self.recompute()

    def _on_axes_changed(self, _i: int) -> None:
        if self._result is not None:
            self._draw_all(autorange=True)

    def _update_fit_controls(self) -> None:
        self.sample_spin.setVisible(self.fit_mode == "sample")

    def _on_search_return_pressed(self) -> None:
        table = self._state.table
        if table is None:
            return
        hits = find_token_ids(table, self.search.text(), limit=1)
        if not hits:
            self.hover_label.setText(f"No token “{self.search.text()}” in this vocabulary")
            return
        tid = hits[0]
        self.token_added.emit(tid)
        self.token_selected.emit(tid)
        self.search.clear()

    def _on_scatter_clicked(self, _item, points, _ev=None) -> None:
        """A click on a point: select its token."""
        pts = list(points) if points is not None else []
        if not pts:
            return
        tid = pts[0].data()
        if tid is not None and int(tid) >= 0:
            self.token_selected.emit(int(tid))

    def _on_scatter_hovered(self, _item, points, _ev=None) -> None:
        table = self._state.table
        pts = list(points) if points is not None else []
        if table is None or not pts:
            return
        tid = int(pts[0].data())
        x, y = self.axes()
        text = f"<b>{display_piece(table.piece(tid))}</b>  id {tid:,}"
        if self._class_of is not None and 0 <= tid < len(self._class_of) and self._class_of[tid] >= 0:
            text += f"  · {self._class_names[self._class_of[tid]]}"
        p = pts[0].pos()
        text += f"<br>PC{x + 1} = {p.x():+.3f}, PC{y + 1} = {p.y():+.3f}"
        if len(pts) > 1:
            text += f"  (+{len(pts) - 1} more under the pointer)"
        self.hover_label.setText(text)
        self.plot.setToolTip(f"{display_piece(table.piece(tid))}  (id {tid:,})")

    def _on_analogy_cell_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._analogy_results):
            self.token_selected.emit(self._analogy_results[row].id)

    def _on_analogy_requested(self) -> None:
        table = self._state.table
        if table is None:
            return
        ids = []
        for e, name in zip(self.an_edits, "abc"):
            hits = find_token_ids(table, e.text(), limit=1)
            if not hits:
                self.an_status.setText(f"Token {name} (“{e.text()}”) is not in this vocabulary" if e.text()
                                       else f"Type token {name}")
                return
            ids.append(hits[0])
        self.solve_analogy(*ids)

    def solve_analogy(self, a: int, b: int, c: int) -> list[Neighbor]:
        """a − b + c: the top 5 by cosine, shown in the table and as arrows."""
        table = self._state.table
        if table is None:
            return []
        if not table.fits_in_memory:
            self.an_status.setText("Analogies search the whole table; this one is too big to hold in memory")
            return []
        res = analogy(table, a, b, c, k=5)
        self._analogy = (a, b, c)
        self._analogy_results = res
        p = [display_piece(table.piece(i)) for i in (a, b, c)]
        self.an_status.setText(f"{p[0]} − {p[1]} + {p[2]} ≈ " + (display_piece(table.piece(res[0].id)) if res else "?"))
        self.an_table.setRowCount(len(res))
        for r, nb in enumerate(res):
            cells = [display_piece(table.piece(nb.id)), f"{nb.id:,}", f"{nb.cosine:+.3f}"]
            for col, text in enumerate(cells):
                it = QTableWidgetItem(text)
                if col:
                    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    it.setFont(mono_font())
                self.an_table.setItem(r, col, it)
        self._draw_analogy()
        self._schedule_labels()
        return res

    def _prefill_analogy(self) -> None:
        table = self._state.table
        if table is None:
            return
        for words in (("king", "man", "woman"), ("cat", "dog", "car"), ("robot", "arm", "box")):
            ids = [find_token_ids(table, w, limit=1) for w in words]
            if all(ids) and all(table.piece(h[0]).lower().lstrip("ġ▁") == w for h, w in zip(ids, words)):
                for e, w in zip(self.an_edits, words):
                    e.setText(w)
                return
        for e in self.an_edits:
            e.clear()

    # -- data ------------------------------------------------------------------------------
    def _update_interest(self) -> None:
        table = self._state.table
        if table is None:
            self._interest = {"text": [], "neighbors": [], "extra": []}
            return
        text_ids = [t.id for t in self._state.tokens if not t.special]
        self._interest = tokens_of_interest(table, text_ids, self._state.extra_ids, k=N_TEXT_NEIGHBORS)

    def _chosen_ids(self) -> list[int]:
        i = self._interest
        return sorted(set(i["text"]) | set(i["extra"]) | set(i["neighbors"]))

    @staticmethod
    def _comp(c: np.ndarray, k: int) -> float:
        return float(c[k]) if k < len(c) else 0.0

    def _cols(self, coords: np.ndarray) -> np.ndarray:
        x, y = self.axes()
        n = coords.shape[0]
        out = np.zeros((n, 2), np.float32)
        k = coords.shape[1] if coords.ndim == 2 else 0
        if x < k:
            out[:, 0] = coords[:, x]
        if y < k:
            out[:, 1] = coords[:, y]
        return out

    # -- drawing ------------------------------------------------------------------------
    def _draw_all(self, autorange: bool = False) -> None:
        res, table = self._result, self._state.table
        if res is None or table is None:
            return
        self._xy = self._cols(res.coords)
        n = len(res.ids)
        size = 7 if n <= 1_000 else (5 if n <= 10_000 else 3)
        faint = QColor(self._fg)
        faint.setAlpha(55 if n <= 10_000 else 32)
        self._faint_brush = pg.mkBrush(faint)
        if self._class_of is not None:
            cls = self._class_of[res.ids]
            brushes = [self._faint_brush]
            for i in range(len(self._class_names)):
                c = QColor(class_color(i))
                c.setAlpha(200)
                brushes.append(pg.mkBrush(c))
            self.scatter.setData(pos=self._xy, data=res.ids, size=size, pen=None,
                                 brush=[brushes[c + 1] for c in cls])
        else:
            self.scatter.setData(pos=self._xy, data=res.ids, size=size, pen=None, brush=self._faint_brush)
        x, y = self.axes()
        ev = res.explained
        ex = ev[x] if x < len(ev) else 0.0
        ey = ev[y] if y < len(ev) else 0.0
        self._pi.setLabel("bottom", f"PC{x + 1}  ({ex:.1%} of variance)")
        self._pi.setLabel("left", f"PC{y + 1}  ({ey:.1%} of variance)")
        self._pi.setTitle(f"{n:,} tokens on PC{x + 1} and PC{y + 1}: {ex + ey:.1%} of the variance shown",
                          color=self._fg, size="10pt")
        self.fit_label.setText(f"<b>Fitted on</b> the {res.description}. "
                               f"{res.seconds:.2f} s. Other tokens are projected with the same components.")
        parts = ", ".join(f"PC{i + 1} {v:.1%}" for i, v in enumerate(ev))
        self.variance_label.setText(f"<b>Explained variance</b> (share of the total): {parts}; "
                                    f"first {len(ev)} together {ev.sum():.1%}.")
        self._update_legend()
        self._draw_interest()
        self._draw_selected()
        self._draw_analogy()
        if autorange:
            self._pi.getViewBox().autoRange(padding=0.06)
        self._schedule_labels()

    def _update_legend(self) -> None:
        dot = '<span style="white-space:nowrap"><span style="color:{c}; font-size:13pt">●</span>&nbsp;{t}</span>'
        items = [dot.format(c=ACCENT, t="selected"), dot.format(c=TEXT_TOKENS, t="text"),
                 dot.format(c=NEIGHBOR_COLOR, t="neighbours"), dot.format(c=EXTRA, t="added")]
        text = " &nbsp; ".join(items)
        if self._class_names:
            text += "<br><b>Classes</b><br>" + " &nbsp; ".join(
                dot.format(c=class_color(i), t=n) for i, n in enumerate(self._class_names))
        self.legend.setText(text)

    def _interest_coords(self, ids: list[int]) -> np.ndarray:
        if self._result is None or not ids:
            return np.zeros((0, 2), np.float32)
        return self._cols(self._result.coords_of(self._state.table, ids))

    def _draw_interest(self) -> None:
        if self._result is None:
            self.highlight.setData([])
            return
        _bg = plot_colors()[0]
        groups = [("neighbors", NEIGHBOR_COLOR), ("extra", EXTRA), ("text", TEXT_TOKENS)]
        ids, brushes = [], []
        for key, color in groups:
            b = pg.mkBrush(color)
            for i in self._interest[key]:
                ids.append(i)
                brushes.append(b)
        xy = self._interest_coords(ids)
        self._interest_xy = {i: xy[r] for r, i in enumerate(ids)}
        pen = pg.mkPen(_bg, width=1)
        self.highlight.setData(pos=xy, data=np.asarray(ids, np.int64), brush=brushes, pen=pen, size=9)
        self._schedule_labels()

    def _draw_selected(self) -> None:
        table, sel = self._state.table, self._state.selected_id
        self._sel_neighbors = []
        if self._result is None or table is None or sel < 0:
            self.selected_item.setData([])
            self.nb_lines.setData([], [])
            self._schedule_labels()
            return
        if table.fits_in_memory:
            self._sel_neighbors = nearest_neighbors(table, table.row(sel), k=N_SELECTED_NEIGHBORS, exclude=[sel])
        ids = [sel] + [n.id for n in self._sel_neighbors]
        xy = self._interest_coords(ids)
        self.selected_item.setData(pos=xy[:1], data=np.asarray([sel], np.int64))
        if len(ids) > 1:
            segs = np.repeat(xy[:1], len(ids) - 1, axis=0)
            pairs = np.empty((2 * (len(ids) - 1), 2), np.float32)
            pairs[0::2] = segs
            pairs[1::2] = xy[1:]
            self.nb_lines.setData(pairs[:, 0], pairs[:, 1])
        else:
            self.nb_lines.setData([], [])
        self._sel_xy = {i: xy[r] for r, i in enumerate(ids)}
        self._schedule_labels()

    def _draw_analogy(self) -> None:
        if self._analogy is None or self._result is None or not self._analogy_results:
            self.an_lines.setData([], [])
            self.an_dashed.setData([], [])
            self.an_points.setData([])
            for h in self.an_heads:
                h.hide()
            return
        a, b, c = self._analogy
        best = self._analogy_results[0].id
        pa, pb, pc, pbest = self._interest_coords([a, b, c, best])
        target = pa - pb + pc  # PCA is affine: P(a − b + c) = P(a) − P(b) + P(c)
        solid = np.array([pb, pa, pc, target], np.float32)
        self.an_lines.setData(solid[:, 0], solid[:, 1])
        dashed = np.array([target, pbest], np.float32)
        self.an_dashed.setData(dashed[:, 0], dashed[:, 1])
        self.an_points.setData(pos=np.array([target]), data=np.array([-1]))
        self._an_segments = [(pb, pa), (pc, target), (target, pbest)]
        self._an_target = target
        self._place_arrow_heads()

    def _place_arrow_heads(self) -> None:
        if self._analogy is None or not self._analogy_results or self._result is None:
            return
        vb = self._pi.getViewBox()
        for head, (p0, p1) in zip(self.an_heads, self._an_segments):
            s0 = vb.mapViewToScene(QPointF(float(p0[0]), float(p0[1])))
            s1 = vb.mapViewToScene(QPointF(float(p1[0]), float(p1[1])))
            dx, dy = s1.x() - s0.x(), s1.y() - s0.y()
            if dx * dx + dy * dy < 4:
                head.hide()
                continue
            # ArrowItem's angle 0 points left (tip at the position); screen y grows downwards
            head.setStyle(angle=math.degrees(math.atan2(dy, dx)) + 180)
            head.setPos(float(p1[0]), float(p1[1]))
            head.show()

    # -- labels -------------------------------------------------------------------------
    def _on_viewbox_range_changed(self, *_args) -> None:
        self._schedule_labels()

    def _schedule_labels(self) -> None:
        self._cull_timer.start()

    def _label_candidates(self) -> list[tuple[int, np.ndarray, str, bool]]:
        """(id, xy, colour, bold) in priority order."""
        out: list[tuple[int, np.ndarray, str, bool]] = []
        seen = set()
        table, sel = self._state.table, self._state.selected_id
        if self._result is None or table is None:
            return out

        def add(i, xy, color, bold=False):
            if i not in seen and xy is not None:
                seen.add(i)
                out.append((i, xy, color, bold))

        sel_xy = getattr(self, "_sel_xy", {})
        if sel >= 0 and sel in sel_xy:
            add(sel, sel_xy[sel], ACCENT, True)
        if self._analogy is not None and self._analogy_results:
            ids = list(self._analogy) + [self._analogy_results[0].id]
            for i, xy in zip(ids, self._interest_coords(ids)):
                add(i, xy, EXTRA, True)
        for i in self._interest["text"]:
            add(i, self._interest_xy.get(i), TEXT_TOKENS, True)
        for i in self._interest["extra"]:
            add(i, self._interest_xy.get(i), EXTRA, True)
        for nb in self._sel_neighbors:
            add(nb.id, sel_xy.get(nb.id), NEIGHBOR_COLOR)
        for i in self._interest["neighbors"]:
            add(i, self._interest_xy.get(i), NEIGHBOR_COLOR)
        # when zoomed in far enough, the faint points get labels too
        vr = self._pi.getViewBox().viewRect()
        xy = self._xy
        if len(xy):
            inside = np.nonzero((xy[:, 0] >= vr.left()) & (xy[:, 0] <= vr.right())
                                & (xy[:, 1] >= min(vr.top(), vr.bottom())) & (xy[:, 1] <= max(vr.top(), vr.bottom())))[0]
            if len(inside) <= LABEL_FAINT_IN_VIEW:
                muted = QColor(self._fg)
                muted.setAlpha(150)
                for r in inside:
                    add(int(self._result.ids[r]), xy[r], muted)
        return out

    def _place_labels(self) -> None:
        """Greedy label placement in screen space: higher priority first, a label
        that would overlap one already placed is skipped."""
        table = self._state.table
        self._labels_shown = []
        placed: list[QRectF] = []
        used = 0
        if table is not None and self._result is not None and self._stack.currentWidget() is self.plot:
            vb = self._pi.getViewBox()
            view = vb.sceneBoundingRect()
            for tid, xy, color, bold in self._label_candidates():
                faint = isinstance(color, QColor)
                if used >= len(self.labels):
                    break
                text = short_piece(table.piece(tid))
                sp = vb.mapViewToScene(QPointF(float(xy[0]), float(xy[1])))
                w = self._metrics.horizontalAdvance(text) * (1.1 if bold else 1.0) + 6
                h = self._metrics.height() + 2
                rect = QRectF(sp.x() + 5, sp.y() - h - 2, w, h)
                if not view.contains(rect):
                    rect.moveLeft(sp.x() - 5 - w)
                    if not view.contains(rect):
                        continue
                if any(rect.intersects(r) for r in placed):
                    continue
                placed.append(rect)
                item = self.labels[used]
                used += 1
                item.setText(text, color=color)
                item.setFont(self._label_bold if bold else self._label_font)
                item.fill = self._no_fill if faint else self._label_fill
                left = rect.left() < sp.x()
                item.setAnchor((1, 1) if left else (0, 1))
                item.setPos(float(xy[0]), float(xy[1]))
                item.show()
                self._labels_shown.append((tid, text))
        for item in self.labels[used:]:
            item.hide()
        self._label_rects = placed
        self._place_arrow_heads()

    # -- export -----------------------------------------------------------------------------
    def _export_dialog(self, kind: str) -> None:
        filters = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "coords": "CSV (*.csv)",
                   "neighbors": "CSV (*.csv)"}
        names = {"png": "projection.png", "svg": "projection.svg", "coords": "projection.csv",
                 "neighbors": "neighbours.csv"}
        path, _ = QFileDialog.getSaveFileName(self, "Export", names[kind], filters[kind])
        if not path:
            return
        if kind in ("png", "svg"):
            self.export_plot(path)
        elif kind == "coords":
            self.export_coordinates_csv(path)
        else:
            self.export_neighbors_csv(path)

    def export_plot(self, path: str) -> None:
        """Save the scatter as PNG or SVG (by the file's extension)."""
        export_graphics(self._pi, path)

    def export_coordinates_csv(self, path: str) -> int:
        """Write id, piece, whether fitted, class and the coordinates on every
        component of the fitted tokens and the tokens of interest. Returns rows written."""
        res, table = self._result, self._state.table
        if res is None or table is None:
            return 0
        extra = [i for i in self._chosen_ids() if res.index_of(i) < 0]
        ids = list(res.ids) + extra
        coords = np.vstack([res.coords, res.coords_of(table, extra)]) if extra else res.coords
        k = res.n_components
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "piece", "fitted", "class"] + [f"PC{j + 1}" for j in range(k)])
            for r, tid in enumerate(ids):
                cls = ""
                if self._class_of is not None and self._class_of[tid] >= 0:
                    cls = self._class_names[self._class_of[tid]]
                w.writerow([int(tid), table.piece(int(tid)), int(r < len(res.ids)), cls]
                           + [f"{v:.6g}" for v in coords[r]])
        return len(ids)

    def export_neighbors_csv(self, path: str, k: int = 10) -> int:
        """Write the k nearest neighbours (cosine) of the text's tokens, the added
        tokens and the selected token. Returns rows written."""
        table = self._state.table
        if table is None:
            return 0
        ids = list(dict.fromkeys(self._interest["text"] + self._interest["extra"]
                                 + ([self._state.selected_id] if self._state.selected_id >= 0 else [])))
        rows = 0
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "piece", "rank", "neighbour_id", "neighbour_piece", "cosine"])
            for tid in ids:
                for rank, nb in enumerate(nearest_neighbors(table, table.row(tid), k=k, exclude=[tid]), 1):
                    w.writerow([tid, table.piece(tid), rank, nb.id, table.piece(nb.id), f"{nb.cosine:.6f}"])
                    rows += 1
        return rows
