"""Tooltips wrap at a readable width, whoever shows them (explorer.ui.common.tooltips)."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QPushButton, QToolTip, QVBoxLayout, QWidget

from explorer.app import make_app
from explorer.ui.common.tooltips import (
    TIP_LABEL_NAME,
    TIP_PADDING,
    ToolTipWrapping,
    install_tooltip_wrapping,
    readable_width,
)
from tests.support.ui_helpers import python_calls_during

# the offscreen platform cannot raise a window (the tooltip asks to be raised)
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support raise")

#: wider than a readable line, narrower than the (offscreen) screen: Qt 6 shows it as one line
MEDIUM = ("Tied: the output projection reuses E (the same tensor), so the softmax over all V logits gives every row "
          "a gradient.")
LONG = ("Per step, as % of V: rows of the input table with a non-zero gradient (= the distinct ids of the batch, "
        "untied); rows whose values changed (momentum and weight decay move rows without gradient); rows that "
        "had no gradient and changed only because of weight decay; tied: the shared table's whole gradient.")


def _tip_label() -> QLabel | None:
    for w in QApplication.topLevelWidgets():
        if w.objectName() == TIP_LABEL_NAME and w.isVisible():
            return w
    return None


def _shown_and_active(qtbot, widget) -> None:
    """Shown, and active: Qt hides a tooltip when its window is activated after it showed."""
    with qtbot.waitActive(widget):
        widget.show()
        widget.activateWindow()


def _ask_tooltip(qtbot, widget, at: QPoint | None = None) -> QLabel:
    at = QPoint(5, 5) if at is None else at
    QToolTip.hideText()
    qtbot.waitUntil(lambda: _tip_label() is None)
    QApplication.sendEvent(widget, QHelpEvent(QEvent.ToolTip, at, widget.mapToGlobal(at)))
    qtbot.waitUntil(lambda: _tip_label() is not None)
    qtbot.wait(1)  # the end of the turn that showed it, where the app finds a new tip label
    return _tip_label()


@pytest.fixture
def button(qtbot):
    make_app()
    b = QPushButton("hover me")
    qtbot.addWidget(b)
    _shown_and_active(qtbot, b)
    yield b
    QToolTip.hideText()


def _one_line_height(qtbot, button) -> int:
    button.setToolTip("Start a new run")
    return _ask_tooltip(qtbot, button).height()


def test_a_long_tooltip_wraps_at_a_readable_width(qtbot, button):
    app = QApplication.instance()
    assert install_tooltip_wrapping(app) is app.findChild(ToolTipWrapping)  # installed once, by make_app
    one_line = _one_line_height(qtbot, button)
    button.setToolTip(LONG)
    label = _ask_tooltip(qtbot, button)
    line = label.fontMetrics().lineSpacing()
    assert label.wordWrap()
    assert label.width() <= readable_width(label) < label.fontMetrics().horizontalAdvance(LONG)
    assert label.height() >= one_line + 2 * line  # the text is all there, over several lines
    assert label.heightForWidth(label.width()) <= label.height()
    button.setToolTip(MEDIUM)
    label = _ask_tooltip(qtbot, button)
    assert label.width() <= readable_width(label) and label.height() >= one_line + line


def test_a_short_tooltip_has_room_around_its_text(qtbot, button):
    """The padding the app's style sheet once gave tooltips, now the label's own margin: the text's
    line and the padding all round fit in the label Qt shows."""
    button.setToolTip("Start a new run")
    label = _ask_tooltip(qtbot, button)
    assert label.margin() >= TIP_PADDING
    text = label.fontMetrics().boundingRect("Start a new run")
    assert label.height() >= text.height() + 2 * TIP_PADDING
    assert label.width() >= label.fontMetrics().horizontalAdvance("Start a new run") + 2 * TIP_PADDING


def test_without_the_filter_a_tooltip_is_one_wide_line(qtbot, button):
    """What Qt does alone (so the wrapping above is the filter's): the label shown, its filter
    taken off, and a medium tip asked for while it shows (Qt sizes the same label again)."""
    one_line = _one_line_height(qtbot, button)
    label = _tip_label()
    label.removeEventFilter(QApplication.instance().findChild(ToolTipWrapping))
    button.setToolTip(MEDIUM)
    QApplication.sendEvent(button, QHelpEvent(QEvent.ToolTip, QPoint(6, 6), button.mapToGlobal(QPoint(6, 6))))
    qtbot.waitUntil(lambda: label.text() == MEDIUM)
    assert _tip_label() is label
    assert label.width() > readable_width(label) and label.height() == one_line


def test_a_tip_sized_again_while_it_shows_wraps_too(qtbot, button):
    _one_line_height(qtbot, button)
    label = _tip_label()
    button.setToolTip(MEDIUM)  # narrower than the screen: Qt alone would not wrap it
    QApplication.sendEvent(button, QHelpEvent(QEvent.ToolTip, QPoint(6, 6), button.mapToGlobal(QPoint(6, 6))))
    qtbot.waitUntil(lambda: label.text() == MEDIUM)
    assert _tip_label() is label and label.wordWrap() and label.width() <= readable_width(label)


def test_a_chart_items_tooltip_wraps_too(qtbot):
    make_app()
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    w.resize(400, 300)
    w.getPlotItem().setToolTip(MEDIUM)
    _shown_and_active(qtbot, w)
    label = _ask_tooltip(qtbot, w.viewport(), QPoint(200, 150))
    assert label.text() == MEDIUM and label.width() <= readable_width(label)
    QToolTip.hideText()


def test_building_a_view_leaves_the_filter_in(qtbot, explorer):
    explorer.window.show_view("similarity")  # built now, inside the pause
    assert explorer.view_built("similarity")
    b = QPushButton("hover me")
    qtbot.addWidget(b)
    _shown_and_active(qtbot, b)
    b.setToolTip(MEDIUM)
    label = _ask_tooltip(qtbot, b)
    assert label.wordWrap() and label.width() <= readable_width(label)
    QToolTip.hideText()


def test_qt_polishes_each_widget_without_calling_python(qtbot):
    """The application's style has no method in Python. Qt polishes each widget it shows (5,400
    times in building the views); a style method in Python took the GIL for each, a wait every
    time a worker ran Python. Here showing 300 new widgets calls into Python a few times (a Qt
    message to the log, the turn's watch), not once or more for each widget."""
    make_app()
    # a first window of the same kinds: what a process does once at its first show (the platform's
    # message about size hints, fonts) is not the polish of each widget this counts
    first = QWidget()
    qtbot.addWidget(first)
    first_layout = QVBoxLayout(first)
    for kind in (QLabel, QPushButton, QCheckBox):
        first_layout.addWidget(kind("first"))
    first.show()
    qtbot.waitExposed(first)
    parent = QWidget()
    qtbot.addWidget(parent)
    layout = QVBoxLayout(parent)
    for i in range(100):
        layout.addWidget(QLabel(f"label {i}"))
        layout.addWidget(QPushButton(f"button {i}"))
        layout.addWidget(QCheckBox(f"box {i}"))
    calls = python_calls_during(parent.show)
    assert all(w.testAttribute(Qt.WA_WState_Polished) for w in parent.findChildren(QWidget))
    assert len(calls) < 30, calls[:30]
