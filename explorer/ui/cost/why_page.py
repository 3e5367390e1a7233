"""Why vectors rather than ids: the same few tokens as numbers on a line (a
false metric), as one-hot vectors (all equally far) and as the table's rows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from explorer.core.cost.why import DEFAULT_WORDS, MAX_WHY_TOKENS, WhyVectors, why_vectors
from explorer.core.errors import user_message
from explorer.state.app_state import AppState
from explorer.ui.common.binding import ShownGate
from explorer.ui.common.integer_axis import IntegerAxis
from explorer.ui.cost.tiles import (
    ReflowGrid,
    clear_matrix,
    fill_matrix,
    fit_height,
    matrix_table,
    note_label,
    plain_label,
    title_label,
)
from explorer.ui.style import DIVERGING, SPACING, TEXT_TOKENS, plot_colors, style_plot, text_color_on, translucent

#: opacity of the cosine colours behind the numbers
CELL_ALPHA = 110
#: the width a panel needs for six tokens' numbers (pixels); narrower, the panels stack
PANEL_WIDTH = 270


class WhyPage(QWidget):
    """Three panels on the same tokens: ids, one-hot vectors, learned vectors.

    Signals
    -------
    token_selected(int)
        The user clicked a token on the number line (its id).
    """

    token_selected = Signal(int)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._why: WhyVectors | None = None
        self._shown: tuple = (None, None)  # (table, what the panels show)
        self._cmap = pg.colormap.get(DIVERGING)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(SPACING)
        row = QHBoxLayout()
        lab = QLabel("Tokens")
        self.words_edit = QLineEdit(", ".join(DEFAULT_WORDS))
        self.words_edit.setToolTip(f"Words to compare, separated by commas or spaces (2 to {MAX_WHY_TOKENS} that the "
                                   "vocabulary holds as single tokens); "
                                   "otherwise the first tokens of the text are used")
        self.words_edit.setPlaceholderText(f"e.g. {', '.join(DEFAULT_WORDS)}")
        self.words_edit.editingFinished.connect(self._on_words_edit_editing_finished)
        lab.setToolTip(self.words_edit.toolTip())
        row.addWidget(lab)
        row.addWidget(self.words_edit, 1)
        lay.addLayout(row)
        self.note = note_label()
        lay.addWidget(self.note)

        self._panels = ReflowGrid(PANEL_WIDTH, 3)
        self._panels.setSpacing(SPACING * 2)
        for panel in (self._build_ids(), self._build_onehot(), self._build_learned()):
            self._panels.add(panel)
        lay.addLayout(self._panels)
        lay.addStretch(1)

        self._gate = ShownGate(self, self._synchronize)
        state.model_changed.connect(self._on_state_model_changed)
        state.tokens_changed.connect(self._on_state_tokens_changed)

    def _build_ids(self) -> QWidget:
        bg, fg = plot_colors()
        self.numberline = pg.PlotWidget(background=bg, axisItems={"bottom": IntegerAxis("bottom")}, enableMenu=False)
        self.numberline.setToolTip("Each token placed at its id on a number line; click one to select it")
        self.numberline.setMenuEnabled(False)
        self.numberline.setMouseEnabled(False, False)
        self.numberline.hideButtons()
        self.numberline.setFixedHeight(110)
        plot = self.numberline.getPlotItem()
        plot.setLabel("bottom", "token id")
        plot.hideAxis("left")
        style_plot(plot)
        self.numberline_points = pg.ScatterPlotItem(size=11, pen=None, brush=pg.mkBrush(TEXT_TOKENS))
        plot.addItem(self.numberline_points)
        self.numberline_points.sigClicked.connect(self._on_numberline_points_clicked)
        self._numberline_labels = []
        for _ in range(MAX_WHY_TOKENS):
            ti = pg.TextItem(color=fg, anchor=(0.5, 1.2))
            ti.hide()
            plot.addItem(ti)
            self._numberline_labels.append(ti)
        self.id_table = matrix_table("|i − j|: the distance ids as numbers would impose")
        self.id_caption = plain_label()
        return self._panel("1 · Ids as numbers", self.numberline, self.id_table, self.id_caption)

    def _build_onehot(self) -> QWidget:
        self.onehot_table = matrix_table("Above the diagonal: distance ‖e_i − e_j‖; below it: cos(e_i, e_j); "
                                         "one-hot vectors of length V")
        self.onehot_caption = plain_label()
        return self._panel("2 · One-hot vectors", self.onehot_table, self.onehot_caption)

    def _build_learned(self) -> QWidget:
        self.cos_table = matrix_table("cos(E[i], E[j]) = E[i]·E[j] / (‖E[i]‖ ‖E[j]‖), from the loaded table")
        self.cos_caption = plain_label()
        return self._panel("3 · The table's vectors", self.cos_table, self.cos_caption)

    @staticmethod
    def _panel(title: str, *widgets) -> QWidget:
        panel = QWidget()
        box = QVBoxLayout(panel)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(title_label(title))
        for w in widgets:
            box.addWidget(w)
        box.addStretch(1)
        return panel

    def resizeEvent(self, event) -> None:
        """Three panels side by side when they fit, else stacked."""
        self._panels.reflow(self, event.size().width())
        super().resizeEvent(event)

    # -- state -------------------------------------------------------------------------
    @property
    def why(self) -> WhyVectors | None:
        """The tokens compared, three ways (None before the page was first shown)."""
        return self._why

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._synchronize)

    def _on_state_tokens_changed(self, _tokens) -> None:
        # only the fallback to the text's tokens depends on the text
        if self._why is None or self._why.from_text:
            self._gate.update(self._synchronize)

    # -- intents (the user, the tour) ------------------------------------------------------
    def set_words(self, words) -> None:
        """Compare these words (as if the user typed them and pressed Enter); drawn now if the
        page is on screen, else when it is next shown (the tour's Close gave a hidden page
        its words back and drew its three panels in the click's turn)."""
        self.words_edit.setText(", ".join(words))
        self._gate.update(self._synchronize)

    def words(self) -> list[str]:
        """The words typed (what :meth:`set_words` takes)."""
        return [w for w in self.words_edit.text().replace(",", " ").split() if w]

    def _on_words_edit_editing_finished(self) -> None:
        """New words for the three panels."""
        self._synchronize()

    def _synchronize(self) -> None:
        table = self._state.table
        self._why = None
        if table is None:
            self._clear("Open a model to compare ids, one-hot vectors and learned vectors.")
            return
        words = self.words()
        try:
            why = why_vectors(table, words, self._state.tokens)
        except Exception as exc:  # a broken row or tokenizer must not take the view down
            self._clear(f"Cannot compare these tokens: {user_message(exc)}")
            return
        self._why = why
        shown = (tuple(why.ids), why.labels, why.missing, why.from_text)
        if self._shown[0] is table and self._shown[1] == shown:
            return  # typing that left the first tokens alone: the panels already show them
        self._shown = (table, shown)
        self.note.setText(self._note(why))
        self._draw(why, table)

    # -- drawing -----------------------------------------------------------------------
    @staticmethod
    def _note(why: WhyVectors) -> str:
        if why.n < 2:
            return ("Type at least two words the vocabulary holds as single tokens "
                    "(or some text with two different tokens).")
        if why.from_text:
            miss = ", ".join(why.missing) or "the words"
            return f"This vocabulary has no single token for {miss}: the first tokens of the text are used."
        if why.missing:
            return f"Not single tokens here, left out: {', '.join(why.missing)}."
        return "Same tokens, three ways of turning them into numbers."

    def _clear(self, message: str) -> None:
        self._shown = (None, None)
        self.note.setText(message)
        self.numberline_points.setData(x=[], y=[])
        for ti in self._numberline_labels:
            ti.hide()
        for t in (self.id_table, self.onehot_table, self.cos_table):
            clear_matrix(t)
        for c in (self.id_caption, self.onehot_caption, self.cos_caption):
            c.setText("")

    def _draw(self, why: WhyVectors, table) -> None:
        labels = list(why.labels)
        self._draw_numberline(why)
        fill_matrix(self.id_table, labels, why.id_distance, lambda x: f"{int(x):,}")
        ids_named = ", ".join(f"{lab} ({i:,})" for lab, i in zip(labels, why.ids))
        self.id_table.setToolTip("|i − j| between the ids: " + ids_named)
        if why.n >= 3:
            a, b, c = labels[:3]
            self.id_caption.setText(
                f"|{b} − {a}| = {why.id_distance[0, 1]:,} and |{c} − {b}| = {why.id_distance[1, 2]:,}: distances "
                "the numbering invents. Ids are names, not quantities.")
        else:
            self.id_caption.setText("Ids are names, not quantities: |i − j| is a distance the numbering invents.")
        self._draw_onehot(why, labels)
        self.onehot_caption.setText(
            f"Above the diagonal the distance, below it the cosine. Vectors of length V = {table.vocab_size:,} with a "
            f"single 1. Every pair is √2 = {np.sqrt(2):.3f} apart and at cosine 0: "
            "no order, but also no notion of similar.")
        fill_matrix(self.cos_table, labels, why.cosine, lambda x: "n/a" if not np.isfinite(x) else f"{x:+.3f}",
                    self.cosine_color)
        self.cos_caption.setText(
            f"Cosines of the learned rows (d = {table.dim:,}): related tokens can be close and unrelated ones far. "
            + ("(A random table has no meaning yet: its cosines are noise near 0.)" if table.kind == "random" else ""))

    def _draw_numberline(self, why: WhyVectors) -> None:
        ids = why.ids.astype(float)
        self.numberline_points.setData(x=ids, y=np.zeros(why.n), data=list(why.ids))
        if why.n:
            span = max(1.0, ids.max() - ids.min())
            self.numberline.setXRange(ids.min() - 0.15 * span, ids.max() + 0.15 * span, padding=0)
            self.numberline.setYRange(-0.6, 1.0, padding=0)
        # names of neighbouring ids (cat 49, dog 50) alternate above and below their points
        per_px = 1.3 * max(1.0, ids.max() - ids.min() if why.n else 1.0) / max(100, self.numberline.width() - 20)
        ends = [-np.inf, -np.inf]  # right end of the last name above, below
        for k in (np.argsort(ids, kind="stable") if why.n else []):
            ti = self._numberline_labels[k]
            ti.setText(why.labels[k])
            half = (QFontMetrics(ti.textItem.font()).horizontalAdvance(why.labels[k]) / 2 + 4) * per_px
            row = 0 if ids[k] - half > ends[0] or ends[1] >= ids[k] - half else 1
            ends[row] = ids[k] + half
            ti.setAnchor((0.5, 1.2) if row == 0 else (0.5, -0.2))
            ti.setPos(ids[k], 0.0)
            ti.show()
        for ti in self._numberline_labels[why.n:]:
            ti.hide()

    def _draw_onehot(self, why: WhyVectors, labels: list[str]) -> None:
        fill_matrix(self.onehot_table, labels, why.onehot_distance, lambda x: f"{x:.3f}")
        for i in range(why.n):
            for j in range(why.n):
                item = self.onehot_table.item(i, j)
                # above the diagonal the distance, below it the cosine: both fit a narrow cell
                item.setText("–" if i == j else (f"{why.onehot_distance[i, j]:.3f}" if j > i
                                                  else f"cos {why.onehot_cosine[i, j]:.0f}"))
                item.setTextAlignment(Qt.AlignCenter)
                item.setData(Qt.UserRole + 1, float(why.onehot_cosine[i, j]))
        fit_height(self.onehot_table)

    def cosine_color(self, x: float) -> QColor:
        """The translucent diverging colour behind a cosine cell."""
        return translucent(self._cmap.map((float(x) + 1) / 2, mode="qcolor"), CELL_ALPHA)

    def cell_text_color(self, x: float) -> QColor:
        """The text colour on a cosine cell (what fill_matrix gives it)."""
        return text_color_on(self.cosine_color(x))

    def _on_numberline_points_clicked(self, _item, points, _ev=None) -> None:
        """A token on the number line was clicked: select it."""
        if len(points):
            self.token_selected.emit(int(points[0].data()))
