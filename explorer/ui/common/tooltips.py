"""Tooltips that wrap at a readable width, everywhere in the app.

Qt 6 wraps a plain-text tooltip only when it is wider than the screen: a
long explanation became one line about 1,500 pixels wide, cut at the
screen's edge. Every tooltip, whoever asked for it (a widget, a tab, a
table cell, a pyqtgraph item), is shown by the one label QToolTip keeps
(object name ``qtooltip_label``). :class:`ToolTipWrapping` finds a new
label at the end of the turn that showed it (:meth:`ToolTipWrapping.catch`,
called when the window's event loop is about to sleep) and gives it its
event filter: whenever Qt sizes the label wider than :func:`readable_width`,
the filter turns word wrap on, sizes it to its wrapped size hint and keeps
it beside the cursor.

How the label is found costs the window nothing between tooltips:

- The filter sits on the tip label alone. It sat on the whole application
  once: every event of every widget crossed into Python to be looked at,
  and each crossing waited for the GIL while a job ran Python in a worker
  (the window's stalls were found inside that filter, 180-790 samples of a
  walk's 2,800).
- The application's style is Qt's own Fusion, with no method in Python. A
  Python style that looked at each widget as Qt polished it (to catch the
  label at its creation) was called 5,400 times in building the views, each
  call a wait for the GIL while a worker ran Python: building Similarity,
  Cost or Health beside such a worker took 1.6-1.8 times as long.
- :meth:`~ToolTipWrapping.catch` asks Qt whether a tooltip shows (one call
  into C++) and looks for the label only when one shows that it has not
  seen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel, QToolTip

__all__ = ["ToolTipWrapping", "install_tooltip_wrapping", "readable_width", "TIP_LABEL_NAME", "READABLE_CHARS"]

TIP_LABEL_NAME = "qtooltip_label"
#: a readable line: about this many average characters (Qt's own choice for wrapped labels is 80)
READABLE_CHARS = 80
#: pixels added around a tooltip's text, all round (Fusion's own margin is tight)
TIP_PADDING = 3
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
        self._label: QLabel | None = None  # the tip label that has the filter, until Qt deletes it

    def catch(self) -> None:
        """Give a tip label shown since the last call the filter, and wrap it if it is too wide.

        Called at the end of each turn of the window's event loop: the label Qt makes for a
        tooltip (and deletes once it is hidden) is shown in a turn, before its first paint.
        """
        if self._label is not None or not QToolTip.isVisible():
            return
        label = next((w for w in QApplication.topLevelWidgets()
                      if w.objectName() == TIP_LABEL_NAME and isinstance(w, QLabel) and w.isVisible()), None)
        if label is None:
            return
        self._label = label
        label.setMargin(label.margin() + TIP_PADDING)  # the label is Qt's, made before this turn's end:
        label.resize(label.sizeHint())  # not painted yet
        label.destroyed.connect(self._forget)
        label.installEventFilter(self)
        self._wrap_if_wide(label)

    def _forget(self, _obj=None) -> None:
        self._label = None

    def eventFilter(self, obj, event) -> bool:
        if not isinstance(obj, QLabel) or obj.objectName() != TIP_LABEL_NAME:
            return False
        if event.type() in self._TYPES:
            self._wrap_if_wide(obj)
        return False

    def _wrap_if_wide(self, label: QLabel) -> None:
        if self._busy or label.width() <= readable_width(label):
            return
        self._busy = True  # the wrapping resizes the label: that event is its own
        try:
            self._wrap(label)
        finally:
            self._busy = False

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


def install_tooltip_wrapping(app: QApplication, base: str = "Fusion") -> ToolTipWrapping:
    """Give ``app`` the ``base`` style and the wrapping of tooltips, once (again: the wrapping
    already there). Its :meth:`~ToolTipWrapping.catch` is to be called at the end of each turn."""
    existing = app.findChild(ToolTipWrapping)
    if existing is not None:
        return existing
    app.setStyle(base)
    return ToolTipWrapping(app)
