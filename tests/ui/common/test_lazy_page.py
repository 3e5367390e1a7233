"""A tab page that builds its view when first shown (pytest-qt, offscreen): over turns, a
generator build one step a turn, at once for whoever needs the view now; what a half-made build
holds has a Qt parent, and a build left half done closes with its page."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from explorer.ui.common.lazy_page import LazyPage
from explorer.ui.common.prebuild import IDLE_S, IdleBuilder
from tests.support.clocks import SetClock as Clock
from tests.support.ui_helpers import click_then_timer, load


def _tab_of(qtbot, page: LazyPage):
    """A shown tab widget whose second tab is ``page``."""
    from PySide6.QtWidgets import QTabWidget

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("first"), "first")
    tabs.addTab(page, "lazy")
    tabs.show()
    qtbot.waitExposed(tabs)
    return tabs


def _lazy_tab(qtbot):
    """A shown tab widget whose second tab is a LazyPage: (tabs, page, the list of builds)."""
    made = []

    def make():
        made.append(len(made))
        return QLabel("the view")

    page = LazyPage(make)
    return _tab_of(qtbot, page), page, made


def test_a_tab_the_user_opens_is_built_over_three_turns(qtbot):
    """The click shows the tab saying its view is being built; the view is made in a later
    turn and goes on screen in the one after: never all in the click's turn (150-280 ms)."""
    tabs, page, made = _lazy_tab(qtbot)
    tabs.setCurrentIndex(1)  # what a click on the tab does
    assert not made and not page.built
    assert page.widget().text() == "Building this view…" and page.widget().isVisible()
    qtbot.waitUntil(lambda: page.built, timeout=5000)
    assert made == [0] and page.widget().text() == "the view" and page.widget().isVisible()
    assert page.view() is page.widget() and made == [0]  # built once


def _stepped_tab(qtbot, steps: int = 3):
    """Like _lazy_tab, with a build that yields ``steps`` times: (tabs, page, what each step
    made with the event loop's turn it ran in; a 0 ms timer counts the turns)."""
    from PySide6.QtCore import QTimer

    turn, made = [0], []

    def make_in_steps():
        for k in range(steps):
            made.append((f"step {k}", turn[0]))
            yield
        made.append(("view", turn[0]))
        return QLabel("the view")

    page = LazyPage(make_in_steps)
    tabs = _tab_of(qtbot, page)
    ticker = QTimer(tabs)
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)
    return tabs, page, made


def test_a_view_built_in_steps_takes_one_step_a_turn_or_all_when_needed_now(qtbot):
    """The Training view makes its six plots two a turn (TrainingView.built_in_steps)."""
    from PySide6.QtCore import QCoreApplication

    tabs, page, made = _stepped_tab(qtbot)
    tabs.setCurrentIndex(1)
    assert not made and page.widget().text() == "Building this view…"
    qtbot.waitUntil(lambda: page.built, timeout=5000)
    assert [what for what, _ in made] == ["step 0", "step 1", "step 2", "view"]
    turns = [t for _, t in made]
    assert turns == sorted(set(turns)), turns  # one step a turn
    assert page.widget().text() == "the view" and page.widget().isVisible()

    tabs, page, made = _stepped_tab(qtbot)
    tabs.setCurrentIndex(1)
    view = page.view()  # needed now (the tour, a lesson's link): every step at once
    assert [what for what, _ in made] == ["step 0", "step 1", "step 2", "view"] and page.built
    assert view.isVisible() and len({t for _, t in made}) == 1
    for _ in range(5):
        QCoreApplication.processEvents()  # the turns still scheduled find nothing left to do
    assert len(made) == 4 and page.widget() is view


def test_whoever_needs_the_view_gets_it_at_once_and_it_is_built_once(qtbot):
    tabs, page, made = _lazy_tab(qtbot)
    tabs.setCurrentIndex(1)
    view = page.view()  # between the turns: built and on the page now
    assert made == [0] and page.built and view.text() == "the view" and view.isVisible()
    qtbot.wait(50)  # the turns still scheduled find nothing left to do
    assert made == [0] and page.widget() is view


