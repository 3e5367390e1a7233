"""The Projection view made over turns (its tab's first show): the same view as one made at once."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QApplication

from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from explorer.ui.projection.plot import ProjectionPlot
from explorer.ui.projection.side_panel import SidePanel
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


def test_the_view_made_in_steps_takes_its_plot_and_side_panel_made_beforehand_and_draws_as_one_made_at_once(qtbot):
    """Made in one turn, the view stalled a real window 200-440 ms when its tab was opened while the
    warm-up imported torch: a turn for the import, the plot, the side panel, then the rest."""
    fixture = standalone_view(qtbot, ProjectionView)
    at_once, state, _ = next(fixture)
    steps, held, views = ProjectionView.built_in_steps(state), [], []
    while True:
        try:
            held.append(next(steps))
            views.append(sum(1 for w in QApplication.allWidgets() if isinstance(w, ProjectionView)))
        except StopIteration as done:
            v = done.value
            break
    qtbot.addWidget(v)
    assert [type(h) for h in held] == [type(None), ProjectionPlot, SidePanel]
    assert views == [1, 1, 1]  # only the one made at once: the stepped view itself comes last
    assert v.plot is held[1] and v.info is held[2].info and v.analogy_panel is held[2].analogy
    v.resize(1000, 700)
    v.show()
    table = open_table("default")
    state.set_table(table)
    state.set_text("the quick fox chases the sleepy cat")
    for view in (v, at_once):
        qtbot.waitUntil(lambda view=view: view.result is not None and view.result.spec == table.spec, timeout=TIMEOUT)
    assert len(v.plot.cloud.positions()) == table.trained_rows
    np.testing.assert_array_equal(v.plot.cloud.positions(), at_once.plot.cloud.positions())
    assert v.plot.plot_item.getAxis("bottom").labelText == at_once.plot.plot_item.getAxis("bottom").labelText
    next(fixture, None)  # the fixture's teardown: the state's jobs stopped
