"""The matrix view shows E or the model's own output matrix."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.state.both_ends import INPUT, OUTPUT
from explorer.ui.matrix.view import MatrixView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 30_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, MatrixView)


def test_untied_model_switches_to_its_output_matrix_and_back(qtbot, view):
    v, state, _ = view
    table = open_table("default")
    state.set_table(table)
    tid = table.tokenizer.id_of("king")
    state.set_selected_token(tid)
    assert v.side_combo.model().item(1).isEnabled() and "not tied" in v.side_note.text()
    v.side_combo.setCurrentIndex(1)
    assert state.ends.matrix_side == OUTPUT
    qtbot.waitUntil(lambda: v._band is not None and v.shown_table() is not table, timeout=TIMEOUT)
    out = table.output_table()
    band = v._band
    np.testing.assert_array_equal(band.image, out.rows(np.arange(band.start, band.stop)))
    assert "W_out" in v.band_plot.getAxis("bottom").labelText and "output matrix" in v.overview_plot.titleLabel.text
    v.side_combo.setCurrentIndex(0)
    assert state.ends.matrix_side == INPUT
    np.testing.assert_array_equal(v._band.image, table.rows(np.arange(v._band.start, v._band.stop)))


def test_a_tied_model_offers_one_matrix(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("smollm2"))
    assert not v.side_combo.model().item(1).isEnabled()
    assert v.side_note.text() == "tied: the output matrix is E itself"
    state.ends.set_matrix_side(OUTPUT)  # refused: there is no second matrix
    assert state.ends.matrix_side == INPUT


def test_a_new_model_opens_on_its_input_table(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("default"))
    state.ends.set_matrix_side(OUTPUT)
    state.set_table(open_table("toy:robot"))
    assert state.ends.matrix_side == INPUT and v.side_combo.currentIndex() == 0
    assert v.side_note.text() == ""
