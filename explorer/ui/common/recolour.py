"""Plots already drawn take a new palette at once (View → Theme, or the system's
scheme changing), instead of at the next start.

Every plot took its background and foreground from :func:`plot_colors` when it
was built. On a palette change the window calls :func:`recolour_plots` with
the old and the new pair: whatever is still painted in the old background or
foreground (view backgrounds, axes, tick text, titles, text items, lines) is
painted in the new one. Colours that mean something (the accent, class
colours, colour maps) are the same on both themes and stay. An item that
paints with colours of its own (or a view keeping some for later) has a
``recolour(swapped)`` method: ``swapped``
gives a colour's new one (keeping its opacity), or None if it stays.
"""

from __future__ import annotations

import re

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QAbstractGraphicsShapeItem, QApplication

from explorer.ui.style import axis_pen_color

__all__ = ["recolour_plots"]


def _same(a: QColor, b: QColor) -> bool:
    """The same colour, whatever the opacity (translucent fills are the background too)."""
    return a.rgb() & 0xFFFFFF == b.rgb() & 0xFFFFFF


def _with_color(pen: QPen, color: QColor) -> QPen:
    pen = QPen(pen)
    pen.setColor(color)
    return pen


def _recolour_label(item: pg.LabelItem, swapped, old_fg: str, new_fg: str) -> None:
    """The label's colour, and the old foreground written in its HTML (a legend's spans)."""
    color = item.opts.get("color")
    to = swapped(pg.mkColor(color)) if color is not None else None
    text = item.text if isinstance(item.text, str) else ""
    spans = old_fg.lower() in text.lower()
    if spans:
        text = re.sub(re.escape(old_fg), new_fg, text, flags=re.IGNORECASE)
    if to is not None:
        item.setText(text, color=to.name())
    elif spans:
        item.setText(text)


def recolour_plots(old: tuple[str, str], new: tuple[str, str]) -> int:
    """Repaint every pyqtgraph view of the application drawn in ``old``
    (background, foreground) in ``new``; returns how many views there were."""
    old_bg, old_fg, new_bg, new_fg = (QColor(c) for c in (*old, *new))
    old_axis = axis_pen_color(old_fg, dark=old_bg.lightness() < 128)
    new_axis = axis_pen_color(new_fg, dark=new_bg.lightness() < 128)
    swaps = ((old_fg, new_fg), (old_bg, new_bg), (old_axis, new_axis))

    def swapped(color: QColor) -> QColor | None:
        to = next((QColor(to) for was, to in swaps if _same(color, was)), None)
        if to is not None:
            to.setAlpha(color.alpha())  # a translucent fill stays as translucent
        return to

    views = [w for w in QApplication.allWidgets() if isinstance(w, pg.GraphicsView)]
    for view in views:
        if _same(view.backgroundBrush().color(), old_bg):
            view.setBackground(new_bg)
        if callable(hook := getattr(view, "recolour", None)):  # a view that keeps colours for later
            hook(swapped)
        for item in view.scene().items():
            hook = getattr(item, "recolour", None)
            if callable(hook):  # an item that paints colours of its own
                hook(swapped)
            elif isinstance(item, pg.AxisItem):
                # as style_plot sets them: the text pen first (it colours the label too), then the line
                if _same(item.textPen().color(), old_fg):
                    item.setTextPen(new_fg)
                if _same(item.pen().color(), old_axis):
                    item.setPen(pg.mkPen(new_axis))
            elif isinstance(item, pg.LabelItem):
                _recolour_label(item, swapped, old_fg.name(), new_fg.name())
            elif isinstance(item, pg.TextItem):
                if (to := swapped(item.color)) is not None:
                    item.setColor(to)
                if item.fill.style() != Qt.NoBrush and (to := swapped(item.fill.color())) is not None:
                    item.fill = pg.mkBrush(to)
                    item.update()
            elif isinstance(item, pg.PlotCurveItem):
                pen = item.opts.get("pen")
                if isinstance(pen, QPen) and (to := swapped(pen.color())) is not None:
                    item.setPen(_with_color(pen, to))
            elif isinstance(item, QAbstractGraphicsShapeItem):  # Qt's own lines, boxes and texts
                if item.pen().style() != Qt.NoPen and (to := swapped(item.pen().color())) is not None:
                    item.setPen(_with_color(item.pen(), to))
                brush = item.brush()
                if brush.style() != Qt.NoBrush and (to := swapped(brush.color())) is not None:
                    brush.setColor(to)
                    item.setBrush(brush)
    return len(views)
