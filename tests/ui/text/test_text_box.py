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
