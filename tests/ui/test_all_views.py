"""Every view on every kind of small table, and model switches while views work."""

from __future__ import annotations

import pytest

from tests.support.ui_helpers import LOAD_TIMEOUT, load


@pytest.mark.parametrize("spec", ["toy:robot", "toy:five-rows", "toy:gradient", "random:300x5", "default"])
def test_every_tab_draws_every_small_table(qtbot, explorer, spec):
    table = load(qtbot, explorer, spec)
    explorer.state.set_text(table.example_text)
    win = explorer.window
    for name in win.view_names():
        assert win.show_view(name)
        qtbot.waitUntil(lambda: not explorer.busy(), timeout=LOAD_TIMEOUT)
        explorer.state.step_selection(+1)
        win.grab()  # paint it: a crash in paint fails the test through pytest-qt
    assert explorer.state.table is table


def test_no_plot_builds_a_context_menu(qtbot, explorer, monkeypatch):
    """No view offers pyqtgraph's right-click menus (their FFT, log and export
    options are not this app's), so none may pay for building one: about
    5 ms a plot on the GUI thread, 11 plots in the Positions view alone.
    The real menu class, counted where the ViewBox makes it."""
    import importlib

    import pyqtgraph as pg
    viewbox_module = importlib.import_module("pyqtgraph.graphicsItems.ViewBox.ViewBox")

    built = []
    real = viewbox_module.ViewBoxMenu

    def counted(view):
        import traceback

        if isinstance(view.parentItem(), pg.ColorBarItem):  # pyqtgraph builds it inside; no way to say no
            return real(view)
        ours = [f"{f.filename.split('explorer/')[-1]}:{f.lineno}" for f in traceback.extract_stack()
                if "/explorer/" in f.filename and "/tests/" not in f.filename]
        built.append(ours[-1] if ours else type(view).__name__)
        return real(view)

    monkeypatch.setattr(viewbox_module, "ViewBoxMenu", counted)
    load(qtbot, explorer, "default")
    win = explorer.window
    for name in win.view_names():
        win.show_view(name)
    boxes = [i for v in win.findChildren(pg.GraphicsView) for i in v.items() if isinstance(i, pg.ViewBox)]
    assert len(boxes) > 20  # every view's plots are there
    assert not any(b.menu for b in boxes)
    assert built == [], "\n".join(built)


def test_switching_model_while_training_and_projecting(qtbot, explorer):
    load(qtbot, explorer, "default")
    win = explorer.window
    win.show_view("training")
    explorer.training_view.set_config(steps=100000)
    explorer.training_view.start()
    qtbot.waitUntil(lambda: explorer.training_view.history is not None and explorer.training_view.history.n > 5,
                    timeout=LOAD_TIMEOUT)
    win.show_view("projection")
    load(qtbot, explorer, "toy:cat-sat")
    assert explorer.state.table.spec == "toy:cat-sat"
    load(qtbot, explorer, "random:2000x16")
    qtbot.waitUntil(lambda: explorer.projection_view.result is not None, timeout=LOAD_TIMEOUT)
    explorer.window.close()
    assert not explorer.busy()
