"""The text box cuts a paste to the room left before Qt sees it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt
from PySide6.QtGui import QDropEvent, QGuiApplication

from explorer.app import make_app
from explorer.ui.text.text_box import TextBox

BOOK = "It was the best of times, it was the worst of times. " * 20_000  # about 1 MB


@pytest.fixture
def box(qtbot):
    make_app()
    b = TextBox()
    b.setMaxLength(500)
    qtbot.addWidget(b)
    b.show()
    return b


def test_paste_keeps_the_first_characters_up_to_the_limit(box):
    QGuiApplication.clipboard().setText(BOOK)
    box.paste()
    assert box.text() == BOOK[:500]


def test_paste_replaces_the_selection_and_fills_only_the_room_left(box):
    box.setText("abc def")
    box.setSelection(4, 3)  # "def"
    QGuiApplication.clipboard().setText(BOOK)
    box.paste()
    assert box.text() == "abc " + BOOK[:496]
    box.setText("x" * 500)
    box.end(False)
    box.paste()  # no room: nothing changes
    assert box.text() == "x" * 500


def test_ctrl_v_goes_through_the_cut_paste(qtbot, box):
    box.setText("start ")
    box.end(False)
    QGuiApplication.clipboard().setText("a\nb " * 1000)
    qtbot.keyClick(box, Qt.Key_V, Qt.ControlModifier)
    assert box.text() == ("start " + "a\nb " * 1000)[:500]


def test_read_only_box_takes_no_paste(box):
    box.setReadOnly(True)
    QGuiApplication.clipboard().setText("hello")
    box.paste()
    assert box.text() == ""


def test_dropped_book_is_cut(box):
    mime = QMimeData()
    mime.setText(BOOK)
    event = QDropEvent(QPointF(5, 5), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    box.dropEvent(event)
    assert box.text() == BOOK[:500]


EMOJI = "naïve 日本語 " + "😀" * 2_000  # outside the first plane: two UTF-16 units each


def test_a_long_paste_is_written_whole_cut_between_characters_and_undone_in_one_step(qtbot, box):
    """Issue 23: QLineEdit.insert of 50,000 mixed-script characters stalled a real window
    110-190 ms (one undo step per character, and a cost per emoji); the box writes a long
    paste with setText. The cut counts as Qt counts (UTF-16 units) and never leaves half an
    emoji; the user's edit is announced as insert's is; Ctrl+Z gives back the text before,
    Ctrl+Shift+Z the paste again."""
    box.setMaxLength(3_005)  # "abc naïve 日本語 " and 1,495 emoji are 3,004 units: the next is cut in two
    box.setText("abc def")
    box.setSelection(4, 3)  # "def"
    edited = []
    box.textEdited.connect(edited.append)
    QGuiApplication.clipboard().setText(EMOJI)
    qtbot.keyClick(box, Qt.Key_V, Qt.ControlModifier)
    text = box.text()
    assert text == "abc naïve 日本語 " + "😀" * 1_495
    assert edited == [text] and box.cursorPosition() == 3_004
    qtbot.keyClick(box, Qt.Key_Z, Qt.ControlModifier)
    assert box.text() == "abc def" and edited[-1] == "abc def"
    qtbot.keyClick(box, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert box.text() == text and edited[-1] == text and box.cursorPosition() == 3_004


def test_a_short_paste_keeps_qts_own_undo(qtbot, box):
    box.setText("abc")
    box.end(False)
    QGuiApplication.clipboard().setText(" 😀 def")
    box.paste()
    assert box.text() == "abc 😀 def"
    qtbot.keyClick(box, Qt.Key_Z, Qt.ControlModifier)
    assert box.text() == "abc"


def test_a_box_filled_with_emoji_says_a_longer_text_is_cut(qtbot, explorer):
    """Qt counts an emoji as two characters: a pasted book of emoji fills the 50,000-character
    box with 25,000 of them, and the strip says the text was cut, as it does for plain text."""
    from explorer.core.tokens.tokenize import MAX_TEXT_CHARS
    from tests.support.ui_helpers import load

    load(qtbot, explorer, "toy:robot")
    strip = explorer.window.token_strip
    QGuiApplication.clipboard().setText("😀" * MAX_TEXT_CHARS)
    strip.edit.setFocus()
    strip.edit.selectAll()
    qtbot.keyClick(strip.edit, Qt.Key_V, Qt.ControlModifier)
    qtbot.waitUntil(lambda: explorer.state.text == "😀" * (MAX_TEXT_CHARS // 2) and not explorer.state.tokenizing,
                    timeout=60_000)
    assert strip.edit.text() == explorer.state.text
    qtbot.waitUntil(lambda: "a longer text is cut there" in strip.summary.text(), timeout=10_000)
