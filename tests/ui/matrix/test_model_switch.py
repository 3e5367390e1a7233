"""A new model arrives in the matrix view in one pass: its band of rows is read once, around
the row the state selects, and the plots are not hidden and shown again on the way."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject

from explorer.core.sources import open_table
from explorer.ui.matrix import view as matrix_view
from explorer.ui.matrix.view import MatrixView
from tests.support.ui_helpers import standalone_view


class _Shows(QObject):
    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() in (QEvent.Show, QEvent.Hide):
            self.seen.append("show" if event.type() == QEvent.Show else "hide")
        return False


def test_a_new_model_reads_its_band_once_around_the_selected_row(qtbot, monkeypatch):
    centres = []
    real = matrix_view.row_band

    def counted(table, centre, half):
        centres.append(centre)
        return real(table, centre, half)

    monkeypatch.setattr(matrix_view, "row_band", counted)
    for v, state, _ in standalone_view(qtbot, MatrixView, size=(900, 600)):
        state.set_text("5000 4000")
        state.set_table(open_table("random:6000x32"))  # the random tables' tokens are their ids
        qtbot.waitUntil(lambda v=v: v._band is not None)
        assert state.selected_id == 5000 and centres == [5000]  # not row 0 first, then the selection
        shows = _Shows()
        v.glw.installEventFilter(shows)
        centres.clear()
        state.set_table(open_table("random:7000x48"))
        assert state.selected_id == 5000 and centres == [5000]
        band = v._band
        assert band.start <= 5000 < band.stop and v.band_img.image.shape[1] == 48
        assert v._stack.currentWidget() is v.glw and shows.seen == []  # drawn in place
        # a model with no text to select in: the band is read at row 0, once
        state.set_text("")
        centres.clear()
        state.set_table(open_table("random:300x16"))
        assert state.selected_id == -1 and centres == [0] and v._stack.currentWidget() is v.glw
