"""The guided tour in the real window: each step opens its model, text, token and view,
rings its widget, says what the core computes from the loaded table, and leaving it
gives the user back their own model, text, token, view and training settings."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from PySide6.QtWidgets import QMessageBox
from safetensors.torch import save_file

from explorer.cli import main
from explorer.core.tour.steps import STEPS, claim_for
from explorer.core.training.session import Phase
from explorer.ui.tour.highlight import RING_WIDTH

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
    # issue 25: the ring runs outside the panels, never over the text at their edges
    inner = RING_WIDTH + 1
    ring = tour.highlight.ring_rect()
    assert ring.adjusted(inner, inner, -inner, -inner).contains(tour.highlight.target_rect())
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


def _snapshot(ex) -> dict:
    """What the user sees and owns: model, text, token, tab, each view's page, the words
    of Why vectors and the analogy, the training settings, run and legend."""
    training, cost = ex.view("training"), ex.view("cost")
    s, w = training.session, ex.window
    analogy = ex.view("projection").analogy_panel
    return {"spec": ex.state.table.spec, "text": ex.state.text, "position": ex.state.selected_position,
            "tab": w.tabs.tabText(w.tabs.currentIndex()),
            "pages": {n: ex.view(n).current_page() for n in ("lookup", "cost", "similarity")},
            "why": cost.why_page.words(), "analogy": analogy.words(), "answers": analogy.answers(),
            "config": training.config(), "phase": s.phase, "run": id(s.run),
            "history": None if s.history is None else (s.history.n, s.history.last_step),
            "legend": training.charts.sparsity.plot.titleLabel.text,
            "charted": training.charts.run is s.run}


def test_the_panel_stays_put_and_closing_gives_everything_back(qtbot, explorer):
    """Issue 25, items 6 and 7: Next is at one place on every step; finishing the tour
    leaves the user's run (charts and legend), pages and words as they were."""
    ex = explorer
    _load(qtbot, ex, "default", "the cat sat on the mat")
    ex.state.select_position(2)
    training = ex.view("training")
    training.set_config(tied=False, steps=40, dim=8)
    with qtbot.waitSignal(training.steps_reached, timeout=TIMEOUT):
        training.run_steps_then(40)
    qtbot.waitUntil(lambda: training.session.phase is Phase.FINISHED, timeout=TIMEOUT)
    ex.view("cost").show_page("compare")
    ex.view("cost").why_page.set_words(["cat", "dog"])
    ex.view("projection").analogy_panel.set_words("cat", "dog", "bird")
    ex.window.show_view("health")
    before = _snapshot(ex)
    assert before["history"][0] == 40 and "decay only" in before["legend"]

    tour = ex.tour
    places = [None] * len(STEPS)

    def record(n: int) -> None:
        places[n - 1] = tour.panel.next_button.mapToGlobal(tour.panel.next_button.rect().topLeft())

    tour.step_ready.connect(record)
    assert _wait_step(qtbot, ex, tour.start) == 1
    for n in range(2, len(STEPS) + 1):
        assert _wait_step(qtbot, ex, tour.panel.next_button.click) == n
    assert tour.panel.next_button.text() == "Finish"
    tour.step_ready.disconnect(record)
    assert len(set(places)) == 1, places  # the same spot at every step
    tour.panel.next_button.click()  # Finish: the bundled model is the last step's, nothing to reload
    qtbot.waitUntil(lambda: ex.state.selected_position == 2, timeout=TIMEOUT)
    assert not tour.active
    after = _snapshot(ex)
    assert after == before
    ex.window.show_view("training")
    qtbot.waitUntil(lambda: training.charts.loss.raw.getData()[0] is not None
                    and len(training.charts.loss.raw.getData()[0]) > 0, timeout=TIMEOUT)


def test_starting_the_tour_builds_no_view_it_does_not_show(qtbot, explorer):
    """Issue 23: the tour built four views at once to remember their pages, a GUI stall of
    seconds. A view the tour reaches later is remembered as it was when first reached, and
    Close gives back that page and those words."""
    ex = explorer
    _load(qtbot, ex, "default", "the cat sat on the mat")
    saved = ("lookup", "cost", "similarity", "projection")
    assert not any(ex.view_built(n) for n in saved)
    tour = ex.tour
    assert _wait_step(qtbot, ex, tour.start) == 1
    assert not any(ex.view_built(n) for n in saved)  # step 1 shows the matrix: nothing else is built
    assert _wait_step(qtbot, ex, lambda: tour.go(INDEX["why"])) == INDEX["why"] + 1
    cost = ex.view("cost")
    assert cost.current_page() == "why" and ex.view_built("cost") and not ex.view_built("lookup")
    assert _wait_step(qtbot, ex, lambda: tour.go(INDEX["projection"])) == INDEX["projection"] + 1
    analogy = ex.view("projection").analogy_panel
    qtbot.waitUntil(lambda: bool(analogy.answers()), timeout=TIMEOUT)  # the tour solved its analogy
    with qtbot.waitSignal(tour.restored, timeout=TIMEOUT):
        tour.close()
    assert cost.current_page() == "card"  # the page it showed when the tour built it: its first
    assert not analogy.answers()  # the tour's answers are not left behind as the user's
    assert not ex.view_built("lookup") and not ex.view_built("similarity")


