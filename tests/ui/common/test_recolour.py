"""recolour_plots: what was drawn in the old plot colours takes the new ones; nothing else changes."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from explorer.ui.common.recolour import recolour_plots
from explorer.ui.style import ACCENT, LIGHT_TEXT, axis_pen_color, translucent

OLD, NEW = ("#ffffff", "#000000"), ("#1e1f22", "#e6e6e6")


def test_old_colours_become_new_ones_and_no_fill_appears(qtbot):
    view = pg.PlotWidget(background=OLD[0])
    qtbot.addWidget(view)
    plot = view.getPlotItem()
    axis = plot.getAxis("left")
    axis.setTextPen(OLD[1])
    axis.setPen(pg.mkPen(axis_pen_color(OLD[1], dark=False)))
    plot.setTitle("title", color=OLD[1])
    bare = pg.TextItem("bare", color=OLD[1])  # no fill, no border: it must get none
    boxed = pg.TextItem("boxed", color=ACCENT, fill=translucent(OLD[0], 200))
    on_cell = pg.TextItem("+1.000", color=LIGHT_TEXT)  # white on a dark cell: white on either theme
    for item in (bare, boxed, on_cell):
        plot.addItem(item)

    assert recolour_plots(OLD, NEW) >= 1

    assert view.backgroundBrush().color() == QColor(NEW[0])
    assert axis.textPen().color() == QColor(NEW[1])
    assert axis.pen().color() == axis_pen_color(NEW[1], dark=True)
    assert QColor(plot.titleLabel.opts["color"]) == QColor(NEW[1])
    assert bare.color == QColor(NEW[1]) and bare.fill.style() == Qt.NoBrush
    # a meaningful colour stays; a translucent background fill takes the new background, as translucent
    assert boxed.color == QColor(ACCENT)
    assert boxed.fill.color().rgb() == QColor(NEW[0]).rgb() and boxed.fill.color().alpha() == 200
    assert on_cell.color == QColor(LIGHT_TEXT)
