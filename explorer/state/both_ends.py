"""Both ends of the model in the shared state: which matrix the matrix view
shows (E or the output matrix), the output matrix's overview, and the
selected token's direct path. Part of :class:`~explorer.state.app_state.AppState`
(``state.ends``); QtCore only."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.core.geometry.direct_path import INLINE_LOGITS, iter_direct_path
from explorer.core.matrix.overview import iter_matrix_overview
from explorer.workers import Computation

__all__ = ["BothEnds", "INPUT", "OUTPUT"]

INPUT, OUTPUT = "input", "output"


def _overview_job(table):
    """The output matrix's overview, as a job with words for its progress."""
    gen = iter_matrix_overview(table)
    try:
        while True:
            yield next(gen), "Reading the output matrix…"
    except StopIteration as stop:
        return stop.value


class BothEnds(QObject):
    """The output side of the loaded model.

    Signals
    -------
    matrix_side_changed(str)
        The matrix view shows E (:data:`INPUT`) or the output matrix (:data:`OUTPUT`).

    Computations
    ------------
    output_overview : MatrixOverview of the output matrix, while it is shown
        (lazy; untied models only: a tied one has one matrix).
    direct_path : DirectPath of the selected token: its output row and the tokens
        its input row alone predicts (lazy; none without an output matrix).
    """

    matrix_side_changed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._table = None
        self._selected = -1
        self._side = INPUT
        self.output_overview = Computation(self, lazy=True)
        self.direct_path = Computation(self, lazy=True)

    @property
    def matrix_side(self) -> str:
        return self._side

    @property
    def can_show_output(self) -> bool:
        """The model has an output matrix of its own (untied) to show."""
        t = self._table
        return t is not None and t.tied is False and t.has_output

    def set_matrix_side(self, side: str) -> None:
        """Show E or the output matrix (``OUTPUT`` falls back to ``INPUT``
        for a table without a second matrix)."""
        if side == OUTPUT and not self.can_show_output:
            side = INPUT
        if side == self._side:
            return
        self._side = side
        self.matrix_side_changed.emit(side)
        self._update_overview()

    # -- from the state ---------------------------------------------------------------
    def set_table(self, table) -> None:
        """A new model: it opens on its input table."""
        self._table, self._selected = table, -1
        self.direct_path.clear()
        self.output_overview.clear()
        if self._side != INPUT:
            self._side = INPUT
            self.matrix_side_changed.emit(INPUT)

    def select(self, token_id: int) -> None:
        self._selected = int(token_id)
        table, tid = self._table, self._selected
        key = (id(table), tid)
        if table is None or tid < 0 or not table.has_output:
            self.direct_path.clear()
        else:
            self.direct_path.follow(key, table.params <= INLINE_LOGITS, iter_direct_path, table, tid)

    def _update_overview(self) -> None:
        if self._side == OUTPUT and self.can_show_output:
            out = self._table.output_table()
            self.output_overview.request(_overview_job, out, key=id(out))