def test_a_step_whose_model_cannot_be_opened_is_ready_with_a_note(qtbot, explorer, tmp_path):
    # it stays on screen saying so; --screenshot --tour N waited for step_ready forever
    ex = explorer
    _load(qtbot, ex, "toy:robot", "robot arm")
    missing = str(tmp_path / "missing-model")
    ex.tour.steps = (replace(STEPS[0], spec=missing),)
    assert _wait_step(qtbot, ex, lambda: ex.tour.start(1)) == 1
    assert ex.tour.panel.body.text() == f"{missing} could not be opened here; press Next to go on."
    assert ex.state.table.spec == "toy:robot"  # the model on screen stays
    for box in ex.window.findChildren(QMessageBox):  # the load's error box
        box.close()


def test_a_step_that_opens_a_model_tokenizes_its_text_once_with_that_model(qtbot, explorer):
    """The step's text goes to the loader with the step's model: it was set first and so
    tokenized and drawn with the model on its way out, work thrown away a moment later
    (a stall of the window at every step that opened a model)."""
    ex = explorer
    _load(qtbot, ex, "toy:robot", "robot arm tool")
    seen = []

    def record(tok) -> None:
        seen.append((ex.state.table.spec, tok.text))

    ex.state.tokens_changed.connect(record)
    step = STEPS[0]
    assert step.spec == "toy:cat-sat" and step.text
    assert _wait_step(qtbot, ex, ex.tour.start) == 1
    ex.state.tokens_changed.disconnect(record)
    assert ex.state.table.spec == step.spec and ex.state.text == step.text
    assert seen == [(step.spec, step.text)]  # never the step's text with toy:robot


def test_closing_the_tour_when_the_users_model_cannot_come_back_gives_their_text_back(qtbot, explorer, tmp_path):
    """The user's text now returns with their model: when that model fails to open (its file
    went away while the tour ran), the text still comes back, on the model the tour left."""
    ex = explorer
    folder = tmp_path / "mine"
    folder.mkdir()
    save_file({"embed.weight": torch.randn(40, 6, generator=torch.Generator().manual_seed(0))},
              str(folder / "model.safetensors"))
    _load(qtbot, ex, str(folder / "model.safetensors"), "")
    ex.state.set_text("3 1 4 1 5")  # a table with no tokenizer reads ids
    assert _wait_step(qtbot, ex, ex.tour.start) == 1
    assert ex.state.text == STEPS[0].text
    (folder / "model.safetensors").unlink()
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT) as blocker:
        ex.tour.close()
    assert blocker.args == [False]
    assert ex.state.table.spec == STEPS[0].spec and ex.state.text == "3 1 4 1 5"
    assert ex.window.token_strip.edit.text() == "3 1 4 1 5"
    for box in ex.window.findChildren(QMessageBox):  # the load's error box
        box.close()


def test_a_step_on_a_view_never_shown_builds_it_a_step_a_turn_then_arrives(qtbot, explorer):
    """The tour built a view never shown whole in its step's first turn (290-850 ms of one turn
    in a monkey walk). It takes one step of the build in that turn and the rest in the turns
    after; the step then arrives on the view, with its ring."""
    ex = explorer
    _load(qtbot, ex, "default", "the cat sat on the mat")
    tour = ex.tour
    assert _wait_step(qtbot, ex, tour.start) == 1
    assert STEPS[INDEX["projection"]].spec in (None, "default") and not ex.view_built("projection")
    with qtbot.waitSignal(tour.step_ready, timeout=TIMEOUT) as blocker:
        tour.go(INDEX["projection"])
        assert not ex.view_built("projection")  # a step of it in this turn, not the whole view
    assert blocker.args == [INDEX["projection"] + 1] and ex.view_built("projection")
    assert ex.window.tabs.currentWidget().isAncestorOf(ex.projection_view)
    assert tour.highlight.target is not None and ex.projection_view.isAncestorOf(tour.highlight.target)

    assert not ex.view_built("cost")  # Back while a view is being built: its build stops there
    tour.go(INDEX["why"])
    with qtbot.waitSignal(tour.step_ready, timeout=TIMEOUT) as blocker:
        tour.go(INDEX["projection"])
    qtbot.wait(50)
    assert blocker.args == [INDEX["projection"] + 1] and not ex.view_built("cost")


