"""Tooltips that wrap at a readable width, everywhere in the app.

Qt 6 wraps a plain-text tooltip only when it is wider than the screen: a
long explanation became one line about 1,500 pixels wide, cut at the
screen's edge. Every tooltip, whoever asked for it (a widget, a tab, a
table cell, a pyqtgraph item), is shown by the one label QToolTip keeps
(object name ``qtooltip_label``). The application's style,
:class:`TipLabelStyle`, sees each such label when Qt polishes it, at its
creation, and gives it the :class:`ToolTipWrapping` filter: whenever Qt
sizes the label wider than :func:`readable_width`, the filter turns word
wrap on, sizes it to its wrapped size hint and keeps it beside the cursor.

The filter sits on the tip label alone. It sat on the whole application
once: every event of every widget crossed into Python to be looked at,
and each crossing waited for the GIL while a job ran Python in a worker
(the window's stalls were found inside that filter, 180-790 samples of a
walk's 2,800).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel, QProxyStyle

__all__ = ["ToolTipWrapping", "TipLabelStyle", "install_tooltip_wrapping", "readable_width", "TIP_LABEL_NAME",
           "READABLE_CHARS"]

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
    """The event filter of the tooltip label that wraps it when over-wide (see the module)."""

    _TYPES = (QEvent.Resize, QEvent.Show)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._busy = False

    def eventFilter(self, obj, event) -> bool:
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


_KEPT: list[QProxyStyle] = []


class TipLabelStyle(QProxyStyle):
    """A style (Fusion, by default) that hands every tooltip label it polishes to ``wrapping``."""

    def __init__(self, wrapping: ToolTipWrapping, base: str = "Fusion"):
        super().__init__(base)
        self.wrapping = wrapping

    def polish(self, target):  # the QWidget overload is the one wanted; QPalette's and QApplication's pass
        if isinstance(target, QLabel) and target.windowType() == Qt.ToolTip:
            target.removeEventFilter(self.wrapping)  # polished again on a change of style: one filter
            target.installEventFilter(self.wrapping)
        return super().polish(target)


def install_tooltip_wrapping(app: QApplication, base: str = "Fusion") -> ToolTipWrapping:
    """Give ``app`` the ``base`` style that wraps tooltips, once (again: the wrapping already there)."""
    existing = app.findChild(ToolTipWrapping)
    if existing is not None:
        return existing
    wrapping = ToolTipWrapping(app)
    style = TipLabelStyle(wrapping, base)
    _KEPT.append(style)  # the application uses it for good: its Python half must live as long
    app.setStyle(style)
    return wrapping
