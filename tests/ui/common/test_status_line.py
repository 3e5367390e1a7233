"""The status bar's description of the table leaves room for messages and
names tying as the cost card does."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMainWindow

from explorer.core.sources.output import tying_word
from explorer.ui.common.status_line import TableStatus
from tests.support.ui_helpers import load

LONG = ("V × d = 30,522 × 384  ·  float32  ·  11,720,448 embedding parameters (51.6% of the model's "
        "22,713,728 in total)  ·  46.88 MB (44.71 MiB)  ·  no output layer")


@pytest.fixture
def window(qtbot):
    win = QMainWindow()
    qtbot.addWidget(win)
    status = TableStatus(win.statusBar())
    status.setText(LONG)
    win.resize(1024, 700)
    win.show()
    qtbot.waitExposed(win)
    return win, status


@pytest.mark.parametrize("message", ["Opened in 4.13 s",
                                     "Cannot open /tmp/broken.safetensors: not a safetensors file"])
def test_a_message_is_not_painted_over_by_the_description(qtbot, window, message):
    win, status = window
    bar = win.statusBar()
    assert status.geometry().left() < status.fontMetrics().horizontalAdvance(message)  # crowded before
    bar.showMessage(message)
    need = status.fontMetrics().horizontalAdvance(message) + 6
    qtbot.waitUntil(lambda: status.geometry().left() >= need)
    assert status.isVisible() and status.width() >= 120
    assert LONG in status.toolTip()  # the whole description stays one hover away
    bar.clearMessage()
    qtbot.waitUntil(lambda: status.geometry().left() < need)  # the description takes its room back


def test_the_room_follows_the_window_width(qtbot, window):
    win, status = window
    message = "Loading cancelled; the current model stays."
    win.statusBar().showMessage(message)
    need = status.fontMetrics().horizontalAdvance(message) + 6
    win.resize(1400, 700)
    qtbot.waitUntil(lambda: status.geometry().left() >= need and status.width() > 500)
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: status.geometry().left() >= need and status.geometry().right() <= win.width())


def test_tying_words():
    assert tying_word(True, "safetensors") == "tied"
    assert tying_word(False, "default") == "not tied"
    assert tying_word(None, "safetensors") == "no output layer"
    assert tying_word(None, "random") == "tying unknown"
    assert tying_word(None, "toy") == "tying unknown"


@pytest.mark.parametrize("spec, word", [("random:200x8", "tying unknown"), ("minilm", "no output layer")])
def test_status_bar_and_cost_card_agree_on_tying(qtbot, explorer, spec, word):
    table = load(qtbot, explorer, spec)
    assert explorer.window.status_model.text().endswith(word)
    assert tying_word(table.tied, table.kind) == word
    explorer.window.show_view("cost")
    tile = explorer.cost_view.card_page.tiles["tying"]
    shown = {"tying unknown": "unknown"}.get(word, word)
    qtbot.waitUntil(lambda: tile.value.text() == shown)


def test_a_loads_shorter_messages_leave_the_bar_and_the_tables_line_where_they_are(qtbot, explorer):
    """The loading label only widens during a load: each shorter message moved the bar, its
    button and the table's line (elided again and repainted), 6-9 times a load."""
    win = explorer.window
    load(qtbot, explorer, "random:200x8")
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)

    def settled(fraction, message):
        win.set_progress(fraction, message)
        qtbot.wait(20)  # the status bar's layout request
        return win.progress.x(), win.status_model.geometry()

    x0, line = settled(0.1, "Reading 49,152 × 576 table…")
    assert settled(0.5, "Reading rows…") == (x0, line)
    x1, _ = settled(0.8, "Normalising rows for neighbour search, a longer message…")
    assert x1 > x0
    win.set_progress(None)
    assert settled(0.1, "Opening x…")[0] < x0  # a new load starts from its own message's width
    win.set_progress(None)