def test_a_view_shown_by_name_is_on_screen_at_once(qtbot, explorer):
    """The tour, --view and lessons' links ask for a view by name: no turn in between."""
    load(qtbot, explorer, "default")
    w = explorer.window
    assert not explorer.view_built("cost")
    assert w.show_view("cost")
    assert explorer.view_built("cost") and explorer.view("cost").isVisible()


def test_a_button_that_leads_to_a_view_never_built_brings_it_up_and_builds_it_over_turns(qtbot, explorer):
    """The Lookup's link to Training: the tab comes up in the click's turn, saying its view is
    being built, and the view is made in later turns, as after a click on the tab."""
    load(qtbot, explorer, "default")
    w = explorer.window
    lookup = explorer.view("lookup")
    assert not explorer.view_built("training")
    lookup.training_requested.emit()  # what its button does
    assert w.tabs.tabText(w.tabs.currentIndex()).lower() == "training"
    assert not explorer.view_built("training")
    assert w.tabs.currentWidget().widget().text() == "Building this view…"
    qtbot.waitUntil(lambda: explorer.view_built("training"), timeout=20_000)
    assert w.tabs.currentWidget().widget() is explorer.view("training")
    assert w.show_view("lookup", now=False) and w.tabs.currentWidget().widget() is lookup  # built: as before


def test_what_a_step_made_is_held_by_the_page_and_a_build_left_half_done_closes_with_it(qtbot):
    """Between turns a build's widgets have a Qt parent (the page), and the build is closed when
    the page goes: nothing of it is left for the collector to delete after Qt has gone (a half-made
    Cost view, its pages without a parent, crashed a test's teardown)."""
    import gc

    import shiboken6

    ended = []

    def make_in_steps():
        view = QLabel("the view")
        try:
            for _ in range(3):
                yield view
            return view
        finally:
            ended.append(view.text() if view is not None else None)

    tabs, page, _ = _stepped_tab(qtbot)  # a tab widget to hold the page
    page = LazyPage(make_in_steps)
    tabs.addTab(page, "stepped")
    assert not page.build_step()
    held = page.findChild(QLabel)
    assert held is not None and held.text() == "the view" and page.isAncestorOf(held)
    assert not held.isVisible() and not ended  # held, not shown until the view is done
    gc.disable()  # only the page's going may close the build
    try:
        page.deleteLater()
        qtbot.waitUntil(lambda: ended == ["the view"], timeout=2000)  # closed, not finished
        assert not shiboken6.isValid(held)  # deleted with the page, while Qt runs
    finally:
        gc.enable()


def _one_step_build():
    yield None
    return QLabel("the view, made in steps")


@pytest.mark.parametrize("build", [lambda: QLabel("the view"), _one_step_build], ids=["at once", "in steps"])
def test_a_view_made_but_not_yet_on_the_page_goes_with_the_page(qtbot, build):
    """The view made, it waits a turn before it goes on the page; a window closed in that turn takes
    it along while Qt runs (left to Python alone, a signal reached a half-destroyed Positions view at
    a test's teardown: "Slot 'PositionsView::' not found"). A view the page took stays."""
    import gc

    import shiboken6

    tabs, _page, _ = _lazy_tab(qtbot)
    page = LazyPage(build)
    tabs.addTab(page, "made")
    while not page.build_step():
        pass
    view = page._made
    assert isinstance(view, QLabel) and not view.isVisible()
    gc.disable()  # only the page's going may delete it
    try:
        page.deleteLater()
        qtbot.waitUntil(lambda: not shiboken6.isValid(view), timeout=2000)
    finally:
        gc.enable()
    # a view on its page is the page's, and goes with it as before
    page = LazyPage(build)
    tabs.addTab(page, "taken")
    taken = page.view()
    assert page.widget() is taken and shiboken6.isValid(taken)
    tabs.removeTab(tabs.indexOf(page))
    page.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(taken), timeout=2000)


