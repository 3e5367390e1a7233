"""A window embedded in the widgets (the 3D view's) makes none of them native, and is clipped to what
its scroll area shows."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QRasterWindow, QRegion, QWindow
from PySide6.QtWidgets import QLabel, QScrollArea, QTabWidget, QVBoxLayout, QWidget

from explorer.ui.common.embedded_window import embed_window
from tests.support.ui_helpers import settle_layout


def _page(qtbot, embed=embed_window):
    """A window with tabs whose page is a scroll area (as the app's), the embedded window in it below
    a tall label, and a sibling page."""
    top = QTabWidget()
    qtbot.addWidget(top)
    area = QScrollArea()
    area.setWidgetResizable(True)
    inner = QWidget()
    lay = QVBoxLayout(inner)
    lay.addWidget(QLabel("above\n" * 8))
    window = QWindow()
    container = embed(window, inner)
    container.setMinimumSize(300, 300)
    lay.addWidget(container)
    area.setWidget(inner)
    top.addTab(area, "page")
    top.addTab(QLabel("another page"), "other")
    top.resize(500, 800)
    top.show()
    qtbot.waitExposed(top)
    settle_layout()
    return top, area, container, window


@pytest.mark.parametrize("ours", [True, False])
def test_an_embedded_window_makes_no_widget_native(qtbot, ours):
    top, area, container, window = _page(qtbot, embed_window if ours else QWidget.createWindowContainer)
    assert window.isVisible() and window.parent() is not None  # embedded, shown
    natives = [type(w).__name__ for w in top.findChildren(QWidget) if w.internalWinId()]
    if ours:
        assert natives == []
    else:  # Qt's way in a scroll area: the container's whole chain, and their siblings
        assert {"QScrollArea", "QStackedWidget", "QLabel"} <= set(natives)


@pytest.mark.qt_log_ignore("This plugin does not support setting window masks")  # offscreen: kept, not drawn
def test_an_embedded_window_is_clipped_to_what_its_scroll_area_shows(qtbot):
    top, area, container, window = _page(qtbot)
    assert window.mask().isEmpty()  # all of it in view: no mask
    top.resize(500, 330)  # the page scrolls now; the container's lower part is out of view
    qtbot.waitUntil(lambda: not window.mask().isEmpty())
    shown = container.visibleRegion()
    assert shown != QRegion(container.rect()) and not shown.isEmpty()
    assert window.mask() == shown
    top.resize(500, 250)  # the page at its smallest already: the viewport shrinks over the container
    qtbot.waitUntil(lambda: window.mask() == container.visibleRegion())
    assert window.mask() != shown
    bar = area.verticalScrollBar()
    bar.setValue(bar.maximum())  # scrolled down: the upper part is cut away now
    qtbot.waitUntil(lambda: window.mask() == container.visibleRegion())
    assert window.mask().boundingRect().top() > 0
    top.resize(500, 800)  # room again: the whole window, unmasked
    qtbot.waitUntil(lambda: window.mask().isEmpty())


class _CountingWindow(QRasterWindow):
    def __init__(self):
        super().__init__()
        self.sizes = []  # the window's size at each of its paints

    def paintEvent(self, event):  # noqa: N802 (Qt's name)
        self.sizes.append((self.width(), self.height()))


def test_an_embedded_window_is_painted_again_after_it_shrinks(qtbot):
    """The window system asks no paint of a child window that shrinks: the embedded window kept its
    last frame, drawn for its old size (a 3D view off centre after the main window was made smaller).
    X11 (xcb) shows it; the offscreen platform paints every window it resizes anyway."""
    top = QWidget()
    qtbot.addWidget(top)
    window = _CountingWindow()
    QVBoxLayout(top).addWidget(embed_window(window, top))
    top.resize(600, 500)
    top.show()
    qtbot.waitExposed(top)
    qtbot.waitUntil(lambda: bool(window.sizes))
    settle_layout()
    for size in ((400, 300), (300, 200)):
        top.resize(*size)
        qtbot.waitUntil(lambda: window.sizes[-1] == (window.width(), window.height()))
        assert window.width() < size[0]  # it shrank with its container, and was painted at its new size
