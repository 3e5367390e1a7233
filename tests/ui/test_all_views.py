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
