"""The lookup view's first show stays light (issue 23: a real window stalled
0.6 s building it): numbers on cells are written only when a small table
needs them, all by one layer per plot, kept across tokens and tables.

Behaviour only: what is written where, never how long it took.
"""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF, Qt

from explorer.core.sources import open_table


@pytest.fixture
def setup(manual_view):
    return manual_view


def _pools(view):
    return view.onehot.zoom_texts, view.onehot.output.texts, view.pointer.output.texts


def _shown(pool) -> list[str]:
    return pool.shown()


def test_a_wide_table_makes_no_cell_numbers(setup):
    state, view = setup
    assert all(not pool.shown() for pool in _pools(view))  # nothing written before anything is shown
    state.set_table(open_table("random:2000x16"))  # d = 16: curves and images, no numbers on cells
    state.set_text("5 7")
    state.set_selected_token(1500)
    view.seek(1.0)
    assert view.frame.finished
    assert all(not pool.shown() for pool in _pools(view))
    assert not view.backward.plots_built  # the backward step's page was never opened
    assert view.measure_panel.chart is None  # nothing measured: no chart made yet


def _backward_result(qtbot, setup):
    """The Lookup view and its backward panel, with the backward step of "3 1 3" on toy table B."""
    state, view = setup
    state.set_table(open_table("toy:gradient"))
    state.set_text("3 1 3")
    qtbot.waitUntil(lambda: view.backward.result is not None, timeout=30_000)
    return view, view.backward


def test_the_backward_page_makes_its_plots_when_first_shown_and_draws_what_came(qtbot, setup):
    view, panel = _backward_result(qtbot, setup)
    assert not panel.plots_built and "2" in panel.counts.text()  # the counts are words: written already
    qtbot.mouseClick(view.direction_button, Qt.LeftButton)
    assert panel.isVisible()
    qtbot.waitUntil(lambda: panel.plots_built, timeout=5_000)  # a part a turn
    back = panel.result
    np.testing.assert_array_equal(panel.g_img.image, back.upstream.astype(np.float32))
    panel.seek_end()
    np.testing.assert_allclose(panel.grad_img.image, back.partial(back.ids.size, back.upstream.shape[1]))
    assert "Done" in panel.now_label.text()


def test_the_backward_plots_come_a_part_a_turn_and_the_last_draws_what_came(qtbot, setup):
    """Issue 23: the four plots made in the click's turn stalled a real window 85 ms (280 ms
    beside a worker). The click shows the page; the pair, the strip and the sum come a turn
    each, then the drawing."""
    view, panel = _backward_result(qtbot, setup)

    def plots() -> int:
        return len(panel.glw.ci.items)

    qtbot.mouseClick(view.direction_button, Qt.LeftButton)
    assert panel.isVisible() and plots() == 0 and not panel.plots_built  # none in the click's turn
    made = []
    for _ in range(panel.plot_parts):
        panel.make_plot_part()  # what each of the next turns does
        made.append((plots(), panel.plots_built))
    assert made == [(2, False), (3, False), (4, False), (4, True)]  # G and dL/dE, the strip, the sum
    np.testing.assert_array_equal(panel.g_img.image, panel.result.upstream.astype(np.float32))
    qtbot.wait(50)
    assert plots() == 4  # the turns still scheduled make nothing more


def test_a_backward_page_never_shown_is_made_whole_when_asked(qtbot, setup):
    view, panel = _backward_result(qtbot, setup)
    panel.make_plot_part()  # the idle builder's first part
    panel.ensure_plots()  # whoever needs the plots now: the rest at once
    assert panel.plots_built and len(panel.glw.ci.items) == 4
    np.testing.assert_array_equal(panel.g_img.image, panel.result.upstream.astype(np.float32))


def test_a_small_table_writes_every_cell_and_keeps_its_layer(qtbot, setup):
    state, view = setup
    table = open_table("toy:robot")  # V = 4, d = 3: every value of E written on its cell
    state.set_table(table)
    state.set_text("robot arm box tool")
    state.set_selected_token(2)
    view.seek(1.0)
    e = table.matrix()
    zoom = view.onehot.zoom_texts
    assert _shown(zoom) == [f"{x:+.2f}" for x in e.ravel()]  # one number per cell, not the capacity
    out = view.onehot.output.texts
    assert _shown(out) == [f"{x:+.2f}" for x in e[2]]
    made = [pool.layer for pool in _pools(view)]
    # another token, then another small table: the same layers say the new values
    state.set_selected_token(3)
    view.seek(1.0)
    assert _shown(out) == [f"{x:+.2f}" for x in e[3]]
    other = open_table("toy:cat-sat")  # V = 6, d = 4
    state.set_table(other)
    state.set_text("cat sat")
    state.set_selected_token(1)
    view.seek(1.0)
    f = other.matrix()
    assert _shown(zoom) == [f"{x:+.2f}" for x in f.ravel()]
    for path in (view.onehot, view.pointer):  # each value's colour over its own cell, d cells wide
        image = path.output.image
        assert image.mapRectToParent(image.boundingRect()) == QRectF(0, 0, f.shape[1], 1)
    assert [pool.layer for pool in _pools(view)] == made
    # back to the robot: the numbers of the bigger table are gone
    state.set_table(table)
    state.set_text("robot arm")
    state.set_selected_token(0)
    view.seek(1.0)
    assert _shown(zoom) == [f"{x:+.2f}" for x in e.ravel()]
    np.testing.assert_array_equal(view.pointer.output.values, e[0])


def test_the_view_made_in_steps_takes_its_panels_a_step_each_and_reads_the_row(qtbot):
    """The Lookup tab's first show makes the view over turns (LazyPage): the one-hot panel, then its
    three plots, then the pointer panel and its three plots, a step each (a panel a step was the idle
    builder's longest turn, 75-106 ms, after SmolLM2 opened), each panel yielded for the page to
    hold, then the rest; the view made so reads row i as one made at once (one-hot @ E equals E[i])."""
    from explorer.core.jobs import run_to_end
    from explorer.state.app_state import AppState
    from explorer.ui.lookup import LookupView
    from explorer.ui.lookup.onehot_panel import OneHotPanel
    from explorer.ui.lookup.pointer_panel import PointerPanel

    state, held = AppState(), []
    view = run_to_end(LookupView.built_in_steps(state), held.append)
    qtbot.addWidget(view)
    assert [w if w is None else type(w) for w in held] == [OneHotPanel, None, None, None,
                                                            PointerPanel, None, None, None]
    held = [w for w in held if w is not None]  # a panel, then a plot a step; each panel to be held
    assert view.onehot is held[0] and view.pointer is held[1]
    assert view.splitter.widget(0) is held[0] and view.splitter.widget(1) is held[1]
    view.resize(1100, 760)
    view.show()
    table = open_table("toy:robot")
    state.set_table(table)
    state.set_text("arm")
    state.set_selected_token(table.tokenizer.id_of("arm"))
    view.seek(1.0)
    assert view.frame.finished
    row = table.matrix()[table.tokenizer.id_of("arm")]
    # both panels end holding the row (one-hot @ E equals E[i] exactly), and the real check agrees
    np.testing.assert_array_equal(view.onehot.output.image.image[0], row)
    np.testing.assert_array_equal(view.pointer.output.image.image[0], row)
    qtbot.waitUntil(lambda: "identical" in view.verdict.text().lower(), timeout=60_000)
    state.deleteLater()