def test_a_tab_opened_after_the_idle_builder_began_its_build_finishes_it(qtbot):
    """The idle builder took a step of a view made in steps; then the user opens the tab: the page
    says it is being built and goes on with the build over turns (it had waited for the next idle
    look, with the tab blank)."""
    tabs, page, made = _stepped_tab(qtbot)
    clock = Clock()
    b = IdleBuilder([page], clock=clock)
    b.start()
    clock.now += IDLE_S + 0.1
    assert b.poll() and [what for what, _ in made] == ["step 0"] and not page.built
    b.stop()  # the builder looks no more: only the page's own turns can finish it
    tabs.setCurrentIndex(1)
    assert page.widget().text() == "Building this view…"
    qtbot.waitUntil(lambda: page.built, timeout=5000)
    assert [what for what, _ in made] == ["step 0", "step 1", "step 2", "view"]
    assert page.widget().text() == "the view" and page.widget().isVisible()


def test_what_the_view_adopted_from_its_steps_is_shown_with_it(qtbot):
    """A step yields a panel for the page to hold; the view made last lays it out: once the view is
    on the page, the panel is on screen with it (held hidden itself, it stayed blank in the view)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    def make_in_steps():
        panel = QLabel("a panel")
        yield panel
        view = QWidget()
        QVBoxLayout(view).addWidget(panel)
        return view

    tabs, page, _ = _stepped_tab(qtbot)
    page = LazyPage(make_in_steps)
    tabs.addTab(page, "stepped")
    tabs.setCurrentWidget(page)
    assert page.widget().text() == "Building this view…"
    qtbot.waitUntil(lambda: page.built, timeout=5000)
    panel = page.widget().findChild(QLabel)
    assert panel.text() == "a panel"
    qtbot.waitUntil(panel.isVisible, timeout=2000)
    assert page.widget().isVisible()


def test_a_view_goes_on_the_page_in_one_turn_and_is_painted_in_a_later_one(qtbot):
    """A tab's first show: the view goes on the page (its first show: drawn from the state, laid
    out) in one turn and is painted in a later one, after which it paints as any widget. Both in
    one turn were the longest stall of a tab's first visit in a real window (84-93 ms for
    Similarity, Training and Lookup)."""
    from PySide6.QtCore import QTimer

    turn, seen = [0], []

    class Recording(QLabel):
        def showEvent(self, event):
            seen.append(("shown", turn[0]))
            super().showEvent(event)

        def paintEvent(self, event):
            seen.append(("painted", turn[0]))
            super().paintEvent(event)

    page = LazyPage(lambda: Recording("the view"))
    tabs = _tab_of(qtbot, page)
    ticker = QTimer(tabs)
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)
    tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: ("painted" in {what for what, _ in seen}), timeout=5000)
    shown = [t for what, t in seen if what == "shown"]
    painted = [t for what, t in seen if what == "painted"]
    assert shown and painted and painted[0] > shown[0], seen
    view = page.widget()
    assert isinstance(view, Recording) and view.updatesEnabled() and view.isVisible()
    seen.clear()
    view.setText("changed")
    qtbot.waitUntil(lambda: ("painted" in {what for what, _ in seen}), timeout=5000)  # paints as any widget


def test_a_step_of_a_first_show_whose_turn_comes_in_a_long_pass_waits_behind_the_windows_timers(
        qtbot, monkeypatch):
    """The tab is opened by a click that goes on working (30 ms): the build's first step, due during the
    click before a timer of the window, waits for the next pass instead of making one stall with the
    click; then the view goes on the page."""
    made = []

    def make(order):
        order.append("work")
        made.append(1)
        return QLabel("the view")

    holder = []
    tabs = _tab_of(qtbot, page := LazyPage(lambda: make(holder[0])))
    order = click_then_timer(qtbot, monkeypatch, lambda order: (holder.append(order), tabs.setCurrentIndex(1)))
    assert order == ["click", "tick", "work"] and made == [1]
    qtbot.waitUntil(lambda: page.built, timeout=5000)
    assert page.widget().text() == "the view"
