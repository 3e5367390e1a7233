"""A real Explorer (state, window, workers) for each UI test."""

from __future__ import annotations

import gc

import pytest
from PySide6.QtCore import QSettings

from explorer.app import Explorer, make_app


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Remember whether the test itself failed (the leak check then stays quiet:
    the failure's traceback holds the test's widgets alive)."""
    report = yield
    if report.when == "call":
        item.test_failed = report.failed
    return report


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture
def explorer(qtbot, settings):
    make_app()
    ex = Explorer(settings=settings)
    # views built in idle moments would run in every test that waits (and slow the suite);
    # tests/ui/common/test_prebuild.py turns it on where it is the subject
    ex.build_when_idle = False
    qtbot.addWidget(ex.window)
    ex.window.resize(1280, 800)
    ex.window.show()
    yield ex
    ex.shutdown()


#: top-level widgets Qt itself keeps for the life of the application
_QT_OWN = ("QTipLabel", "QComboBoxPrivateContainer")


@pytest.fixture(autouse=True)
def _no_top_level_widget_leaks(request):
    """Every window or dialog a test opens is gone once the test is over
    (pytest-qt closes what was registered; nothing may be left behind)."""
    from PySide6.QtWidgets import QApplication

    make_app()
    before = {id(w) for w in QApplication.topLevelWidgets()}
    yield
    _check_no_top_level_widget_left(request, before)  # tests/conftest.py froze what came before the test


def _check_no_top_level_widget_left(request, before) -> None:
    from PySide6.QtCore import QCoreApplication, QEvent
    from PySide6.QtWidgets import QApplication

    # every other fixture is finalised by now; the test's own references to
    # them (pytest drops them only after teardown) must not keep widgets alive,
    # nor the references that kept qtbot's widgets alive until pytest-qt closed them
    request.node.funcargs.clear()
    getattr(request.node, "held_widgets", []).clear()

    def left_behind():
        return [w for w in QApplication.topLevelWidgets()
                if id(w) not in before and w.metaObject().className() not in _QT_OWN]

    for _ in range(3):  # deleteLater of windows, then of their children
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
        QApplication.processEvents()
        if not left_behind():
            return
        # pyqtgraph's items hold their context menus in reference cycles
        gc.collect()
    left = left_behind()
    if getattr(request.node, "test_failed", False):
        return
    assert not left, f"top-level widgets left behind: {[(type(w).__name__, w.windowTitle()) for w in left]}"


@pytest.fixture(autouse=True)
def _added_widgets_held(request, qtbot):
    """Every widget given to ``qtbot.addWidget`` stays alive until pytest-qt has closed it.

    qtbot keeps only a weak reference, and pytest-qt processes events once more after the test
    returns: a widget the test left shown, held by nothing but its own reference cycles, was
    collected by a collection that came in the middle of its first paint there (a segfault,
    "QPaintDevice: Cannot destroy paint device that is being painted"). The leak check lets go
    of them before it looks (pytest-qt has closed them by then).
    """
    held = request.node.held_widgets = []
    add = qtbot.addWidget

    def add_and_hold(widget, *args, **kwargs):
        held.append(widget)
        return add(widget, *args, **kwargs)

    qtbot.addWidget = add_and_hold
    yield
    held.clear()
