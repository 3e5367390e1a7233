"""A window of its own (the 3D view's OpenGL window) inside the widgets, without making them native.

``QWidget.createWindowContainer`` in a scroll area (every tab page is one, so that the window can
shrink below a view's minimum size) makes every widget up its parent chain a native window, and
their siblings too: 48 native windows after the first 3D toggle, for the rest of the process. Each
native widget's move or resize is then a round trip to the window system and each of them is painted
and flushed on its own: resizes of every view took half as long again after one toggle (longest pass
median 58 and 45 ms against 39 and 37 ms without, in a real window, four views, 12 resizes each).

:func:`embed_window` makes the container without native ancestors: the window is a child of the
top-level's native window, placed over its container by Qt. What the native chain was for, clipping
the window to what its scroll area shows, :class:`_ClipToContainer` does: the window is masked to the
part of its container that is not scrolled or cut away, again whenever Qt moves or resizes it (without
it, a 3D view scrolled up in a small window was drawn over the tab bar).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QRegion, QWindow
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

__all__ = ["embed_window"]

#: the mask of a window none of whose container is in view (an empty region would mean no mask at all)
_NOTHING = QRegion(-1, -1, 1, 1)


class _ClipToContainer(QObject):
    """Masks ``window`` to the visible part of ``container``, whenever Qt moves or resizes the window, or
    the viewport of a scroll area it is in (one that shrinks clips it where it stands)."""

    def __init__(self, window: QWindow, container: QWidget):
        super().__init__(container)
        self._window, self._container = window, container
        self._ancestors: list[QWidget] = []
        self._later = QTimer(self)  # once Qt has placed everything the change came with
        self._later.setSingleShot(True)
        self._later.setInterval(0)
        self._later.timeout.connect(self.clip)
        for changed in (window.xChanged, window.yChanged, window.widthChanged, window.heightChanged,
                        window.visibleChanged):
            changed.connect(self._soon)
        for changed in (window.widthChanged, window.heightChanged):
            changed.connect(self._repaint)
        container.installEventFilter(self)

    def _soon(self, *_) -> None:  # (the signals' values are not a timer's interval)
        self._later.start()

    def _repaint(self, *_) -> None:
        """A child window of the top-level that shrinks gets no paint asked by the window system (inside a
        native container it did): it kept its last frame, drawn for the old size, off centre."""
        update = getattr(self._window, "update", None)  # a paint device window's (an OpenGL window's)
        if update is not None:
            update()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind in (QEvent.Resize, QEvent.Move):
            self._soon()
        elif kind in (QEvent.Show, QEvent.ParentChange) and obj is self._container:
            self._watch_ancestors()
            self._soon()
        return False

    def _watch_ancestors(self) -> None:
        """Watch the viewports of the scroll areas the container is in: what can cut it where it stands
        (layouts give every other ancestor room for the container's minimum size)."""
        for widget in self._ancestors:
            if shiboken6.isValid(widget):
                widget.removeEventFilter(self)
        self._ancestors = []
        widget = self._container.parentWidget()
        while widget is not None and not widget.isWindow():
            parent = widget.parentWidget()
            if isinstance(parent, QAbstractScrollArea) and parent.viewport() is widget:
                widget.installEventFilter(self)
                self._ancestors.append(widget)
            widget = parent

    def clip(self) -> None:
        container, window = self._container, self._window
        if not container.isVisible():
            return
        shown = container.visibleRegion()
        if shown == QRegion(container.rect()):
            if not window.mask().isEmpty():
                window.setMask(QRegion())
        else:
            window.setMask(_NOTHING if shown.isEmpty() else shown)


def embed_window(window: QWindow, parent: QWidget) -> QWidget:
    """A container widget (child of ``parent``) holding ``window``, none of its ancestors made native,
    the window clipped to what the container shows."""
    container = QWidget.createWindowContainer(window, parent)
    container.setAttribute(Qt.WA_DontCreateNativeAncestors)
    _ClipToContainer(window, container)  # the container's child
    return container
