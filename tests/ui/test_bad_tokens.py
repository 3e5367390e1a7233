"""Issue 12, items 1 and 2 in the window: tokens that name no row keep their
chips and are explained; byte-level pieces are shown as what they stand for."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor

from explorer.core.sources import open_table
from explorer.core.tokens.pieces import PieceFamily, display_piece
from explorer.ui.inspector.view import RowInspector
from explorer.ui.style import ERROR
from explorer.ui.text.token_strip import TokenStrip
from tests.support.ui_helpers import LOAD_TIMEOUT, click_chip, load, standalone_view, wait_tokens

BAD_TEXT = "5 99 100 -1 abc"


@pytest.fixture
def strip_and_inspector(qtbot):
    """A token strip and an inspector on one state, wired as the app wires them."""
    gen = standalone_view(qtbot, TokenStrip, size=(900, 220))
    strip, state, _runner = next(gen)
    strip.token_clicked.connect(state.select_position)
    inspector = RowInspector(state)
    qtbot.addWidget(inspector)
    inspector.resize(400, 700)
    inspector.show()
    yield strip, inspector, state
    next(gen, None)


def test_ids_outside_the_table_keep_every_chip(qtbot, strip_and_inspector):
    strip, inspector, state = strip_and_inspector
    state.set_table(open_table("random:100x8"))
    state.set_text(BAD_TEXT)
    chips = strip.chips
    # every chip stays: the valid 5 and 99 are not lost
    assert [chips.label(i) for i in range(5)] == [
        ("5", "5"), ("99", "99"), ("100", "past row 99"), ("-1", "negative"), ("abc", "not a number")]
    assert [chips.flags(i)["out_of_range"] for i in range(5)] == [False, False, True, True, True]
    assert strip.scroll.isVisibleTo(strip) and strip.empty.isHidden()
    # counts are honest; one red line per kind of problem
    assert strip.summary.text() == "5 tokens (3 with no row) · 5 words · 2 distinct rows read"
    assert strip.error.text().split(" · ") == [
        "1 id is past the last row (99): '100'", "1 id is negative: '-1'", "1 word is not an id: 'abc'"]
    assert not strip.error.isHidden()
    # a bad chip is painted red
    img = chips.grab().toImage()
    r = chips.chip_rect(4).toRect()
    border = QColor(img.pixel(r.center().x(), r.top() + 1))
    assert border.red() > 150 and border.green() < 120 and QColor(ERROR).red() > 150
    # the first token that names a row is selected and shown
    assert state.selected_position == 0 and inspector.title.text() == "5"
    # clicking a bad chip explains it instead of "No token selected"
    for pos, why in ((2, "id 100 is past the last row"), (3, "'-1' is negative"), (4, "'abc' is not a token id")):
        click_chip(qtbot, strip, pos)
        assert state.selected_position == pos and state.selected_id == -1
        assert chips.flags(pos)["selected"]
        assert inspector.title.text() == BAD_TEXT.split()[pos]
        assert why in inspector.subtitle.text() and f"Token {pos + 1}" in inspector.subtitle.text()
        assert inspector.facts["id"].text() == "–" and inspector.neighbor_ids() == []
        assert why in chips.tooltip_for(pos)
    click_chip(qtbot, strip, 1)
    assert state.selected_id == 99 and inspector.title.text() == "99" and inspector.facts["id"].text() == "99"


def test_a_huge_word_gets_a_chip_of_bounded_size(qtbot, strip_and_inspector):
    strip, inspector, state = strip_and_inspector
    state.set_table(open_table("random:100x8"))
    wait_tokens(qtbot, state, "5 " + "9" * 5000 + " x" * 3000)  # tokenized in a worker
    chips = strip.chips
    label, reason = chips.label(1)
    assert reason == "too many digits" and len(label) == 40 and label.endswith("…")
    assert chips.chip_rect(1).width() < chips.width()
    assert len(chips.tooltip_for(1)) < 600
    state.select_position(1)
    assert len(inspector.title.text()) <= 24
    assert "has 5,000 digits, far past the last row" in inspector.subtitle.text()


def test_a_book_on_a_table_of_ids_is_summarised(qtbot, strip_and_inspector):
    strip, _inspector, state = strip_and_inspector
    state.set_table(open_table("random:100x8"))
    book = "It was the best of times, it was the worst of times; 42 " * 800
    tokens = wait_tokens(qtbot, state, book)
    assert len(tokens) > 5000
    (line,) = strip.error.text().split(" · ")
    assert line == f"{len(tokens) - 800:,} words are not ids: 'It', 'was', 'the', …"
    assert strip.summary.text().startswith(f"{len(tokens):,} tokens ({len(tokens) - 800:,} with no row)")
    assert "1 distinct rows read" in strip.summary.text()


@pytest.fixture(scope="module")
def mismatch_table(tmp_path_factory):
    """A small table (20 rows) beside a word-level tokenizer of 31 entries (w0 is id 0...)."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path_factory.mktemp("mismatch-ui")
    words = [f"w{i}" for i in range(30)] + ["<unk>"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    rows = np.random.default_rng(0).standard_normal((20, 6)).astype(np.float32)
    save_file({"model.embed_tokens.weight": rows}, str(folder / "model.safetensors"))
    table = open_table(str(folder))
    assert (table.vocab_size, table.tokenizer.vocab_size) == (20, 31)
    return table


def test_tokenizer_larger_than_the_table(qtbot, strip_and_inspector, mismatch_table):
    strip, inspector, state = strip_and_inspector
    state.set_table(mismatch_table)
    state.set_text("w3 w25 w7 w29")
    chips = strip.chips
    assert [chips.label(i) for i in range(4)] == [("w3", "3"), ("w25", "25: no row"), ("w7", "7"),
                                                  ("w29", "29: no row")]
    assert strip.summary.text() == "4 tokens (2 with no row) · 4 words · 2 distinct rows read"
    assert strip.error.text() == "2 tokens have ids past the table's last row (19): 'w25', 'w29'"
    click_chip(qtbot, strip, 1)
    assert state.selected_id == -1 and inspector.title.text() == "w25"
    assert "the tokenizer gave id 25 for 'w25' but the table has only 20 rows" in inspector.subtitle.text()


def test_selecting_a_bad_chip_in_every_view(qtbot, explorer):
    """No view may index the table with a token that names no row."""
    load(qtbot, explorer, "random:100x8")
    explorer.state.set_text(BAD_TEXT)
    win = explorer.window
    assert len(win.token_strip.chips.tokens()) == 5
    for name in win.view_names():
        assert win.show_view(name)
        for pos in (2, 3, 4, 0):
            explorer.state.select_position(pos)
            qtbot.waitUntil(lambda: not explorer.busy(), timeout=LOAD_TIMEOUT)
            win.grab()  # paint it: a crash in paint fails the test through pytest-qt
        explorer.state.select_position(2)
        if name == "lookup":
            empty = explorer.lookup_view.empty
            assert empty.isVisible() and "Token 3 has no row to look up: id 100 is past the last row" in empty.text()
    assert explorer.state.selected_id == -1
    assert explorer.window.inspector.facts["offset"].text() == "–"


SMOL_TEXT = "héllo 👋🏽 مرحبا"


def test_byte_level_pieces_are_shown_decoded(qtbot, strip_and_inspector):
    strip, inspector, state = strip_and_inspector
    table = open_table("smollm2")
    state.set_table(table)
    state.set_text(SMOL_TEXT)
    chips = strip.chips
    labels = [chips.label(i)[0] for i in range(len(chips.tokens()))]
    assert labels[:4] == ["h", "é", "llo", "␣<F0 9F>"]
    assert "ر" in labels and not any(c in "".join(labels) for c in "ÃðŁØ")
    # the raw piece stays in the tooltip
    tip = chips.tooltip_for(1)
    assert "stored as “Ã©”" in tip and "C3 A9" in tip
    assert "part of a character" in chips.tooltip_for(3)
    # the inspector: title, the pooled word, the neighbours
    click_chip(qtbot, strip, 1)
    assert inspector.title.text() == "é" and "Ã©" in inspector.title.toolTip()
    assert "(h + é + llo)" in inspector.pooled.text()
    qtbot.waitUntil(lambda: inspector.neighbors.rowCount() > 0, timeout=LOAD_TIMEOUT)
    for r, tid in enumerate(inspector.neighbor_ids()):
        assert inspector.neighbors.item(r, 0).text() == display_piece(table.piece(tid), PieceFamily.BYTE_LEVEL).text
        assert "Ã" not in inspector.neighbors.item(r, 0).text()


def test_byte_level_labels_in_matrix_lookup_and_projection(qtbot, explorer):
    table = load(qtbot, explorer, "smollm2")
    explorer.state.set_text(SMOL_TEXT)
    explorer.state.select_position(1)
    win = explorer.window
    assert win.matrix_view.band_label.textItem.toPlainText().strip() == "é"
    win.show_view("lookup")
    qtbot.waitUntil(lambda: explorer.lookup_view.onehot.isVisible(), timeout=LOAD_TIMEOUT)
    shown = [table.shown_piece(i).text for i in range(2700, 2800)]
    assert not any("Ã©" in s for s in shown)  # the search completions and every label read decoded
    assert "é" in table.completion_pieces() and "Ã©" not in table.completion_pieces()
    from explorer.core.tokens.words import find_token_ids

    assert find_token_ids(table, "é", limit=1) == [2756]
    assert find_token_ids(table, "␣bank", limit=1) == [table.tokenizer.id_of("Ġbank")]
