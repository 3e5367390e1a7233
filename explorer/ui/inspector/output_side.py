"""The other end of the model for the selected token: its output row beside
its input row, and the tokens its input row alone would predict (the direct
path E[i] · W_outᵀ), with a line on what tying does to that."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.core.geometry.direct_path import DirectPath, lesson
from explorer.core.sources.output import tying_word
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate, job_status
from explorer.ui.style import SPACING

__all__ = ["OutputSide"]

#: tokens of the direct path listed
SHOWN = 6


class OutputSide(QWidget):
    """Compact panel under the inspector's facts.

    Signals
    -------
    token_clicked(int)
        The user clicked a predicted token (its id).
    """

    token_clicked = Signal(int)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, SPACING // 2, 0, 0)
        lay.setSpacing(2)
        self.heading = QLabel()
        self.heading.setObjectName("SectionTitle")
        self.heading.setToolTip("The output matrix W_out (lm_head) turns the last hidden state h into logits "
                                "h · W_outᵀ. Tied: W_out is E itself.")
        self.rows_line = QLabel()
        self.rows_line.setWordWrap(True)
        self.predicts = QLabel()
        self.predicts.setWordWrap(True)
        self.predicts.setTextFormat(Qt.RichText)
        self.predicts.setToolTip("Logits E[i] · W_out[j] of the input row alone, as if no layer stood between the "
                                 "two ends (the direct path); click a token to select it")
        self.predicts.linkActivated.connect(self._on_predicts_link_activated)
        self.lesson = QLabel()
        self.lesson.setWordWrap(True)
        self.lesson.setObjectName("ChipId")
        self.status = job_status()
        for w in (self.heading, self.rows_line, self.predicts, self.lesson, self.status):
            lay.addWidget(w)
        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.ends.direct_path, on_reset=self._clear,
                                   on_result=self._show, status=self.status)
        state.model_changed.connect(self._on_state_model_changed)

    def _synchronize(self) -> None:
        self._binding.redraw()
        self._show_heading()

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._show_heading)

    def _show_heading(self) -> None:
        table = self._state.table
        if table is None:
            self.heading.setText("Output side")
            return
        word = tying_word(table.tied, table.kind)
        self.heading.setText(f"Output side · {word}")
        self.heading.setToolTip(table.output_how or "This table has no model around it")
        if not table.has_output:
            self.rows_line.setText("No output matrix: " + (table.output_how or "the table has no model around it")
                                   + ".")

    def _clear(self) -> None:
        self._show_heading()
        table = self._state.table
        if table is None or table.has_output:
            self.rows_line.setText("")
        self.predicts.setText("")
        self.lesson.setText("")
        self.status.setText("")

    def _show(self, result: DirectPath | None) -> None:
        table = self._state.table
        self._show_heading()
        self.status.setText("")
        if result is None or table is None:
            return
        if result.tied:
            self.rows_line.setText(f"Output row: the same row (tied), ‖W_out[i]‖ = {result.output_norm:.4f}")
        else:
            self.rows_line.setText(f"Output row ‖W_out[i]‖ = {result.output_norm:.4f} · "
                                   f"cos(E[i], W_out[i]) = {result.cosine:+.3f}")
        links = []
        for j, logit in list(zip(result.top_ids.tolist(), result.top_logits.tolist()))[:SHOWN]:
            piece = html.escape(table.shown_piece(j).short(16))
            links.append(f'<a href="{j}">{piece}</a> {logit:+.2f}')
        self.predicts.setText("Predicts directly: " + ", ".join(links))
        self.lesson.setText(lesson(result))

    def _on_predicts_link_activated(self, href: str) -> None:
        self.token_clicked.emit(int(href))

    # -- read (tests) ---------------------------------------------------------------------
    @property
    def shown_ids(self) -> list[int]:
        value = self._state.ends.direct_path.value
        return [] if value is None else value.top_ids.tolist()[:SHOWN]
