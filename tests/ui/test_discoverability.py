"""Issue 25, item 9: a first-run hint to the tour (once), and a saved theme in View → Theme."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from explorer.app import HINT_DELAY_MS, Explorer, make_app
from explorer.ui.style import apply_theme, is_dark
from tests.support.ui_helpers import load


def _explorer(qtbot, settings_file):
    make_app()
    ex = Explorer(settings=QSettings(settings_file, QSettings.IniFormat))
    qtbot.addWidget(ex.window)
    ex.window.resize(1024, 700)
    ex.window.show()
    return ex


def test_the_first_start_points_to_the_tour_once(qtbot, settings):
    ex = _explorer(qtbot, settings.fileName())
    assert not ex.hint.isVisible()
    load(qtbot, ex, "toy:robot")
    assert not ex.hint.isVisible()  # not in the turn that installs and draws the model
    qtbot.waitUntil(ex.hint.isVisible, timeout=HINT_DELAY_MS + 5000)
    assert "Help → Tour" in ex.hint.findChild(type(ex.window.model_label)).text()
    assert ex.hint.geometry().right() <= ex.window.width()
    # in the corner under the views: clear of the text box, its Examples button and the tabs
    strip, tabs = ex.window.token_strip, ex.window.tabs
    for widget in (strip, tabs.tabBar(), ex.window.statusBar()):
        place = widget.geometry().translated(widget.parentWidget().mapTo(ex.window, widget.pos()) - widget.pos())
        assert not ex.hint.geometry().intersects(place), widget
    with qtbot.waitSignal(ex.tour.step_ready, timeout=60_000):
        ex.hint.take_button.click()
    assert ex.tour.active and not ex.hint.isVisible()
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.tour.close()
    assert not ex.hint.isVisible()
    ex.shutdown()
    ex.window.close()
    again = _explorer(qtbot, settings.fileName())  # the next start: no hint
    load(qtbot, again, "toy:robot")
    qtbot.wait(2 * HINT_DELAY_MS)
    assert not again.hint.isVisible()
    again.shutdown()


def test_the_hint_does_not_come_over_a_tour_started_before_it(qtbot, settings):
    ex = _explorer(qtbot, settings.fileName())
    load(qtbot, ex, "toy:robot")
    with qtbot.waitSignal(ex.tour.step_ready, timeout=60_000):
        ex.tour.start()
    qtbot.wait(2 * HINT_DELAY_MS)
    assert ex.tour.active and not ex.hint.isVisible()
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.tour.close()
    assert not ex.hint.isVisible()
    ex.shutdown()


def test_the_theme_is_chosen_in_the_view_menu_and_saved(qtbot, settings, monkeypatch):
    monkeypatch.delenv("EXPLORER_THEME", raising=False)
    app = QApplication.instance() or make_app()
    light = app.palette().color(QPalette.Window)
    ex = _explorer(qtbot, settings.fileName())
    try:
        assert ex.window.theme_actions["system"].isChecked()
        ex.window.theme_actions["dark"].trigger()
        assert is_dark() and settings.fileName() and QSettings(settings.fileName(), QSettings.IniFormat).value(
            "theme") == "dark"
        ex.shutdown()
        ex.window.close()
        again = _explorer(qtbot, settings.fileName())  # restored at the next start, ticked in the menu
        assert is_dark() and again.window.theme_actions["dark"].isChecked()
        monkeypatch.setenv("EXPLORER_THEME", "light")  # the environment variable still wins
        again.window.theme_actions["dark"].trigger()
        assert not is_dark() and "EXPLORER_THEME" in again.window.statusBar().currentMessage()
        again.window.theme_actions["light"].trigger()
        assert app.palette().color(QPalette.Window) == light
        again.shutdown()
    finally:
        monkeypatch.delenv("EXPLORER_THEME", raising=False)
        apply_theme(app, "light")


def test_the_first_load_says_what_it_does_where_the_matrix_will_be(qtbot, settings):
    """Issue 25, item 11: at start-up a big table loaded for seconds behind "Open a model…"."""
    ex = _explorer(qtbot, settings.fileName())
    seen, empty = [], ex.window.matrix_view.empty

    def progressed(_fraction: float, message: str) -> None:
        seen.append((message, empty.text()))

    ex.loader.progressed.connect(progressed)
    with qtbot.waitSignal(ex.load_finished, timeout=60_000):
        ex.start(model="random:60000x64")
    ex.loader.progressed.disconnect(progressed)
    assert seen and all(text.startswith(message) and "Cancel" in text for message, text in seen)
    assert any("Drawing random" in message for message, _ in seen)
    assert ex.state.table is not None and "Open a model" not in ex.window.matrix_view.empty.text()
    ex.shutdown()


def test_a_theme_change_recolours_the_plots_already_drawn(qtbot, explorer, monkeypatch):
    """View → Theme recoloured the widgets at once but the plots only at the next start
    (the status bar said so): their backgrounds, axes and titles now follow at once."""
    from PySide6.QtGui import QColor

    from explorer.ui.style import GRADIENT_ROWS, axis_pen_color, blend, dark_palette

    monkeypatch.delenv("EXPLORER_THEME", raising=False)
    app = QApplication.instance()
    win = explorer.window
    load(qtbot, explorer, "toy:robot")
    win.show_view("projection")
    projection = explorer.projection_view.plot
    win.show_view("training")
    charts = explorer.training_view.charts
    light_base = app.palette().color(QPalette.Base)
    assert charts.backgroundBrush().color() == light_base

    def assert_drawn_in(base: QColor, text: QColor, dark: bool) -> None:
        for view in (charts, win.matrix_view.glw):
            assert view.backgroundBrush().color() == base, view
        for plot in (charts.loss.plot, win.matrix_view.overview_plot):
            axis = plot.getAxis("left")
            assert axis.pen().color() == axis_pen_color(text, dark), plot
            assert axis.textPen().color() == text
        assert QColor(charts.loss.plot.titleLabel.opts["color"]) == text
        # colours mixed with the background: the training raster's blank cells, the gradient band
        assert QColor(*charts.raster._lut[0]) == base
        assert charts.sparsity.grad.pen().color() == blend(GRADIENT_ROWS, base, 0.55)
        # the projection's own paints: label boxes and point outlines in the background colour
        assert projection.labels._fill.rgb() == base.rgb() and projection._mark_pen.color() == base

    try:
        win.theme_actions["dark"].trigger()
        dark = dark_palette()
        # the palette change reaches the window as a posted event
        qtbot.waitUntil(lambda: charts.backgroundBrush().color() == dark.color(QPalette.Base))
        assert_drawn_in(dark.color(QPalette.Base), dark.color(QPalette.Text), dark=True)
        assert "next start" not in win.statusBar().currentMessage()
        # a title set after the change is drawn in the new colour too
        charts.clear_run(tied=True)
        assert QColor(charts.sparsity.plot.titleLabel.opts["color"]) == dark.color(QPalette.Text)
        win.theme_actions["light"].trigger()
        qtbot.waitUntil(lambda: charts.backgroundBrush().color() == light_base)
        assert_drawn_in(light_base, app.palette().color(QPalette.Text), dark=False)
    finally:
        apply_theme(app, "light")
