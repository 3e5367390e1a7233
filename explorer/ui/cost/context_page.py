"""The lookup is context-free: one word typed in two sentences reads one row;
where the model can run here (a transformers model, or the explorer's own
toy model such as the bundled one), its first layer shows the two vectors part."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import qdebounced, signals_blocked

from explorer.core.cost import parameters as cost
from explorer.core.cost.context import (
    DEFAULT_SENTENCES,
    DEFAULT_WORD,
    ContextPlan,
    ContextResult,
    SameRow,
    choose_demonstration,
    context_plan,
    same_row,
)
from explorer.core.errors import user_message
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate, job_progress
from explorer.ui.common.table_fit import fit_to_contents
from explorer.ui.cost.tiles import note_label, plain_label, title_label
from explorer.ui.style import ACCENT, SPACING, TEXT_TOKENS, mono_font, style_as

#: typing pauses this long before the model's first layer runs again
DEBOUNCE_MS = 400
#: a cosine below this is shown as "differs" (float32 noise stays above it)
SAME_COSINE = 0.99995
OCCURRENCE_COLUMNS = ["sentence", "position", "piece", "token id", "byte offset", "first values of the row"]
CONTEXT_COLUMNS = ["stage", "cos(1, 2)", "max |1 − 2|", "what it includes"]
CONTEXT_HEADER_TIPS = ["Where in the model the vectors are taken",
                       "Cosine between the vectors of occurrence 1 and occurrence 2 (1: same direction)",
                       "Largest absolute difference between their values (0: the very same vector)",
                       "What the vector at this stage is made of"]


def _hex_offset(table, token_id: int) -> str:
    try:
        return f"0x{table.byte_offset(token_id):X}"
    except (IndexError, TypeError, ValueError):
        return "–"


def _readonly_table(columns: list[str], tooltip: str, height: int) -> QTableWidget:
    t = QTableWidget()
    t.setToolTip(tooltip)
    t.setEditTriggers(QAbstractItemView.NoEditTriggers)
    t.verticalHeader().hide()
    t.setFont(mono_font())
    t.setColumnCount(len(columns))
    t.setHorizontalHeaderLabels(columns)
    t.horizontalHeader().setStretchLastSection(True)
    t.setFixedHeight(height)
    return t


class ContextPage(QWidget):
    """A word in two sentences: same id, same row; then the first layer's outputs."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._same: SameRow | None = None
        self._plan = ContextPlan(None)
        self._table = None  # the table the sentences were chosen for
        self._chosen = (DEFAULT_WORD, *DEFAULT_SENTENCES)  # the inputs the page (not the user) wrote
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 2, SPACING, SPACING * 2, SPACING)
        lay.setSpacing(SPACING)
        lay.addLayout(self._build_inputs())

        lay.addWidget(title_label("The lookup: same id → same row"))
        self.occ_table = _readonly_table(OCCURRENCE_COLUMNS, "Each occurrence of the word: its sentence, position, "
                                         "id and the row it reads", 92)
        lay.addWidget(self.occ_table)
        self.verdict = plain_label()
        style_as(self.verdict, "Verdict")
        self.verdict.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.verdict)

        lay.addWidget(title_label("The model's first layer: context changes the vector"))
        self.ctx_table = _readonly_table(CONTEXT_COLUMNS, "The two occurrences' vectors compared at each stage of "
                                         "the model: their cosine and their largest difference", 120)
        for j, tip in enumerate(CONTEXT_HEADER_TIPS):
            self.ctx_table.horizontalHeaderItem(j).setToolTip(tip)
        # rows follow their notes' wrapping as the page's width changes (a few rows: cheap)
        self.ctx_table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        lay.addWidget(self.ctx_table)
        status = QHBoxLayout()
        self.ctx_status = note_label()
        self.ctx_progress = job_progress()
        self.ctx_cancel = QToolButton()
        self.ctx_cancel.setText("Cancel")
        self.ctx_cancel.setToolTip("Stop running the model's first layer")
        self.ctx_cancel.hide()
        status.addWidget(self.ctx_status, 1)
        status.addWidget(self.ctx_progress)
        status.addWidget(self.ctx_cancel)
        lay.addLayout(status)
        self.scale_note = plain_label()
        self.scale_note.setToolTip("The original Transformer multiplies the looked-up row by √d_model before "
                                   "adding positions")
        lay.addWidget(self.scale_note)
        lay.addStretch(1)

        self._request_later = qdebounced(self._request_context, timeout=DEBOUNCE_MS)
        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.jobs.context, on_reset=self._clear_context,
                                   on_result=self._draw_context, on_error=self._on_context_failed,
                                   progress=self.ctx_progress, status=self.ctx_status, cancel=self.ctx_cancel)
        state.jobs.context.cancelled.connect(self._on_context_cancelled)
        state.model_changed.connect(self._on_state_model_changed)

    def _build_inputs(self) -> QGridLayout:
        grid = QGridLayout()
        grid.setHorizontalSpacing(SPACING)
        self.word_edit = QLineEdit(DEFAULT_WORD)
        self.word_edit.setToolTip("The word to follow; it must be a single token of the vocabulary")
        self.sentence_edits = [QLineEdit(s) for s in DEFAULT_SENTENCES]
        for k, e in enumerate(self.sentence_edits):
            e.setToolTip(f"Sentence {k + 1}: use the word in a different sense")
            e.textEdited.connect(self._on_inputs_text_edited)
        self.word_edit.textEdited.connect(self._on_inputs_text_edited)
        rows = (("Word", self.word_edit), ("Sentence 1", self.sentence_edits[0]),
                ("Sentence 2", self.sentence_edits[1]))
        for r, (name, w) in enumerate(rows):
            lab = QLabel(name)
            lab.setToolTip(w.toolTip())
            grid.addWidget(lab, r, 0)
            grid.addWidget(w, r, 1)
        return grid

    # -- read (tests, the view) --------------------------------------------------------
    @property
    def same(self) -> SameRow | None:
        return self._same

    @property
    def plan(self) -> ContextPlan:
        return self._plan

    @property
    def context(self) -> ContextResult | None:
        """The first-layer result shown, when it is for the sentences on screen."""
        comp = self._state.jobs.context
        return comp.value if self._plan.ok and comp.key == self._plan_key() else None

    @property
    def context_message(self) -> str:
        return self.ctx_status.text()

    # -- state -------------------------------------------------------------------------
    def _on_state_model_changed(self, _table) -> None:
        self._request_later.cancel()
        self._gate.update(self._synchronize)

    def _on_inputs_text_edited(self, _text: str) -> None:
        """The word or a sentence changed: the rows now, the model's run once typing pauses."""
        self._update_same()
        if self._plan.ok:
            self._request_later()

    def _synchronize(self) -> None:
        """Everything from the state: sentences for a new table, rows, the first-layer run."""
        table = self._state.table
        if table is not self._table:
            self._table = table
            if table is not None:
                self._choose_sentences(table)
        self._update_same()
        if self._plan.ok:
            self._request_context()

    def _choose_sentences(self, table) -> None:
        """Keep sentences the user typed if the word is found in both;
        otherwise (and always for the page's own) the demonstration this
        vocabulary shows best (see choose_demonstration): the bundled
        model's own "bank" sentences rather than English ones it reads as
        <unk>."""
        inputs = (self.word_edit.text(), *(e.text() for e in self.sentence_edits))
        if inputs != self._chosen and same_row(table, inputs[1:], inputs[0]).ok:
            return
        self._set_inputs(*choose_demonstration(table, (self._state.text, table.example_text)))

    def _set_inputs(self, word: str, sentences) -> None:
        for edit, text in zip([self.word_edit, *self.sentence_edits], [word, *sentences]):
            with signals_blocked(edit):
                edit.setText(text)
        self._chosen = (word, *sentences)

    # -- the lookup --------------------------------------------------------------------
    def _update_same(self) -> None:
        table = self._state.table
        if table is None:
            self._same, self._plan = None, ContextPlan(None, reason="Open a model.")
            self.occ_table.setRowCount(0)
            self.verdict.setText("Open a model, then type a word in two sentences.")
            self.scale_note.setText("")
            self._show_plan()
            return
        same = same_row(table, [e.text() for e in self.sentence_edits], self.word_edit.text())
        self._same = same
        self._plan = context_plan(table, same)
        self._draw_occurrences(table, same)
        self._draw_verdict(same)
        d = table.dim
        self.scale_note.setText(
            f"Note: the original Transformer multiplies each looked-up row by √d_model before adding positions "
            f"(√512 = {cost.embedding_scale(512):.1f}); for this table that factor would be √{d:,} = "
            f"{cost.embedding_scale(d):.1f}.")
        self._show_plan()

    def _draw_occurrences(self, table, same: SameRow) -> None:
        self.occ_table.setRowCount(len(same.occurrences))
        for i, o in enumerate(same.occurrences):
            values = same.rows[i][:4] if same.ok else table.row(o.id)[:4]
            first = "[" + ", ".join(f"{x:+.4f}" for x in values) + ", …]"
            cells = [f"{o.sentence + 1}", f"{o.position}", table.shown_piece(o.id).text, f"{o.id:,}",
                     _hex_offset(table, o.id), first]
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setTextAlignment((Qt.AlignRight if j in (0, 1, 3, 4) else Qt.AlignLeft) | Qt.AlignVCenter)
                self.occ_table.setItem(i, j, item)
        fit_to_contents(self.occ_table)

    def _draw_verdict(self, same: SameRow) -> None:
        if not same.ok:
            self.verdict.setText(same.message)
            self.verdict.setStyleSheet("")
            return
        ids_same = "the same id" if same.same_id else "different ids"
        rows = "the same row" if same.same_id else "different rows"
        equal = "identical" if same.rows_equal else "different"
        self.verdict.setText(
            f"Both occurrences have {ids_same} ({same.occurrences[0].id:,}), so they read {rows}: the vectors are "
            f"{equal} (largest |difference| = {same.max_abs_difference:.6g}). "
            "The lookup sees neither the neighbours nor the position.")
        self.verdict.setStyleSheet(f"color: {ACCENT};" if same.rows_equal else "")

    # -- the first layer ---------------------------------------------------------------
    def _plan_key(self) -> tuple:
        p = self._plan
        return (str(p.folder), tuple(tuple(s) for s in p.sequences), tuple(tuple(x) for x in p.picks))

    def _show_plan(self) -> None:
        """The first-layer table for the sentences on screen: its result if the
        state has it, else empty with what happens next."""
        self.ctx_table.setVisible(self._plan.ok)  # no empty table where no run can be made
        result = self.context
        if result is not None:
            self._draw_context(result)
            return
        self._fill_context_table(None)
        if not self._plan.ok:
            self.ctx_status.setText("Contextual vectors are not available for this table. " + self._plan.reason)
        else:
            self.ctx_status.setText("Running the model's first layer on both sentences…")

    def _request_context(self) -> None:
        """Ask the state to run the first layer on the sentences on screen."""
        if not self._gate.visible:  # the page was left while typing paused: run it when shown again
            self._gate.mark_stale()
            return
        if self._plan.ok:
            self._state.request_context(self._plan.folder, self._plan.sequences, self._plan.picks)

    def _clear_context(self) -> None:
        self._fill_context_table(None)

    def _draw_context(self, result: ContextResult) -> None:
        if self._state.jobs.context.key != self._plan_key():
            return  # for sentences no longer on screen
        self._fill_context_table(result)
        c1 = result.cosine(result.stages[-1])
        word = self._same.word if self._same is not None else "word"
        seen = self._windows_text(result)
        if c1 < SAME_COSINE:
            self.ctx_status.setText(
                f"After {result.layer} the two “{word}” vectors differ: cos = {c1:.4f} < 1. "
                f"{result.mixing}{seen}; the table row itself never changes.")
        else:
            self.ctx_status.setText(f"After {result.layer} the two “{word}” vectors are still alike "
                                    f"(cos = {c1:.4f}){seen}: try sentences whose other words differ more.")

    def _windows_text(self, result: ContextResult) -> str:
        """What each occurrence's layer read, for models with a fixed window."""
        table = self._state.table
        if not result.windows or table is None:
            return ""
        parts = [" ".join(table.shown_piece(i).text for i in w) for w in result.windows[:2]]
        return f" (occurrence 1 read “{parts[0]}”, occurrence 2 “{parts[1]}”)"

    def _on_context_failed(self, exc: BaseException) -> None:
        self.ctx_status.setText(f"The model could not be run here: {user_message(exc)}")

    def _on_context_cancelled(self) -> None:
        self.ctx_status.setText("Cancelled. Edit a sentence to run the first layer again.")

    def _fill_context_table(self, result: ContextResult | None) -> None:
        t = self.ctx_table
        if result is None:
            t.setRowCount(0)
            return
        t.setRowCount(len(result.stages))
        for i, stage in enumerate(result.stages):
            c = result.cosine(stage)
            v = result.vectors[stage].astype(np.float64)
            diff = float(np.max(np.abs(v[0] - v[1])))
            note = result.notes[i] if i < len(result.notes) else ""
            for j, (text, value) in enumerate(((stage, None), (f"{c:.4f}", c), (f"{diff:.4g}", diff), (note, None))):
                item = QTableWidgetItem(text)
                if value is not None:
                    item.setData(Qt.UserRole, float(value))
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    if j == 1 and c < SAME_COSINE:
                        item.setForeground(QColor(TEXT_TOKENS))
                if j == 3:
                    item.setToolTip(text)
                t.setItem(i, j, item)
        fit_to_contents(t)
        self._fit_context_height()

    def _fit_context_height(self) -> None:
        """Rows as tall as their wrapped notes, the table as tall as its rows."""
        t = self.ctx_table
        rows = sum(t.rowHeight(r) for r in range(t.rowCount()))
        t.setFixedHeight(max(120, t.horizontalHeader().height() + rows + 2 * t.frameWidth() + 2))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_context_height()  # a narrower page wraps the notes onto more lines
