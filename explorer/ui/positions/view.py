"""The Positions view: where order comes in. It mirrors the state's
``positions`` (the model's input layer) and ``input_layer`` (the text's input
vectors) computations, both run in a worker only while the view is shown."""

from __future__ import annotations

from collections.abc import Generator

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QTabWidget, QVBoxLayout, QWidget

from explorer.core.errors import user_message
from explorer.core.input_layer import PositionsReport, TextInputs
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, MadeInParts, ShownGate, job_progress, job_status
from explorer.ui.positions.rotary_panel import RotaryPanel
from explorer.ui.positions.summary import SummaryLabel
from explorer.ui.positions.table_page import PositionTablePage
from explorer.ui.positions.text_page import TextInputsPage
from explorer.ui.style import SPACING, FitLayout

__all__ = ["PositionsView"]

NO_MODEL = "Open a model to see how it tells positions apart."
WAITING = "Reading the model's input layer…"


class PositionsView(QWidget):
    """Signals
    -------
    position_selected(int)
        A token of the text was clicked in the input table.
    """

    position_selected = Signal(int)

    @classmethod
    def built_in_steps(cls, state: AppState) -> Generator[QWidget, None, PositionsView]:
        """The view made over turns of the event loop (for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`, which holds what each step yields):
        the text page's three plots a step each, the page, then the view. Made in one go it
        was one turn of 150-270 ms in a real window."""
        plots = []
        for plot in TextInputsPage.plots_in_steps():
            plots.append(plot)
            yield plot
        page = TextInputsPage(plots=plots)
        yield page
        return cls(state, text_page=page)

    def __init__(self, state: AppState, parent=None, text_page: TextInputsPage | None = None):
        super().__init__(parent)
        self._state = state
        self._inputs: TextInputs | None = None
        lay = FitLayout(self)
        lay.setContentsMargins(0, 0, 0, SPACING)
        lay.setSpacing(SPACING // 2)
        self.summary = SummaryLabel()
        lay.addWidget(self.summary)
        row = QHBoxLayout()
        row.setContentsMargins(SPACING, 0, SPACING, 0)
        self.status, self.progress = job_status(), job_progress()
        row.addWidget(self.status, 1)
        row.addWidget(self.progress)
        lay.addLayout(row)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        self.text_page = text_page or TextInputsPage()
        # the other two pages (7 plots between them) are built when first shown, or first asked for
        self._table_page: PositionTablePage | None = None
        self._rotary: RotaryPanel | None = None
        self._holders = (_Holder(), _Holder())
        self._table_parts: list[QWidget] = []  # the table page's panels, made before the page
        # built on first show, a panel a turn (three plots and the page in one turn: 160-280 ms in a
        # monkey walk), the page itself last; asked for meanwhile, table_page makes the rest now
        self._table_build = MadeInParts([*(lambda make=make: self._table_parts.append(self._held(make()))
                                           for make in PositionTablePage.part_makers()), self._make_table_page], self)
        self._spare: QWidget | None = None  # where the panels wait, hidden
        self._behind: list[QWidget] = []  # built pages not in front when the report last changed
        self.pages.addTab(self.text_page, "Input for the text")
        self.pages.addTab(self._holders[0], "Position table")
        self.pages.addTab(self._holders[1], "Rotary angles")
        self.pages.currentChanged.connect(self._on_page_changed)
        self.pages.setTabToolTip(2, "How far pairs of dimensions of queries and keys turn at each position")
        self.pages.setTabVisible(2, False)
        lay.addWidget(self.pages, 1)
        self.text_page.position_clicked.connect(self.position_selected)

        self._gate = ShownGate(self, self._synchronize)
        self._positions = JobBinding(self._gate, state.jobs.positions, on_reset=self._on_positions_reset,
                                     on_result=self._draw_report, on_error=self._on_failed,
                                     progress=self.progress, status=self.status)
        self._text = JobBinding(self._gate, state.jobs.input_layer, on_reset=self._on_inputs_reset,
                                on_result=self._draw_inputs, on_error=self._on_failed)
        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)

    def idle_parts(self) -> list:
        """Parts made on demand, for the app to make while the user is idle (the inner pages)."""
        return [lambda: self.table_page, lambda: self.rotary]

    @property
    def table_page(self) -> PositionTablePage:
        """The position-table page (built now if it was not yet)."""
        self._table_build.finish()
        self._bring_up_to_date(self._table_page)
        return self._table_page

    @property
    def rotary(self) -> RotaryPanel:
        """The rotary-angles page (built now if it was not yet)."""
        if self._rotary is None:
            self._rotary = self._build_page(1, RotaryPanel)
        self._bring_up_to_date(self._rotary)
        return self._rotary

    def _bring_up_to_date(self, page) -> None:
        """A page behind the others takes the report now (it was not the page in front when it came)."""
        if page in self._behind:
            self._behind.remove(page)
            page.set_report(self.report)

    def _make_table_page(self) -> None:
        """The table page, from the panels made before it."""
        self._table_page = self._build_page(0, lambda: PositionTablePage(parts=tuple(self._table_parts)))
        self._table_parts.clear()
        if self._spare is not None:  # emptied by the page's adoptions
            self._spare.deleteLater()
            self._spare = None

    def _held(self, part: QWidget) -> QWidget:
        """``part``, owned by Qt in a hidden place until the page takes it: not hidden itself, so that
        it shows with the page (a splitter keeps a widget hidden that was hidden before it came)."""
        if self._spare is None:
            self._spare = QWidget(self._holders[0])
            self._spare.hide()
        part.setParent(self._spare)
        return part

    def _build_page(self, k: int, cls):
        """Page ``cls`` in holder ``k``, given the report as it stands."""
        page = self._holders[k].hold(cls())
        page.set_report(self.report)
        return page

    def _on_page_changed(self, index: int) -> None:
        if index == 1 and self._table_page is None:
            self._table_build.start(now=True)  # the first panel in the switch's turn
        elif index == 1:
            self.table_page  # noqa: B018
        elif index == 2:
            self.rotary  # noqa: B018

    @property
    def report(self) -> PositionsReport | None:
        return self._state.jobs.positions.value

    @property
    def inputs(self) -> TextInputs | None:
        return self._inputs

    # -- state -------------------------------------------------------------------------
    def _synchronize(self) -> None:
        self._positions.redraw()
        self._text.redraw()

    def _on_state_model_changed(self, _table) -> None:
        # hidden, the jobs' resets wait for the next show, and the inputs' piece names kept the
        # whole old table alive until then: they go now (shown, the resets clear them at once)
        if not self._gate.visible:
            self._on_inputs_reset()
            self._on_positions_reset()
        self._gate.update(self._synchronize)

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._gate.update(self._show_selection)

    def _show_selection(self) -> None:
        self.text_page.select_position(self._state.selected_position)

    def _on_positions_reset(self) -> None:
        has_model = self._state.table is not None
        self.summary.set_report(None, WAITING if has_model else NO_MODEL)
        self._behind.clear()
        for page in (self._table_page, self._rotary):  # hidden too: the old report goes now
            if page is not None:
                page.set_report(None)

    def _draw_report(self, report: PositionsReport) -> None:
        self.status.setText("")
        self.summary.set_report(report)
        self._give_pages_the_report()
        rotary = report.layer.rotary is not None
        self.pages.setTabVisible(2, rotary)  # a model without rotary positions has nothing to turn

    def _give_pages_the_report(self) -> None:
        """The new report: the page in front draws it now; one behind, when it is next shown or
        asked for (in the same turn, the hidden position table's redraw was 11 ms of the tab's
        return after a model switch). A page not built yet takes the report when it is."""
        front = self.pages.currentWidget()
        for holder, page in zip(self._holders, (self._table_page, self._rotary)):
            if page is None:
                continue
            if holder is front:
                page.set_report(self.report)
            elif page not in self._behind:
                self._behind.append(page)

    def _on_inputs_reset(self) -> None:
        self._inputs = None
        self.text_page.set_inputs(None, (), str)

    def _draw_inputs(self, inputs: TextInputs) -> None:
        self._inputs = inputs
        table = self._state.table
        tokens = self._state.tokenized.tokens
        if table is None:
            return self._on_inputs_reset()
        self.text_page.set_inputs(inputs, tokens, lambda t: table.shown_piece(t.id).text if t.ok else t.piece)
        self._show_selection()

    def _on_failed(self, exc: BaseException) -> None:
        self.status.setText(user_message(exc))


class _Holder(QWidget):
    """A tab's place for a page built later."""

    def __init__(self):
        super().__init__()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)

    def hold(self, page: QWidget) -> QWidget:
        self.layout().addWidget(page)
        return page
