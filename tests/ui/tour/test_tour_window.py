"""The guided tour in the real window: each step opens its model, text, token and view,
rings its widget, says what the core computes from the loaded table, and leaving it
gives the user back their own model, text, token, view and training settings."""

from __future__ import annotations

import pytest

from explorer.cli import main
from explorer.core.tour.steps import STEPS, claim_for
from explorer.core.training.session import Phase

TIMEOUT = 60_000
INDEX = {s.key: k for k, s in enumerate(STEPS)}


def _load(qtbot, ex, spec, text):
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT):
        ex.start(model=spec, text=text)


def _wait_step(qtbot, ex, go):
    tour = ex.tour
    with qtbot.waitSignal(tour.step_ready, timeout=TIMEOUT) as blocker:
        go()
    return blocker.args[0]


def test_the_tour_opens_each_step_and_gives_the_users_things_back(qtbot, explorer):
    ex = explorer
    _load(qtbot, ex, "toy:robot", "robot arm tool")
    ex.state.select_position(1)
    ex.window.show_view("similarity")
    training = ex.view("training")
    training.set_config(optimizer="sgd", dim=16)

    assert _wait_step(qtbot, ex, ex.window.tour_action.trigger) == 1  # Help → Tour
    tour, state, w = ex.tour, ex.state, ex.window
    assert state.table.spec == "toy:cat-sat" and state.text == "cat sat" and state.selected_position == 0
    assert w.tabs.currentWidget() is w.matrix_view
    assert tour.highlight.target is w.token_strip and tour.highlight.isVisible()
    claim = claim_for(STEPS[0], state.table, state.tokenized)
    assert tour.panel.body.text() == claim.text and "rows 1 and 2" in claim.text
    assert "step 1 of" in tour.panel.heading.text() and not tour.panel.back_button.isEnabled()
    # the card stays clear of the ringed widget
    assert not tour.panel.geometry().intersects(tour.highlight.target_rect())

    assert _wait_step(qtbot, ex, tour.panel.next_button.click) == 2
    lookup = ex.view("lookup")
    assert w.tabs.currentWidget().isAncestorOf(lookup) or w.tabs.currentWidget() is lookup
    assert tour.highlight.target is lookup.splitter
    assert tour.panel.body.text() == claim_for(STEPS[1], state.table, state.tokenized).text

    # a training step: a short run with the step's settings, its words from the run's history
    assert _wait_step(qtbot, ex, lambda: tour.go(INDEX["tied"])) == INDEX["tied"] + 1
    h = training.session.history
    assert h.n == STEPS[INDEX["tied"]].training.steps and training.config().tied
    assert tour.panel.body.text() == claim_for(STEPS[INDEX["tied"]], history=h).text
    assert tour.highlight.target is training.lesson

    # Back, then Close: the user's own model, text, token, view and training settings return
    assert _wait_step(qtbot, ex, tour.panel.back_button.click) == INDEX["tied"]
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT):
        tour.panel.close_button.click()
    qtbot.waitUntil(lambda: state.selected_position == 1, timeout=TIMEOUT)
    assert not tour.active and not tour.panel.isVisible() and not tour.highlight.isVisible()
    assert state.table.spec == "toy:robot" and state.text == "robot arm tool"
    assert w.tabs.tabText(w.tabs.currentIndex()) == "Similarity"
    cfg = training.config()
    assert training.session.phase is Phase.IDLE and cfg.optimizer == "sgd" and cfg.dim == 16 and not cfg.tied


def test_a_step_whose_view_is_elsewhere_waits_for_the_first_model(qtbot, explorer):
    ex = explorer
    ex.tour.start(INDEX["backward"] + 1)  # before any model: the tour waits for the user's own
    assert not ex.tour.active
    with qtbot.waitSignal(ex.tour.step_ready, timeout=TIMEOUT):
        ex.start(model="toy:robot", text="robot")
    assert ex.state.table.spec == "toy:gradient" and ex.state.text == "3 1 3"
    assert "only rows 1 and 3 get a gradient" in ex.tour.panel.body.text()
    lookup = ex.lookup_view  # the step shows the lookup's backward page, ringed
    assert lookup.showing_backward and ex.tour.highlight.target is lookup.backward
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT):
        ex.tour.close()
    assert ex.state.table.spec == "toy:robot"


@pytest.mark.parametrize("n", ["0", str(len(STEPS) + 1)])
def test_tour_out_of_range_is_an_error(capsys, n):
    assert main(["--tour", n]) == 2
    assert capsys.readouterr().err.startswith(f"error: --tour takes a step from 1 to {len(STEPS)}")
