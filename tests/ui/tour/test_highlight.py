"""The tour's ring covers only a band along the ringed widget: it is drawn there in the
accent colour, follows the widget, and leaves the rest of the window to its own widgets
(a layer over the whole window made every move of the ring repaint all of it)."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

from explorer.ui.style import ACCENT
from explorer.ui.tour.highlight import RING_WIDTH, Highlight


def _window(qtbot):
    window = QWidget()
    window.setStyleSheet("background: white")
    window.resize(400, 300)
    target = QWidget(window)
    target.setGeometry(100, 80, 160, 120)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window, target


def _is_accent(c: QColor) -> bool:
    a = QColor(ACCENT)
    return abs(c.red() - a.red()) + abs(c.green() - a.green()) + abs(c.blue() - a.blue()) < 90


def test_the_ring_is_drawn_along_its_widget_and_covers_nothing_else(qtbot):
    window, target = _window(qtbot)
    ring = Highlight(window)
    ring.set_target(target)
    assert ring.isVisible()
    rect = ring.ring_rect()
    band = ring.band()
    centre = rect.center()
    assert not band.contains(centre) and not ring.mask().contains(centre)  # the widget's inside stays its own
    edge_points = [QPoint(rect.left() + RING_WIDTH, centre.y()), QPoint(rect.right() - RING_WIDTH, centre.y()),
                   QPoint(centre.x(), rect.top() + RING_WIDTH), QPoint(centre.x(), rect.bottom() - RING_WIDTH)]
    assert all(band.contains(p) for p in edge_points)
    assert not band.contains(QPoint(10, 10))  # nor the window away from the ring
    img = window.grab().toImage()
    # drawn: accent pixels across each side of the ring (within its stroke)
    for p in edge_points:
        near = [img.pixelColor(p + QPoint(dx, dy)) for dx in range(-3, 4) for dy in range(-3, 4)]
        assert any(_is_accent(c) for c in near), p
    assert not _is_accent(img.pixelColor(centre))

    target.move(20, 20)  # the ring follows its widget
    qtbot.waitUntil(lambda: ring.ring_rect().center() != centre)
    moved, new = ring.band(), ring.ring_rect()
    assert not moved.contains(edge_points[1])  # the old right side is left to the window
    new_left = QPoint(new.left() + RING_WIDTH, new.center().y())
    assert moved.contains(new_left) and ring.mask() == moved
    img = window.grab().toImage()
    assert any(_is_accent(img.pixelColor(new_left + QPoint(dx, 0))) for dx in range(-3, 4))
    assert not any(_is_accent(img.pixelColor(edge_points[1] + QPoint(dx, 0))) for dx in range(-3, 4))

    target.hide()
    qtbot.waitUntil(lambda: not ring.isVisible())
    assert ring.band().isEmpty()
