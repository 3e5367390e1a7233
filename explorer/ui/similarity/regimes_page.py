"""Learned vectors next to scalar ids and one-hot vectors: the same tokens,
three matrices. The state computes them (on the spot when cheap, else in a
worker) while this page is on screen; the page draws them."""

from __future__ import annotations

import csv
import html
from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QStackedLayout,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import user_message
from explorer.core.matrix.cell_format import CellFormat, cell_format, compact_count
from explorer.core.similarity.regimes import MAX_TOKENS, SimilarityMatrices
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate
from explorer.ui.common.export import export_graphics
from explorer.ui.common.progress import ProgressBar
from explorer.ui.common.token_search import TokenSearch
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.similarity.added_tokens import AddedTokensBar
from explorer.ui.similarity.heatmap import Heatmap
from explorer.ui.style import DIVERGING, SEQUENTIAL, SPACING, plot_colors, style_as

METRICS = [
    ("cosine", "Cosine similarity", "cos(a, b) = a·b / (‖a‖ ‖b‖), from −1 (opposite) through 0 (orthogonal) to 1"),
    ("dot", "Dot product", "a·b = Σ_j a_j b_j: cosine scaled by both norms"),
    ("euclidean", "Euclidean distance", "‖a − b‖ = sqrt(Σ_j (a_j − b_j)²): 0 for the same row, larger is less alike"),
]
TITLES = {"cosine": "cosine similarity", "dot": "dot product", "euclidean": "Euclidean distance"}
BAR_LABELS = {"cosine": "cosine similarity (−1 … 1)", "dot": "dot product a·b", "euclidean": "distance ‖a − b‖"}
SYMBOLS = {"cosine": "cos", "dot": "a·b", "euclidean": "‖a − b‖"}
#: the side maps are small: values are written only for this many tokens or fewer
SIDE_TEXT_MAX = 6
HOVER_HINT = "Hover a cell to read its value; click it to select that pair"


#: one-hot distances are 0 or √2: two decimals
ONE_HOT_FORMAT = CellFormat(2)
#: the three maps: title, colour bar label (None: no bar), small
MAPS = (("Learned vectors: cosine similarity", BAR_LABELS["cosine"], False),
        ("Scalar ids: |i − j|", "", True),
        ("One-hot: ‖e_i − e_j‖", "", True))


def make_heatmap(k: int) -> Heatmap:
    """Map ``k`` of :data:`MAPS`, in a plot of its own (with its colour bar, two plots: ~45 ms)."""
    title, bar_label, small = MAPS[k]
    return Heatmap(pg.PlotItem(enableMenu=False), title, bar_label, small=small)


