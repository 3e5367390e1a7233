"""The other end of the model for the selected token: its output row beside
its input row, and the tokens its input row alone would predict (the direct
path E[i] · W_outᵀ), with a line on what tying does to that."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.core.errors import user_message
from explorer.core.geometry.direct_path import DirectPath, lesson
from explorer.core.sources.output import tying_word
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate, job_status
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.style import EXTRA, SPACING, style_as

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
        # the three labels keep their room from the dropped value until the next one comes
        # (a model switch, a new token): cleared and filled again, they moved everything under
        # them twice in the inspector beside every view
        self.heading = WrappedLabel()
        style_as(self.heading, "SectionTitle")
        self.heading.setToolTip("The output matrix W_out (lm_head) turns the last hidden state h into logits "
                                "h · W_outᵀ. Tied: W_out is E itself.")
        self.rows_line = self.heading  # the output row's facts share the heading's line
        self.predicts = WrappedLabel()
        self.predicts.setTextFormat(Qt.RichText)
        self.predicts.setToolTip("Logits E[i] · W_out[j] of the input row alone, as if no layer stood between the "
                                 "two ends (the direct path); click a token to select it")
        self.predicts.linkActivated.connect(self._on_predicts_link_activated)
        self.lesson = WrappedLabel()
        style_as(self.lesson, "ChipId")
        self.status = job_status()
        for w in (self.heading, self.predicts, self.lesson, self.status):
            lay.addWidget(w)
        self._facts = ""
        self._waiting = False  # the value was dropped while a model is open: the labels hold their room
        self._check_due = False  # a look at whether a value is still coming is queued
        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.jobs.direct_path, on_reset=self._clear,
                                   on_result=self._show, on_error=self._on_failed, status=self.status)
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
            self._set_heading("Output side")
        elif not table.has_output:
            why = table.output_how or "the table has no model around it"
            self._set_heading(f"Output side · {tying_word(table.tied, table.kind)}: {why}")
        else:
            self._set_heading(f"Output side · {tying_word(table.tied, table.kind)}{self._facts}")
        self.heading.setToolTip(table.output_how if table is not None and table.output_how else
                                "The output matrix W_out (lm_head) turns the last hidden state h into logits "
                                "h · W_outᵀ. Tied: W_out is E itself.")
        for label in (self.predicts, self.lesson):
            label.setVisible(bool(label.text()) or label.held)
        self.status.setVisible(bool(self.status.text()))

    def _set_heading(self, text: str) -> None:
        if self._waiting:
            self.heading.hold(text)
        else:
            self.heading.setText(text)

    def _clear(self) -> None:
        self._facts = ""
        self.status.setText("")
        if self._state.table is None:
            self._release()
            return
        # a model is open: the next value is usually on its way (the new model's first token, or
        # the next token's); the labels keep their room until it comes or the next turn shows
        # that none is coming
        self._waiting = True
        if not self._check_due:
            self._check_due = True
            QTimer.singleShot(0, self, self._release_if_nothing_comes)
        self.predicts.hold()
        self.lesson.hold()
        self._show_heading()

    def _release_if_nothing_comes(self) -> None:
        self._check_due = False
        comp = self._state.jobs.direct_path
        if self._waiting and comp.value is None and not comp.running and not comp.pending:
            self._release()

    def _release(self) -> None:
        """No value is coming: the labels give their room back."""
        self._waiting = False
        self.predicts.setText("")
        self.lesson.setText("")
        self._show_heading()

    def _on_failed(self, exc: BaseException) -> None:
        self.status.setText(user_message(exc))
        self._release()

    def _show(self, result: DirectPath | None) -> None:
        table = self._state.table
        self._waiting = False
        self.status.setText("")
        if result is None or table is None:
            self._release()
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
