"""The Health view: which rows did training leave behind? It mirrors the
state's ``health`` computation (run in a worker only while this view is on
screen) and the selection; clicking a point or a candidate selects it."""

from __future__ import annotations

from collections.abc import Generator

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QPushButton, QSplitter, QToolButton, QWidget

from explorer.core.errors import user_message
from explorer.core.health import HealthReport
from explorer.core.health.text import write_candidates_csv
from explorer.core.health.verify import VerificationResult, VerifyUnavailable, model_source
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, OneATurn, ShownGate, job_progress, job_status
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.health.candidates import CandidateTable
from explorer.ui.health.score_histogram import ScoreHistogram
from explorer.ui.health.summary import SummaryPanel
from explorer.ui.health.vocab_plot import VocabPlot
from explorer.ui.style import SPACING, FitLayout

__all__ = ["HealthView"]

NO_MODEL = "Open a model to check which of its rows training left behind."
WAITING = "Checking every row of the table and every id of the tokenizer…"
CANCELLED = "The check was cancelled. Check again to run it."
#: from this width on, the table stands beside the plots
WIDE_PX = 980
#: candidates the model is asked about
MAX_VERIFY = 20


class HealthView(QWidget):
    """Signals
    -------
    token_selected(int)
        A point of the scatter or a candidate was clicked.
    """

    token_selected = Signal(int)

    @classmethod
    def built_in_steps(cls, state: AppState) -> Generator[QWidget, None, HealthView]:
        """The view made over turns of the event loop (for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`, which holds what each step yields):
        the vocabulary plot, the histogram, then the rest. Made in one go it was one turn of
        80-105 ms in a real window, more in a monkey walk."""
        vocab_plot = VocabPlot()
        yield vocab_plot
        histogram = ScoreHistogram()
        yield histogram
        return cls(state, plots=(vocab_plot, histogram))

    def __init__(self, state: AppState, parent=None, plots: tuple[VocabPlot, ScoreHistogram] | None = None):
        super().__init__(parent)
        self._state = state
        self._report: HealthReport | None = None
        lay = FitLayout(self, wrapped_minimum=True)
        lay.setContentsMargins(0, SPACING // 2, 0, SPACING)
        lay.setSpacing(SPACING // 2)
        self.vocab_plot, self.histogram = plots or (VocabPlot(), ScoreHistogram())
        lay.addLayout(self._build_status_row())
        self.summary = SummaryPanel()
        lay.addWidget(self.summary)
        self.verify_note = WrappedLabel("")
        self.verify_note.setContentsMargins(SPACING, 0, SPACING, 0)
        lay.addWidget(self.verify_note)
        self.table = CandidateTable()
        self.plots = QSplitter(Qt.Vertical)
        self.plots.addWidget(self.vocab_plot)
        self.plots.addWidget(self.histogram)
        self.split = QSplitter(Qt.Horizontal)
        self.split.addWidget(self.plots)
        self.split.addWidget(self.table)
        for s in (self.plots, self.split):
            s.setChildrenCollapsible(False)
        self._wide: bool | None = None
        lay.addWidget(self.split, 1)

        self.vocab_plot.token_clicked.connect(self.token_selected)
        self.table.token_clicked.connect(self.token_selected)
        self._gate = ShownGate(self, self._synchronize)
        self._plots = OneATurn(self)  # a report's two plots, each in a turn of its own
        self._binding = JobBinding(self._gate, state.jobs.health, on_reset=self._clear, on_result=self._draw,
                                   on_error=self._on_check_failed, progress=self.progress, status=self.status,
                                   cancel=self.cancel_button)
        self._verify_binding = JobBinding(self._gate, state.jobs.verification, on_reset=self._on_verification_reset,
                                          on_result=self._show_verification, on_error=self._on_verification_failed,
                                          progress=self.progress, status=self.status, cancel=self.cancel_button)
        state.jobs.health.cancelled.connect(self._on_health_cancelled)
        state.jobs.health.running_changed.connect(self._on_health_running_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.model_changed.connect(self._on_state_model_changed)

    def _build_status_row(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setContentsMargins(SPACING, 0, SPACING, 0)
        self.status, self.progress = job_status(), job_progress()
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.hide()
        self.run_button = QPushButton("Check again")
        self.run_button.setToolTip("Run the health check of this table")
        self.run_button.clicked.connect(self._state.request_health)
        self.run_button.hide()
        self.verify_button = QPushButton("Verify with the model")
        self.verify_button.setToolTip(f"Load the whole model and ask it to repeat the {MAX_VERIFY} most "
                                      "under-trained tokens (seconds; Cancel stops it)")
        self.verify_button.clicked.connect(self._on_verify_clicked)
        self.verify_button.setEnabled(False)
        self.export_button = QToolButton()
        self.export_button.setText("Export CSV…")
        self.export_button.setToolTip("Save the ranked table of candidates as CSV")
        self.export_button.clicked.connect(self._export_dialog)
        self.export_button.setEnabled(False)
        row.addWidget(self.status)
        row.addWidget(self.vocab_plot.readout, 1)  # the point under the mouse
        for w in (self.progress, self.cancel_button, self.run_button, self.verify_button, self.vocab_plot.y_choice,
                  self.export_button):
            row.addWidget(w)
        return row

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._arrange(self.width() >= WIDE_PX)

    def _arrange(self, wide: bool) -> None:
        """Wide: the plots above each other, the table beside them. Narrow: the
        plots side by side, the table under them (every column stays readable)."""
        if wide == self._wide:
            return
        self._wide = wide
        self.split.setOrientation(Qt.Horizontal if wide else Qt.Vertical)
        self.plots.setOrientation(Qt.Vertical if wide else Qt.Horizontal)
        self.split.setSizes([600, 420] if wide else [300, 220])
        self.plots.setSizes([300, 200] if wide else [420, 300])

    @property
    def report(self) -> HealthReport | None:
        """The report drawn (None while it is computed, or with no model)."""
        return self._report

    # -- state -------------------------------------------------------------------------
    def _synchronize(self) -> None:
        self._binding.redraw()

    def _on_state_model_changed(self, _table) -> None:
        # hidden, the health job's reset waits for the next show, and the old report and piece
        # names kept the whole old table (and its derived arrays) alive until then: they go now
        if not self._gate.visible:
            self._clear()

    def _clear(self) -> None:
        self._plots.cancel()
        self._report = None
        table = self._state.table
        self.vocab_plot.set_report(None, vocab_size=table.vocab_size if table is not None else 0)
        self.histogram.set_report(None)
        self.table.set_report(None)
        self.export_button.setEnabled(False)
        self.verify_button.setEnabled(False)
        has_model = self._state.table is not None
        if has_model:
            self.verify_note.hold()  # its next words take its room
        else:
            self.verify_note.setText("")
        self.summary.show_message(WAITING if has_model else NO_MODEL, hold=has_model)
        health = self._state.jobs.health
        self.run_button.setVisible(has_model and not health.running and not health.pending)

    def _draw(self, report: HealthReport) -> None:
        table = self._state.table
        if table is None:
            return
        self.status.setText("")
        self.run_button.hide()
        shown = _shown_text(table)
        self.summary.set_report(report, table)
        self.table.set_report(report, shown)
        # the plots a turn each after the table: the three in one turn stalled a real window ~100 ms
        # when the tab came back after a model switch
        self._plots.run([lambda: self.vocab_plot.set_report(report, shown), lambda: self._drawn(report, table)],
                        now=False)

    def _drawn(self, report: HealthReport, table) -> None:
        """The report's last plot, then what needs the whole report drawn (:attr:`report` is set here)."""
        self.histogram.set_report(report)
        self._report = report
        self.export_button.setEnabled(True)
        self._show_verify_availability(table)
        if self._state.jobs.verification.value is not None:
            self._show_verification(self._state.jobs.verification.value)
        self._show_selection(self._state.selected_id)

    def _on_check_failed(self, exc: BaseException) -> None:
        self._clear()
        self.summary.show_message(f"The health check failed: {user_message(exc)}")
        self.run_button.show()

    def _on_health_cancelled(self) -> None:
        self._gate.update(self._show_cancelled)

    def _show_cancelled(self) -> None:
        self.summary.show_message(CANCELLED)
        self.status.setText("")
        self.run_button.show()

    def _on_health_running_changed(self, running: bool) -> None:
        if running:
            self.run_button.hide()

    def _on_state_selected_token_changed(self, token_id: int) -> None:
        self._gate.update(self._show_selection, token_id)

    def _show_selection(self, token_id: int) -> None:
        self.vocab_plot.set_selected(token_id)
        self.table.set_selected(token_id)

    # -- verification with the model ---------------------------------------------------
    def _show_verify_availability(self, table) -> None:
        try:
            model_source(table)
        except VerifyUnavailable as exc:
            self.verify_button.setEnabled(False)
            self.verify_note.setText(f"Verify with the model: not available. {exc}.")
            return
        self.verify_button.setEnabled(not self._state.jobs.verification.running)
        self.verify_note.setText("")

    def _on_verify_clicked(self) -> None:
        if self._report is not None:
            self.verify_button.setEnabled(False)
            self._state.request_verification(self._report.ranked[:MAX_VERIFY].tolist())

    def _on_verification_reset(self) -> None:
        self.table.set_verification(None)
        if self._report is not None and self._state.table is not None:
            self._show_verify_availability(self._state.table)

    def _show_verification(self, result: VerificationResult) -> None:
        if self._report is None:
            return
        self.table.set_verification(result)
        self.status.setText("")
        self.verify_button.setEnabled(True)
        n, bad = len(result.results), result.confirmed_count
        self.verify_note.setText(
            f"Asked {result.model} to repeat the {n} most under-trained tokens with Magikarp's {result.prompts} "
            f"prompts ({result.seconds:.0f} s): {bad} verified as glitch tokens, {result.strong_count} of them "
            f"strongly (the model gives them under {result.threshold:.0%}, or under 0.1 %, at every step of every "
            f"prompt); {n - bad} rejected, it can repeat them. See the \"repeat P\" column.")

    def _on_verification_failed(self, exc: BaseException) -> None:
        self.verify_note.setText(f"Verify with the model: {user_message(exc)}")
        self.verify_button.setEnabled(self._report is not None)

    # -- export ------------------------------------------------------------------------
    def _export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the candidates", "token_health.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str) -> int:
        """Write the rows of the candidates table as CSV; returns rows written."""
        if self._report is None or self._state.table is None:
            return 0
        return write_candidates_csv(path, self._report, self._state.table, self.table.model_.rowCount(),
                                    self._state.jobs.verification.value)


def _shown_text(table):
    """``id -> readable piece`` for the table (decoded bytes, visible spaces)."""
    return lambda token_id: table.shown_piece(token_id).text
