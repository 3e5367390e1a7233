"""The Similarity view made over turns (its tab's first show): the same view as one made at
once; its random page's plots made a part a turn."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication

from explorer.core.sources import open_table
from explorer.ui.similarity import SimilarityView
from tests.support.ui_helpers import standalone_view

CHECK_TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, SimilarityView)


def test_the_view_made_in_steps_has_its_heatmaps_made_beforehand_and_works_as_one_made_at_once(qtbot):
    """The Similarity tab's first show makes the view over turns (LazyPage): a heatmap a step (each
    two plots), then the rest; laid out and drawn as when made at once."""
    from explorer.state.app_state import AppState
    from explorer.ui.similarity.regimes_page import MAPS

    state = AppState()
    steps, made = SimilarityView.built_in_steps(state), []
    while True:
        try:
            next(steps)
            made.append(sum(1 for w in QApplication.allWidgets() if isinstance(w, SimilarityView)))
        except StopIteration as done:
            v = done.value
            break
    qtbot.addWidget(v)
    assert len(made) == len(MAPS) + 1 and not any(made)  # the view itself comes last, after a step per map
    page = v.regimes_page
    layout = page.glw.ci
    for heatmap, (row, col) in zip((page.main, page.ids_map, page.onehot), ((0, 0), (0, 2), (1, 2))):
        assert layout.getItem(row, col) is heatmap.plot and layout.getItem(row, col + 1) is heatmap.colorbar
        assert isinstance(heatmap.plot, pg.PlotItem) and heatmap.plot.getViewBox().menu is None  # no menu
    assert [page.main.title.text, page.ids_map.title.text, page.onehot.title.text] == [t for t, _, _ in MAPS]
    v.resize(1000, 700)
    v.show()
    t = open_table("toy:robot")
    state.set_table(t)
    state.set_text("robot arm box tool")
    robot, arm, tool = (t.tokenizer.id_of(w) for w in ("robot", "arm", "tool"))
    qtbot.waitUntil(lambda: page.matrices is not None, timeout=10_000)
    assert page.value_text(robot, arm) == "+0.995" and page.value_text(robot, tool) == "-0.316"  # FACTS.md
    state.deleteLater()


def test_the_random_page_makes_its_plots_a_part_a_turn_and_the_last_draws_the_check(qtbot, view):
    """Issue 23: both histograms made in the click's turn stalled a real window 57-87 ms."""
    v, state, _ = view
    state.set_table(open_table("random:3000x768"))
    page = v.random_page
    with qtbot.waitSignal(state.random_check.finished, timeout=CHECK_TIMEOUT):
        v.show_page("random")
        assert not page.glw.ci.items and not page.plots_built  # none in the show's turn
        made = []
        for _ in range(page.plot_parts):
            page.make_plot_part()  # what each of the next turns does
            made.append((len(page.glw.ci.items), page.plots_built))
        assert made == [(1, False), (2, False), (2, True)]  # random pairs, the table's rows, then the drawing
        assert page.rand_curve.getData()[0] is None  # nothing to draw yet
    assert page.check is state.random_check.value and "0.0361" in page.facts.text()
    x, y = page.rand_curve.getData()
    np.testing.assert_allclose(y, np.exp(-x * x * 768 / 2) / math.sqrt(2 * math.pi / 768))
    np.testing.assert_array_equal(page.real_hist.getData()[1], page.check.real_density)
