"""The Training view's first show, made over turns (TrainingView.built_in_steps for its tab's
LazyPage): its plots and charts a few a step, and a new palette between two steps."""

from __future__ import annotations

from PySide6.QtGui import QColor

from explorer.ui.style import plot_colors
from explorer.ui.training import TrainingView


def test_the_view_made_in_steps_is_the_view_with_its_plots_made_beforehand(qtbot):
    """The Training tab's first show makes the view over turns (LazyPage): the six plots
    two a step, then the charts' grid, held by the page, then its charts two a step, then the
    rest; the charts are laid out as when made at once."""
    from explorer.state.app_state import AppState
    from explorer.ui.training.charts import TrainingCharts

    names = ("loss", "sparsity", "raster", "updates", "drift", "pca")
    state = AppState()
    steps, n, grid, made = TrainingView.built_in_steps(state), 0, None, []
    while True:
        try:
            held = next(steps)
            n += 1
        except StopIteration as done:
            v = done.value
            break
        if isinstance(held, TrainingCharts):
            grid = held
        made.append(sum(hasattr(grid, name) for name in names) if grid is not None else 0)
    qtbot.addWidget(v)
    assert n >= 7  # three steps of two plots, the grid, two steps of its charts, then the rest
    assert v.charts is grid and made[-1] == 6  # the grid held by the page is the view's
    assert all(0 <= b - a <= 2 for a, b in zip(made, made[1:], strict=False)), made  # two charts a step at most
    assert not v.charts._plots  # every plot made beforehand went to a chart
    plots = [c.plot for c in v.charts.charts]
    assert len({id(p) for p in plots}) == 6
    for k, plot in enumerate(plots):
        assert v.charts.ci.getItem(k // 2, k % 2) is plot
        assert plot.getViewBox().menu is None and plot.titleLabel.text
    v.resize(1000, 700)
    v.show()
    assert "Start" in v.caption.text() and v.buttons.start_button.isEnabled()
    # closed here: qtbot keeps only a weak reference, and a view left shown with nothing but its
    # own reference cycles holding it was collected in the middle of its first paint (a crash)
    v.close()
    state.deleteLater()


def test_a_new_palette_between_the_steps_of_the_charts_reaches_every_chart(qtbot):
    """View → Theme while the Training tab is being built: the window recolours every plot it
    finds, the half-made grid among them, and the charts made after it take the new palette."""
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from explorer.state.app_state import AppState
    from explorer.ui.common.recolour import recolour_plots
    from explorer.ui.style import apply_theme, dark_palette
    from explorer.ui.training.charts import TrainingCharts

    app = QApplication.instance()
    state = AppState()
    steps, grid, v = TrainingView.built_in_steps(state), None, None
    try:
        while grid is None or not hasattr(grid, "sparsity"):  # two charts made of six
            held = next(steps)
            grid = held if isinstance(held, TrainingCharts) else grid
        assert not hasattr(grid, "raster")
        old = plot_colors()
        apply_theme(app, "dark")
        recolour_plots(old, plot_colors())  # what the window does on the palette change
        while v is None:
            try:
                next(steps)
            except StopIteration as done:
                v = done.value
        qtbot.addWidget(v)
        text = dark_palette().color(QPalette.Text)
        assert [QColor(c.plot.titleLabel.opts["color"]) for c in v.charts.charts] == [text] * 6
        assert v.charts.backgroundBrush().color() == dark_palette().color(QPalette.Base)
    finally:
        if v is not None:
            v.close()  # (see the test above: qtbot keeps only a weak reference)
        apply_theme(app, "light")
        state.deleteLater()
