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
from explorer.ui.style import EXTRA, SPACING

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
        self.heading.setWordWrap(True)
        self.rows_line = self.heading  # the output row's facts share the heading's line
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
        for w in (self.heading, self.predicts, self.lesson, self.status):
            lay.addWidget(w)
        self._facts = ""
        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.jobs.direct_path, on_reset=self._clear,
                                   on_result=self._show, status=self.status)
        state.model_changed.connect(self._on_state_model_changed)

    def _synchronize(self) -> None:
        self._binding.redraw()
        self._show_heading()

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._show_heading)

    def _show_heading(self) -> None:
        """One line: the tying, and the output row's facts when they are known
        (the panel stays one line for a model without an output matrix)."""
        table = self._state.table
        if table is None:
            self.heading.setText("Output side")
        elif not table.has_output:
            why = table.output_how or "the table has no model around it"
            self.heading.setText(f"Output side · {tying_word(table.tied, table.kind)}: {why}")
        else:
            self.heading.setText(f"Output side · {tying_word(table.tied, table.kind)}{self._facts}")
        self.heading.setToolTip(table.output_how if table is not None and table.output_how else
                                "The output matrix W_out (lm_head) turns the last hidden state h into logits "
                                "h · W_outᵀ. Tied: W_out is E itself.")
        for label in (self.predicts, self.lesson, self.status):
            label.setVisible(bool(label.text()))

    def _clear(self) -> None:
        self._facts = ""
        self.predicts.setText("")
        self.lesson.setText("")
        self.status.setText("")
        self._show_heading()

    def _show(self, result: DirectPath | None) -> None:
        table = self._state.table
        self.status.setText("")
        if result is None or table is None:
            self._show_heading()
            return
        if result.tied:
            self._facts = f": the same row, ‖W_out[i]‖ = {result.output_norm:.4f}"
        else:
            self._facts = f" · ‖W_out[i]‖ = {result.output_norm:.4f} · cos(E[i], W_out[i]) = {result.cosine:+.3f}"
        links = []
        for j, logit in list(zip(result.top_ids.tolist(), result.top_logits.tolist()))[:SHOWN]:
            piece = html.escape(table.shown_piece(j).short(16))
            # the colour of added tokens: a click adds it (readable on light and dark)
            links.append(f'<a href="{j}" style="color:{EXTRA}">{piece}</a> {logit:+.2f}')
        self.predicts.setText("Predicts directly: " + ", ".join(links))
        self.lesson.setText(lesson(result))
        self._show_heading()

    def _on_predicts_link_activated(self, href: str) -> None:
        self.token_clicked.emit(int(href))

    # -- read (tests) ---------------------------------------------------------------------
    @property
    def shown_ids(self) -> list[int]:
        value = self._state.jobs.direct_path.value
        return [] if value is None else value.top_ids.tolist()[:SHOWN]
