"""Tooltips that wrap at a readable width, everywhere in the app.

Qt 6 wraps a plain-text tooltip only when it is wider than the screen: a
long explanation became one line about 1,500 pixels wide, cut at the
screen's edge. Every tooltip, whoever asked for it (a widget, a tab, a
table cell, a pyqtgraph item), is shown by the one label QToolTip keeps
(object name ``qtooltip_label``). :class:`ToolTipWrapping`, installed once
on the application, catches that label whenever Qt sizes it and, when it
came out wider than :func:`readable_width`, turns word wrap on, sizes it
to its wrapped size hint and keeps it beside the cursor on the screen.
Only the tip label's events reach past the first comparison (an event's
type is read only then: 1.5 µs per event instead of 2.6), but every event
of the application still crosses into Python to get there (about 20,000
while a view is built): :func:`tooltip_wrapping_paused` takes the filter
out while a view is built, when no tooltip can show.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QPoint
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel

__all__ = ["ToolTipWrapping", "install_tooltip_wrapping", "tooltip_wrapping_paused", "readable_width",
           "TIP_LABEL_NAME", "READABLE_CHARS"]

TIP_LABEL_NAME = "qtooltip_label"
#: a readable line: about this many average characters (Qt's own choice for wrapped labels is 80)
READABLE_CHARS = 80
#: where Qt puts a tooltip relative to the cursor (X11 and most styles)
_CURSOR_OFFSET = QPoint(2, 16)


def readable_width(label: QLabel) -> int:
    """The widest a tooltip should be, in pixels: READABLE_CHARS average characters of its font, plus margins."""
    m = label.contentsMargins()
    return label.fontMetrics().averageCharWidth() * READABLE_CHARS + m.left() + m.right() + 2 * label.margin() + 8


class ToolTipWrapping(QObject):
    """The application-wide event filter that wraps over-wide tooltips (see the module)."""

    _TYPES = (QEvent.Resize, QEvent.Show)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._busy = False

    def eventFilter(self, obj, event) -> bool:
        # the label first: reading an event's type makes a Python enum (about a microsecond),
        # and every event of the application passes here
        if not isinstance(obj, QLabel) or self._busy or obj.objectName() != TIP_LABEL_NAME:
            return False
        if event.type() not in self._TYPES:
            return False
        if obj.width() > readable_width(obj):
            self._busy = True
            try:
                self._wrap(obj)
            finally:
                self._busy = False
        return False

    @staticmethod
    def _wrap(label: QLabel) -> None:
        """Word wrap on, the wrapped size, beside the cursor and on the screen."""
        label.setWordWrap(True)
        size = label.sizeHint()
        width = min(size.width(), readable_width(label))
        label.resize(width, label.heightForWidth(width) if label.hasHeightForWidth() else size.height())
        cursor = QCursor.pos()
        screen = QGuiApplication.screenAt(cursor) or QGuiApplication.primaryScreen()
        pos = cursor + _CURSOR_OFFSET
        if screen is not None:
            area = screen.availableGeometry()
            if pos.x() + label.width() > area.right():
                pos.setX(max(area.left(), area.right() - label.width()))
            if pos.y() + label.height() > area.bottom():  # above the cursor instead
                pos.setY(max(area.top(), cursor.y() - label.height() - 4))
        label.move(pos)


def install_tooltip_wrapping(app: QApplication) -> ToolTipWrapping:
    """Install the filter on ``app`` once (again: the one already installed)."""
    existing = app.findChild(ToolTipWrapping)
    if existing is not None:
        return existing
    wrapping = ToolTipWrapping(app)
    app.installEventFilter(wrapping)
    return wrapping


@contextlib.contextmanager
def tooltip_wrapping_paused() -> Iterator[None]:
    """The application's :class:`ToolTipWrapping` filter taken out inside the
    block (no tooltip shows while the GUI thread builds a view) and put back
    after; nothing happens when none is installed."""
    app = QCoreApplication.instance()
    wrapping = app.findChild(ToolTipWrapping) if app is not None else None
    if wrapping is None:
        yield
        return
    app.removeEventFilter(wrapping)
    try:
        yield
    finally:
        app.installEventFilter(wrapping)
