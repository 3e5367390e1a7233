"""Plots painted once when something changes, not twice.

pyqtgraph puts off a plot's auto-range and view transform until the plot paints
(``GraphicsScene.prepareForPaint``, from ``GraphicsView.paintEvent``). What they change
(the view's range, its axes, the curves clipped to it) marks the plot's items dirty
while it paints, and Qt paints the plot again in the next turn: every plot of a resized
window, of a tab coming up, of a new model was painted twice (the Positions tab: each
of its four plots twice per resize, 33 ms of plot painting where 21 do).

:class:`PaintOnce`, on a window, prepares every shown plot of that window just before
the window paints, and hands the plots' dirty regions to that paint: the preparation
in the paint finds nothing left to do.
"""

from __future__ import annotations

import weakref

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject

__all__ = ["install", "PaintOnce", "prepare_shown_plots"]

#: every pyqtgraph scene made since :func:`install`, while it lives
_SCENES: weakref.WeakSet = weakref.WeakSet()
_original_scene_init = pg.GraphicsScene.__init__
#: preparing a plot can queue its auto-range once more (its items' bounds follow the new
#: transform); a second pass finds the range unchanged
_PASSES = 2


def _scene_init(self, *args, **kwargs) -> None:
    _original_scene_init(self, *args, **kwargs)
    _SCENES.add(self)


def install() -> None:
    """Every ``pg.GraphicsScene`` made from now on is known to :func:`prepare_shown_plots`."""
    pg.GraphicsScene.__init__ = _scene_init


def prepare_shown_plots(window) -> int:
    """Run the paint preparation of every scene shown in ``window`` now, and mark what it
    changed for repainting in the paint to come. Returns the number of scenes prepared."""
    prepared = 0
    for scene in list(_SCENES):
        if not shiboken6.isValid(scene):
            _SCENES.discard(scene)
            continue
        views = scene.views()
        if not any(v.isVisible() and v.window() is window for v in views):
            continue
        for _ in range(_PASSES):
            scene.prepareForPaint()
        # the scene marks its views' regions from a queued call: in this paint, not the next
        QCoreApplication.sendPostedEvents(scene, QEvent.MetaCall)
        prepared += 1
    return prepared


class PaintOnce(QObject):
    """Installed on a top-level window: its plots are prepared before each of its paints."""

    def __init__(self, window):
        super().__init__(window)
        self._window = window
        self._preparing = False
        window.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        # not again inside a preparation: a synchronous repaint (QWidget.repaint, which the app
        # does not use; the benchmarks do) sends a request of its own for what the preparation dirtied
        if event.type() == QEvent.UpdateRequest and obj is self._window and not self._preparing:
            self._preparing = True
            try:
                prepare_shown_plots(self._window)
            finally:
                self._preparing = False
        return False
