"""Plots already drawn take a new palette at once (View → Theme, or the system's
scheme changing), instead of at the next start.

Every plot took its background and foreground from :func:`plot_colors` when it
was built. On a palette change the window calls :func:`recolour_plots` with
the old and the new pair: whatever is still painted in the old background or
foreground (view backgrounds, axes, tick text, titles, text items, lines) is
painted in the new one. Colours that mean something (the accent, class
colours, colour maps) are the same on both themes and stay. An item that
paints with colours of its own (or a view keeping some for later) has a
``recolour(swapped)`` method: ``swapped(color)`` gives a colour's new one
(keeping its opacity), or None if it stays.
"""

from __future__ import annotations

import re

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QAbstractGraphicsShapeItem, QApplication, QGraphicsSimpleTextItem

from explorer.ui.style import axis_pen_color

__all__ = ["recolour_plots"]


def _same(a: QColor, b: QColor) -> bool:
    """The same colour, whatever the opacity (translucent fills are the background too)."""
    return a.rgb() & 0xFFFFFF == b.rgb() & 0xFFFFFF


def _with_color(pen: QPen, color: QColor) -> QPen:
    pen = QPen(pen)
    pen.setColor(color)
    return pen


class _Swaps:
    """The new colour of an old one, by what it paints: text only in the foreground
    (a white value on a dark cell is white on either theme), fills only in the
    background, lines in either or in the axis colour. Opacity is kept."""

    def __init__(self, old: tuple[str, str], new: tuple[str, str]):
        old_bg, old_fg, new_bg, new_fg = (QColor(c) for c in (*old, *new))
        axis = (axis_pen_color(old_fg, dark=old_bg.lightness() < 128),
                axis_pen_color(new_fg, dark=new_bg.lightness() < 128))
        self.old_bg, self.new_bg, self.old_fg, self.new_fg = old_bg, new_bg, old_fg, new_fg
        self._text, self._fill = [(old_fg, new_fg)], [(old_bg, new_bg)]
        self._line = [(old_fg, new_fg), (old_bg, new_bg), axis]
        # an axis's line: its colour first (on a light theme it can be the foreground: black, lighter, is black)
        self._axis = [axis, *self._line]

    @staticmethod
    def _find(color: QColor, pairs) -> QColor | None:
        to = next((QColor(to) for was, to in pairs if _same(color, was)), None)
        if to is not None:
            to.setAlpha(color.alpha())  # a translucent fill stays as translucent
        return to

    def text(self, color: QColor) -> QColor | None:
        return self._find(color, self._text)

    def fill(self, color: QColor) -> QColor | None:
        return self._find(color, self._fill)

    def line(self, color: QColor) -> QColor | None:
        return self._find(color, self._line)

    def axis(self, color: QColor) -> QColor | None:
        return self._find(color, self._axis)

    __call__ = line  # for the recolour hooks: any of them


def _recolour_label(item: pg.LabelItem, swaps: _Swaps) -> None:
    """The label's colour, and the old foreground written in its HTML (a legend's spans)."""
    color = item.opts.get("color")
    to = swaps.text(pg.mkColor(color)) if color is not None else None
    text = item.text if isinstance(item.text, str) else ""
    old_fg = swaps.old_fg.name()
    spans = old_fg in text.lower()
    if spans:
        text = re.sub(re.escape(old_fg), swaps.new_fg.name(), text, flags=re.IGNORECASE)
    if to is not None:
        item.setText(text, color=to.name())
    elif spans:
        item.setText(text)


def _recolour_item(item, swaps: _Swaps) -> None:
    if callable(hook := getattr(item, "recolour", None)):  # an item that paints colours of its own
        hook(swaps)
    elif isinstance(item, pg.AxisItem):
        # as style_plot sets them: the text pen first (it colours the label too), then the line
        if (to := swaps.text(item.textPen().color())) is not None:
            item.setTextPen(to)
        if (to := swaps.axis(item.pen().color())) is not None:
            item.setPen(pg.mkPen(to))
    elif isinstance(item, pg.LabelItem):
        _recolour_label(item, swaps)
    elif isinstance(item, pg.TextItem):
        if (to := swaps.text(item.color)) is not None:
            item.setColor(to)
        if item.fill.style() != Qt.NoBrush and (to := swaps.fill(item.fill.color())) is not None:
            item.fill = pg.mkBrush(to)
            item.update()
    elif isinstance(item, pg.PlotCurveItem):
        pen = item.opts.get("pen")
        if isinstance(pen, QPen) and (to := swaps.line(pen.color())) is not None:
            item.setPen(_with_color(pen, to))
    elif isinstance(item, QGraphicsSimpleTextItem):  # its brush is the text's colour
        if (to := swaps.text(item.brush().color())) is not None:
            item.setBrush(to)
    elif isinstance(item, QAbstractGraphicsShapeItem):  # Qt's own lines and boxes
        if item.pen().style() != Qt.NoPen and (to := swaps.line(item.pen().color())) is not None:
            item.setPen(_with_color(item.pen(), to))
        brush = item.brush()
        if brush.style() != Qt.NoBrush and (to := swaps.fill(brush.color())) is not None:
            brush.setColor(to)
            item.setBrush(brush)


def recolour_plots(old: tuple[str, str], new: tuple[str, str]) -> int:
    """Repaint every pyqtgraph view of the application drawn in ``old``
    (background, foreground) in ``new``; returns how many views there were."""
    swaps = _Swaps(old, new)
    views = [w for w in QApplication.allWidgets() if isinstance(w, pg.GraphicsView)]
    for view in views:
        if _same(view.backgroundBrush().color(), swaps.old_bg):
            view.setBackground(swaps.new_bg)
        if callable(hook := getattr(view, "recolour", None)):  # a view that keeps colours for later
            hook(swaps)
        for item in view.scene().items():
            _recolour_item(item, swaps)
    return len(views)