def test_a_step_arrives_after_its_models_first_paint_and_leaving_drops_the_rest(qtbot, explorer):
    """A step that opens a model shows its view, token and words in the turns after the
    model's installation (in one turn they stalled a real window 100-380 ms); Next or Close
    before the step has arrived drops what was still to come."""
    ex = explorer
    _load(qtbot, ex, "toy:robot", "robot arm")
    w = ex.window
    w.show_view("similarity")
    similarity = w.tabs.currentWidget()
    seen = []

    def on_load_finished(ok):
        seen.append((ok, w.tabs.currentWidget() is similarity, ex.tour.highlight.target is None))

    ex.load_finished.connect(on_load_finished)
    assert _wait_step(qtbot, ex, lambda: ex.tour.start(INDEX["backward"] + 1)) == INDEX["backward"] + 1
    ex.load_finished.disconnect(on_load_finished)
    assert seen == [(True, True, True)]  # the model came in alone: the old tab, no ring yet
    lookup = ex.lookup_view
    assert w.tabs.currentWidget().isAncestorOf(lookup) and ex.tour.highlight.target is lookup.backward

    # Close in the turn the step's model came in, before its view, token and words
    ex.tour.go(INDEX["backward"] - 1)  # the projection step opens "default"
    with qtbot.waitSignal(ex.load_finished, timeout=TIMEOUT):
        pass
    ex.tour.close()
    ready = []
    ex.tour.step_ready.connect(ready.append)
    qtbot.waitUntil(lambda: ex.state.table.spec == "toy:robot" and not ex.busy(), timeout=TIMEOUT)
    qtbot.wait(50)
    ex.tour.step_ready.disconnect(ready.append)
    assert ready == [] and not ex.tour.highlight.isVisible() and ex.tour.highlight.target is None
    assert w.tabs.currentWidget() is similarity


def test_close_gives_things_back_over_turns_and_a_restart_meanwhile_saves_them_whole(qtbot, explorer):
    """Issue 23: Close gave everything back in the click's turn (116-271 ms in a real window).
    The user's tab comes back in that turn; pages, words and token in the turns after, then
    ``restored``. A tour started again before then starts once the rest is back (not all of it
    given back in the click's turn), so what it saves (and its own Close returns) is the
    user's, not half the tour's."""
    ex = explorer
    _load(qtbot, ex, "default", "the cat sat on the mat")
    ex.state.select_position(2)
    ex.view("cost").show_page("compare")
    ex.window.show_view("health")
    before = _snapshot(ex)
    tour, w = ex.tour, ex.window
    assert _wait_step(qtbot, ex, lambda: tour.start(INDEX["why"] + 1)) == INDEX["why"] + 1
    cost = ex.view("cost")
    assert cost.current_page() == "why" and w.tabs.tabText(w.tabs.currentIndex()) != before["tab"]

    restored = []
    tour.restored.connect(lambda: restored.append(True))
    tour.close()
    assert w.tabs.tabText(w.tabs.currentIndex()) == before["tab"]  # the tab at once
    assert cost.current_page() == "why" and not restored  # the rest in the turns after
    tour.start()  # again, before the rest came back: it waits for it, not giving it all back now
    assert not restored and not tour.active and cost.current_page() == "why"
    assert _wait_step(qtbot, ex, lambda: None) == 1 and restored == [True]
    with qtbot.waitSignal(tour.restored, timeout=TIMEOUT):
        tour.close()
    qtbot.waitUntil(lambda: ex.state.selected_position == 2 and not ex.busy(), timeout=TIMEOUT)
    assert _snapshot(ex) == before


def test_a_restart_while_the_users_model_comes_back_saves_the_user_not_the_tour(qtbot, explorer):
    """A tour started again while Close is still giving things back, with the user's own model on
    its way back: the tour starts once that model is in and the user's token is back, and its
    own Close then returns the user's model, text, token and tab (not the tour's model, nor no
    token)."""
    ex = explorer
    _load(qtbot, ex, "default", "the cat sat on the mat")
    ex.state.select_position(2)
    ex.window.show_view("health")
    before = _snapshot(ex)
    tour = ex.tour
    assert STEPS[0].spec != "default"
    assert _wait_step(qtbot, ex, lambda: tour.start(1)) == 1
    assert ex.state.table.spec == STEPS[0].spec

    tour.close()  # the user's model starts loading in the turns after
    tour.start(1)
    assert not tour.active
    assert _wait_step(qtbot, ex, lambda: None) == 1 and ex.state.table.spec == STEPS[0].spec
    with qtbot.waitSignal(tour.restored, timeout=TIMEOUT):
        tour.close()
    qtbot.waitUntil(lambda: ex.state.table.spec == "default" and ex.state.selected_position == 2
                    and not ex.busy(), timeout=TIMEOUT)
    assert _snapshot(ex) == before
