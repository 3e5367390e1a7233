"""The model picker against the cost card: both say which parameters they count."""

from __future__ import annotations

import pytest

from explorer.core.sources import list_sources, open_table
from explorer.ui.cost import CostView
from explorer.ui.model_picker import COLUMNS, PARAMS_COLUMN, ModelPicker
from tests.support.ui_helpers import standalone_view


@pytest.fixture
def cost_view(qtbot):
    yield from standalone_view(qtbot, CostView)


def test_picker_and_cost_card_label_which_parameters_they_count(qtbot, cost_view):
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_sources(list_sources([]))
    header = picker.tree.headerItem()
    assert header.text(PARAMS_COLUMN) == "Embedding parameters" == COLUMNS[PARAMS_COLUMN]
    tip = header.toolTip(PARAMS_COLUMN)
    assert "V × d" in tip and "not the whole model" in tip and "total" in tip
    assert all(header.toolTip(c) for c in range(len(COLUMNS)))  # every column says what it holds
    item = picker._items["default"]
    table = open_table("default")
    assert item.text(PARAMS_COLUMN) == f"{table.vocab_size * table.dim:,}"
    assert f"V × d = {table.vocab_size} × {table.dim}" in item.toolTip(PARAMS_COLUMN)
    # the bundled model has more than its embedding: the card names both counts
    assert table.model_params > table.vocab_size * table.dim
    v, state, _ = cost_view
    state.set_table(table)
    tiles = v.card_page.tiles
    assert tiles["params"].caption.text() == "Embedding parameters"
    assert tiles["params"].value.text() == item.text(PARAMS_COLUMN)
    assert f"{table.model_params:,} model parameters (total)" in tiles["share"].sub.text()
    assert "not counted" in tiles["params"].toolTip() and "total" in tiles["share"].toolTip()


def test_status_bar_names_the_embedding_parameters_and_the_models_total(qtbot, explorer):
    from tests.support.ui_helpers import load

    table = load(qtbot, explorer, "minilm")
    text = explorer.window.status_model.text()
    share = table.params / table.model_params
    assert f"{table.vocab_size * table.dim:,} embedding parameters" in text
    assert f"({share:.1%} of the model's {table.model_params:,} in total)" in text


def test_the_picker_marks_the_open_model_and_does_not_reload_it(qtbot, explorer):
    """Issue 25, item 8: the bundled model was always highlighted, and a double-click
    on the open model reloaded it and lost the selection."""
    from PySide6.QtCore import Qt

    from tests.support.ui_helpers import load

    load(qtbot, explorer, "toy:robot")
    explorer.state.select_position(1)
    chosen = []
    explorer.show_picker()
    picker = explorer.picker
    picker.spec_chosen.connect(chosen.append)
    qtbot.waitUntil(lambda: "toy:robot" in picker.specs(), timeout=30_000)
    item = picker.tree.currentItem()
    assert item.data(0, Qt.UserRole) == "toy:robot" and item.font(0).bold() and "(open)" in item.text(0)
    assert not picker._items["default"].font(0).bold()
    picker.tree.itemDoubleClicked.emit(item, 0)  # what a double-click emits
    assert chosen == [] and not picker.isVisible() and not explorer.loader.running
    assert explorer.state.table.spec == "toy:robot" and explorer.state.selected_position == 1
    # another model is still opened
    explorer.show_picker()
    qtbot.waitUntil(lambda: "toy:cat-sat" in picker.specs(), timeout=30_000)
    with qtbot.waitSignal(explorer.load_finished, timeout=30_000):
        picker.tree.itemDoubleClicked.emit(picker._items["toy:cat-sat"], 0)
    assert chosen == ["toy:cat-sat"] and explorer.state.table.spec == "toy:cat-sat"
    picker.spec_chosen.disconnect(chosen.append)


@pytest.fixture
def own_config(tmp_path, monkeypatch):
    """A config folder of the test's own, in place before the window reads its recent models:
    the session's folder holds what earlier tests opened (up to ten), and which tests ran
    before depends on how the suite is split over workers."""
    monkeypatch.setenv("EXPLORER_CONFIG_DIR", str(tmp_path))
    return tmp_path


def test_an_opened_model_heads_the_recent_menu_at_once_and_the_file_soon(qtbot, own_config, explorer, monkeypatch):
    """The Recent menu changes in the same turn; the file is written by a thread of its own (the
    window's thread once waited 0.55 s on it); the picker lists the window's recent models and
    those another process added to the file."""
    import json
    import threading

    from explorer.core.sources import recent
    from tests.support.ui_helpers import load

    tmp_path = own_config
    assert explorer.window.recent_menu.actions() == []  # nothing from earlier tests
    writers = []
    real_add = recent.add
    monkeypatch.setattr(recent, "add", lambda spec: writers.append(threading.current_thread()) or real_add(spec))
    load(qtbot, explorer, "random:20x3")
    assert explorer.window.recent_menu.actions()[0].text() == "random:20x3"
    path = tmp_path / "recent.json"
    qtbot.waitUntil(lambda: path.exists() and json.loads(path.read_text())[:1] == ["random:20x3"], timeout=5000)
    assert writers and threading.main_thread() not in writers
    real_add("random:40x5")  # the command line, or another window
    load(qtbot, explorer, "random:30x4")
    assert [a.text() for a in explorer.window.recent_menu.actions()][:2] == ["random:30x4", "random:20x3"]
    qtbot.waitUntil(lambda: json.loads(path.read_text())[:3] == ["random:30x4", "random:40x5", "random:20x3"],
                    timeout=5000)
    with qtbot.waitSignal(explorer.listing.succeeded, timeout=30_000):
        explorer.show_picker()
    listed = set(explorer.picker._items)
    assert {"random:20x3", "random:30x4", "random:40x5"} <= listed
    explorer.picker.reject()
