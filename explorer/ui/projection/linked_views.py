"""Linked views under the projection, as Embedding Atlas has them: the
Charts tab (a bar chart per metadata column; a click or a drag filters the
map and every other chart counts again) and the Table tab (the shown points,
sortable, following the selection and selecting on click), with Export
selection. Both mirror the view's PointSelection after each filtering of the
cloud (its ``counted`` signal): nothing here computes what the map needs."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QPushButton, QSplitter, QTabWidget

from explorer.core.errors import user_message
from explorer.core.projection.point_table import PointTable, point_table
from explorer.ui.projection.charts_panel import ChartsPanel
from explorer.ui.projection.points_table import PointsTable

__all__ = ["LinkedViews", "MIN_HEIGHT"]

#: pixels the tabs keep when the window is small (they fold away only when dragged shut)
MIN_HEIGHT = 190


class LinkedViews(QTabWidget):
    """Charts and Table; ``select`` (a signal of token ids) receives the table's clicks."""

    def __init__(self, state, select, parent=None):
        super().__init__(parent)
        self._state, self._points, self._info = state, None, None
        self._drawn: tuple = ()  # the ids, xy and metadata the table was built from
        self._pieces: dict[int, str] = {}  # pieces read so far, kept across tables of one model
        self.charts = ChartsPanel()
        self.table = PointsTable()
        self.table.token_clicked.connect(select)
        self.table.model_.pieces_wanted.connect(state.request_piece_order)  # read in a worker
        state.jobs.piece_order.finished.connect(self.table.model_.set_piece_order)
        state.jobs.piece_order.failed.connect(self._on_piece_order_failed)
        self.addTab(self.charts, "Charts")
        self.addTab(self.table, "Table")
        self.export_button = QPushButton("Export selection…")
        self.export_button.setToolTip("Write the points shown (every filter applied) as CSV, in the table's order: "
                                      "id, piece, metadata and coordinates")
        self.export_button.clicked.connect(self._on_export_clicked)
        self.setCornerWidget(self.export_button, Qt.TopRightCorner)
        self.setDocumentMode(True)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.model_changed.connect(self._on_state_model_changed)

    def under(self, plot) -> QSplitter:
        """``plot`` over these tabs, in a splitter the user can drag (the tabs fold away)."""
        split = QSplitter(Qt.Vertical)
        split.addWidget(plot)
        split.addWidget(self)
        split.setChildrenCollapsible(True)
        split.setCollapsible(0, False)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([420, 240])
        # a whole chart (seven bars) under the tab bar and the caption, even in a 700 px high window
        self.setMinimumHeight(MIN_HEIGHT)
        return split

    def follow(self, points, info=None) -> None:
        """Mirror ``points`` (the view's PointSelection) each time it filters the cloud; say
        what Export selection wrote in ``info`` (ProjectionInfo)."""
        self._points, self._info = points, info
        self.charts.follow(points)
        points.counted.connect(self._on_points_counted)

    def export_selection(self, path: str) -> int:
        """Write the shown points, as the table orders them, to ``path`` (CSV). Returns the rows written."""
        self._points.finish_counting()  # a big cloud's table comes a turn after its map
        model = self.table.model_
        if model.points is None:
            return 0
        return model.points.write_csv(path, model.rows)

    # -- following -----------------------------------------------------------------------------
    def _on_points_counted(self) -> None:
        points = self._points
        ids, xy, keep = points.drawn
        self.charts.show_counts(points.columns, points.cross, points.charts)
        st = self._state
        sources = (st.jobs.token_meta.value, st.jobs.health.value, st.classes, points.user)
        drawn = (ids, xy, *sources)
        model = self.table.model_
        if self._drawn and all(a is b for a, b in zip(self._drawn[2:], sources)) \
                and np.array_equal(self._drawn[0], ids) and np.array_equal(self._drawn[1], xy):
            model.set_keep(keep)
        else:
            table = st.table
            built = point_table(ids, xy, ("x", "y"), table, *sources[:2], classes=sources[2], user=sources[3],
                                pieces=self._pieces) if table is not None else None
            model.set_points(built, keep)
        self._drawn = drawn
        self.table.select_token(st.selected_id)

    def _on_state_selected_token_changed(self, token_id: int) -> None:
        self.table.select_token(token_id)

    def _on_piece_order_failed(self, exc: BaseException) -> None:
        self.table.model_.pieces_failed()
        self._say(f"Could not sort by piece: {user_message(exc)}")

    def _on_state_model_changed(self, _table) -> None:
        self._drawn, self._pieces = (), {}
        self.charts.clear()
        self.table.model_.set_points(None, np.zeros(0, bool))

    def _on_export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export selection", "selection.csv", "CSV (*.csv)")
        if not path:
            return
        try:
            n = self.export_selection(path)
        except OSError as exc:
            self._say(f"Could not export to {path}: {user_message(exc)}")
            return
        self._say(f"Wrote {n:,} points to {path}")

    def _say(self, text: str) -> None:
        if self._info is not None:
            self._info.show_hover(text)

    def points_table(self) -> PointTable | None:
        """The table the Table tab shows (all drawn points, before the filters)."""
        return self.table.model_.points
