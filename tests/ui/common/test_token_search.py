"""The token search box shared by the Projection and Similarity views."""

from __future__ import annotations

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.ui.common.token_search import TokenSearch


def test_enter_finds_the_token_or_says_nothing_matched(qtbot):
    make_app()
    table = open_table("default")
    box = TokenSearch(lambda: table)
    qtbot.addWidget(box)
    box.setText("dog")
    with qtbot.waitSignal(box.token_found) as found:
        box.returnPressed.emit()
    assert found.args == [table.tokenizer.id_of("dog")] and box.text() == ""
    box.setText("zzqx<b>")
    with qtbot.waitSignal(box.not_found) as missing:
        box.returnPressed.emit()
    assert missing.args == ["No token “zzqx&lt;b&gt;” in this vocabulary"] and box.text() == "zzqx<b>"


def test_no_table_or_blank_query_does_nothing(qtbot):
    make_app()
    box = TokenSearch(lambda: None)
    qtbot.addWidget(box)
    with qtbot.assertNotEmitted(box.token_found), qtbot.assertNotEmitted(box.not_found):
        box.setText("dog")
        box.returnPressed.emit()
        box.setText("   ")
        box.returnPressed.emit()