class RegimesPage(QWidget):
    """The chosen tokens' similarity matrix with the scalar-id and one-hot regimes.

    Signals
    -------
    token_selected(int)
        The user clicked a cell (the row's token id).
    pair_selected(int, int)
        The user clicked a cell: (row token id, column token id).
    token_added(int)
        The user asked to add a token (the search box, or Add for the selected token).
    """

    token_selected = Signal(int)
    pair_selected = Signal(int, int)
    token_added = Signal(int)

    def __init__(self, state: AppState, parent=None, maps: Sequence[Heatmap] = ()):
        """``maps``: the three of :data:`MAPS` made beforehand (:meth:`SimilarityView.built_in_steps`)."""
        super().__init__(parent)
        self._state = state
        self._m: SimilarityMatrices | None = None
        self._pair: tuple[int, int] | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, SPACING, 0, 0)
        outer.setSpacing(SPACING)
        outer.addLayout(self._build_bar())
        self.added = AddedTokensBar()
        self.added.remove_requested.connect(state.remove_extra_token)
        self.added.clear_requested.connect(state.clear_extra_tokens)
        self.added.add_requested.connect(self.token_added)
        outer.addWidget(self.added)
        self._stack = QStackedLayout()
        self.empty = WrapLabel("Open a model and type some text to compare its tokens")
        style_as(self.empty, "EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        self._stack.addWidget(self.empty)
        self._stack.addWidget(self._build_maps(maps))
        outer.addLayout(self._stack, 1)

        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.jobs.similarity, on_reset=self._on_similarity_reset,
                                   on_result=self._draw, on_error=self._on_similarity_failed, progress=self.progress)
        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.extra_tokens_changed.connect(self._on_state_extra_tokens_changed)
        state.jobs.similarity.started.connect(self._on_similarity_started)

    def _build_bar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.setContentsMargins(SPACING, 0, SPACING, 0)
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
        self.search = TokenSearch(self._state)  # completions listed at the first focus
        self.search.setPlaceholderText("Add a token…")
        self.search.setToolTip(f"Type a piece (or #id) and press Enter to add it to the matrix "
                               f"(up to {MAX_TOKENS} tokens in all)")
        self.search.token_found.connect(self.token_added)
        self.search.not_found.connect(lambda text: self.info.setText(text))
        bar.addWidget(self.search, 1)
        self.count_label = QLabel()
        self.count_label.setToolTip("Distinct tokens in the matrix: the text's (special tokens left out) and the "
                                    f"added ones listed below, at most {MAX_TOKENS}")
        bar.addWidget(self.count_label)
        self.progress = ProgressBar()
        self.progress.setMaximumWidth(80)
        self.progress.setRange(0, 0)  # one step: busy until the matrices land
        self.progress.setToolTip("Comparing the tokens (many tokens of a wide table)")
        self.progress.hide()
        bar.addWidget(self.progress)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save the matrices (PNG/SVG) or the similarity matrix (CSV)")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.export_button)
        exports = (("Matrices as PNG…", "png"), ("Matrices as SVG…", "svg"), ("Similarity matrix as CSV…", "csv"))
        for text, ext in exports:
            menu.addAction(text, lambda e=ext: self._export_dialog(e))
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        return bar

    def _build_maps(self, maps: Sequence[Heatmap]) -> QWidget:
        mats = QWidget()
        ml = QVBoxLayout(mats)
        ml.setContentsMargins(0, 0, 0, 0)
        ml.setSpacing(4)
        bg, _fg = plot_colors()
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(bg)
        self.glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.glw.ci.setSpacing(SPACING * 2)
        ml.addWidget(self.glw, 1)
        self.info = WrapLabel(HOVER_HINT)
        self.info.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.info.setContentsMargins(SPACING, 0, SPACING, SPACING)
        ml.addWidget(self.info)
        self.main, self.ids_map, self.onehot = list(maps) or [make_heatmap(k) for k in range(len(MAPS))]
        for heatmap, (row, col, rows) in zip((self.main, self.ids_map, self.onehot), ((0, 0, 2), (0, 2, 1), (1, 2, 1))):
            self.glw.addItem(heatmap.plot, row=row, col=col, rowspan=rows)
            self.glw.addItem(heatmap.colorbar, row=row, col=col + 1, rowspan=rows)
        self.glw.ci.layout.setColumnStretchFactor(0, 5)
        self.glw.ci.layout.setColumnStretchFactor(2, 3)
        self.maps = [self.main, self.ids_map, self.onehot]
        self.glw.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        self.glw.scene().sigMouseClicked.connect(self._on_scene_clicked)
        return mats

    # -- read --------------------------------------------------------------------------
    @property
    def metric(self) -> str:
        return self.metric_combo.currentData()

    def set_metric(self, metric: str) -> None:
        self.metric_combo.setCurrentIndex(self.metric_combo.findData(metric))

    @property
    def matrices(self) -> SimilarityMatrices | None:
        """What is drawn (None when nothing is)."""
        return self._m

    def value_text(self, row_id: int, col_id: int) -> str:
        """The value of a cell as the view writes it."""
        m = self._m
        return self._fmt(m)(m.learned[m.index(row_id), m.index(col_id)])

    # -- state -------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        self._pair = None
        self._gate.update(self._clear_hover)

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._gate.update(self._draw_highlight)

    def _on_state_extra_tokens_changed(self, _ids: list) -> None:
        self._gate.update(self._draw_added)

    def _on_metric_combo_changed(self, _i: int) -> None:
        self._state.request_similarity(self.metric)

    def _synchronize(self) -> None:
        """Draw the state's matrices, or ask for them (with this page's measure)."""
        self._clear_hover()
        self._draw_added()
        comp, shown = self._state.jobs.similarity, self._gate.visible
        # the gate synchronizes before the binding hears the page was shown: want
        # the matrices now, so cheap ones are computed on the spot, not in a worker
        comp.want(self._binding, True)
        if comp.value is not None and comp.value.metric == self.metric:
            self._draw(comp.value)
        else:
            self._on_similarity_reset()
            self._state.request_similarity(self.metric)  # lands in _draw through the binding
            if not shown and comp.value is not None:  # an export from a hidden page
                self._draw(comp.value)
        if not shown:
            comp.want(self._binding, False)

    def _clear_hover(self) -> None:
        self.info.setText(HOVER_HINT)  # no hover text of another model survives
        self.glw.setToolTip("")

    # -- drawing -----------------------------------------------------------------------
    def _draw_added(self) -> None:
        """The added tokens, each with its remove button."""
        table = self._state.table
        ids = self._state.extra_ids if table is not None else []
        self.added.set_tokens([(i, table.shown_piece(i)) for i in ids])

    def _on_similarity_reset(self) -> None:
        """New tokens, measure or model: the maps are emptied at once. The page
        turns to "Comparing…" only when a worker starts (a cheap result follows
        at once, and flipping the pages back and forth costs a relayout)."""
        self._m = None
        table = self._state.table
        self.count_label.setText("")
        self.added.set_candidate(-1, None)
        self.empty.setText("Open a model to compare its tokens (Ctrl+O)" if table is None
                           else "Comparing the tokens…")
        if table is None:
            self._stack.setCurrentIndex(0)
        for h in self.maps:
            h.clear()

    def _on_similarity_started(self) -> None:
        self._gate.update(self._show_comparing)

    def _show_comparing(self) -> None:
        if self._m is None:
            self._stack.setCurrentIndex(0)

    def _on_similarity_failed(self, exc: BaseException) -> None:
        self.empty.setText(f"The tokens could not be compared: {user_message(exc)}")

    def _draw(self, m: SimilarityMatrices) -> None:
        if m.n == 0:
            self._on_similarity_reset()
            self.empty.setText("Type some text or add tokens to compare them")
            return
        self._m = m
        added = len(set(m.ids) - set(self._state.tokenized.distinct_ids()))
        self.count_label.setText(f"{m.n:,} tokens" + (f" ({added:,} added)" if added else ""))
        self._stack.setCurrentIndex(1)
        div, seq = pg.colormap.get(DIVERGING), pg.colormap.get(SEQUENTIAL)
        cmap = div if m.signed else seq
        self.main.set_title(f"Learned vectors: {TITLES[m.metric]}")
        self.main.colorbar.setLabel("right", BAR_LABELS[m.metric])
        self.main.set_values(m.learned, m.levels, cmap)
        self.main.write_cells(self._fmt(m), m.levels, cmap)
        self.ids_map.set_values(m.id_distance, m.id_levels, seq)
        self.ids_map.write_cells(compact_count, m.id_levels, seq, limit=SIDE_TEXT_MAX)
        self.onehot.set_values(m.one_hot, m.one_hot_levels, seq)
        self.onehot.write_cells(ONE_HOT_FORMAT, m.one_hot_levels, seq, limit=SIDE_TEXT_MAX)
        for h in self.maps:
            # the small maps share the main map's order: their column labels would only collide
            h.set_ticks(list(m.labels), bottom=h is self.main)
        note = " Some rows hold NaN or inf; those values were counted as 0." if m.zeroed else ""
        self.info.setText(
            f"Same {m.n:,} tokens three ways. Scalar ids invent an order: |i − j| calls neighbours in the numbering "
            f"alike. One-hot vectors are all √2 ≈ 1.414 apart (cosine 0): no pair is more alike than another. "
            f"Learned vectors put related tokens close.{note}  Hover a cell to read it; click to select the pair.")
        self._draw_highlight()

    @staticmethod
    def _fmt(m: SimilarityMatrices) -> CellFormat:
        return cell_format(m.learned, m.metric, m.n)

    def _draw_highlight(self) -> None:
        m = self._m
        if m is None:
            return
        row = m.index(self._state.selected_id)
        selected = self._state.selected_id
        # a token selected elsewhere that is not compared: offer to add it
        if row < 0 and self._state.in_range(selected):
            self.added.set_candidate(selected, self._state.table.shown_piece(selected))
        else:
            self.added.set_candidate(-1, None)
        pair = None
        if self._pair is not None and m.index(self._pair[0]) >= 0 and m.index(self._pair[1]) >= 0:
            pair = (m.index(self._pair[0]), m.index(self._pair[1]))
        for h in self.maps:
            h.highlight(row, m.n, pair)

    # -- cells -------------------------------------------------------------------------
    def select_cell(self, row: int, col: int) -> None:
        """Select the pair of a cell (row, col), as a click does."""
        m = self._m
        if m is None or not (0 <= row < m.n and 0 <= col < m.n):
            return
        a, b = m.ids[row], m.ids[col]
        self._pair = (a, b)
        self._describe_cell(row, col)
        self._draw_highlight()
        self.pair_selected.emit(a, b)
        self.token_selected.emit(a)

    def _describe_cell(self, r: int, c: int) -> str:
        m, table = self._m, self._state.table
        a, b = m.ids[r], m.ids[c]
        pa, pb = html.escape(table.shown_piece(a).text), html.escape(table.shown_piece(b).text)
        text = (f"<b>{pa}</b> (id {a:,}) and <b>{pb}</b> (id {b:,}): {SYMBOLS[m.metric]} = "
                f"{self._fmt(m)(m.learned[r, c])} · |i − j| = {abs(a - b):,} · "
                f"one-hot distance = {m.one_hot[r, c]:.3f}")
        self.info.setText(text)
        return text

    def _cell_under(self, scene_pos):
        for h in self.maps:
            cell = h.cell_at(scene_pos)
            if cell is not None:
                return cell
        return None

    def _on_scene_mouse_moved(self, pos) -> None:
        cell = self._cell_under(pos) if self._m is not None else None
        if cell is not None:
            self.glw.setToolTip(self._describe_cell(*cell))

    def _on_scene_clicked(self, event) -> None:
        if event.button() != Qt.LeftButton or self._m is None:
            return
        cell = self._cell_under(event.scenePos())
        if cell is not None:
            self.select_cell(*cell)

    # -- export ------------------------------------------------------------------------
    def _export_dialog(self, ext: str) -> None:
        filt = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV (*.csv)"}[ext]
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"similarity.{ext}", filt)
        if path and ext == "csv":
            self.export_matrix_csv(path)
        elif path:
            self.export_plot(path)

    def _sync_if_stale(self) -> None:
        if self._gate.stale:  # asked for while hidden: draw from the state first
            self._gate.sync_now()

    def export_plot(self, path: str) -> None:
        """Save the three matrices as PNG or SVG."""
        self._sync_if_stale()
        export_graphics(self.glw.ci, path)

    def export_matrix_csv(self, path: str) -> int:
        """Write the learned-vector matrix with a header of pieces; returns rows written."""
        self._sync_if_stale()
        m, table = self._m, self._state.table
        if m is None or table is None:
            return 0
        pieces = [table.piece(i) for i in m.ids]
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow([m.metric, "id"] + [f"{p} ({i})" for p, i in zip(pieces, m.ids)])
            for r, tid in enumerate(m.ids):
                w.writerow([pieces[r], tid] + [f"{v:.6g}" for v in m.learned[r]])
        return m.n
