"""Guard against a binding bug: PySide6 6.12.0 decrements None's reference
count on each pyqtgraph paint, which aborts Python 3.11 after a while."""

import sys

import pytest

from explorer.app import Explorer, make_app


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
def test_painting_the_window_keeps_none_alive(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    make_app()
    ex = Explorer(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(ex.window)
    ex.window.show()
    with qtbot.waitSignal(ex.load_finished, timeout=60000):
        ex.open_spec("default")
    ex.window.grab()
    before = sys.getrefcount(None)
    for _ in range(30):
        ex.window.grab()
    after = sys.getrefcount(None)
    ex.shutdown()
    assert after - before > -30, f"None lost {before - after} references while painting"
