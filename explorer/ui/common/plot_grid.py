"""A plot's grid drawn under its data, in opaque lines.

pyqtgraph draws a grid as the axes' tick lines drawn across the plot, in a
translucent pen, and its axes lie above the data. Qt's raster engine blends
a long translucent line pixel by pixel: a 790 x 418 plot with a grid took
25-33 ms to repaint against 3.3 ms with opaque lines, and a plot repaints
at every hover readout, selection and step of a window's resize.

:func:`show_grid` keeps pyqtgraph's grid (the same ticks, the same faint
colours) but draws each line in the opaque colour it had over the plot's
background (:func:`explorer.ui.style.blend`), with the axes moved under the
data: a line can no longer show through a bar or a dot, as it could not
show through them if it were translucent and under them.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPen

from explorer.ui.style import blend, plot_colors

__all__ = ["show_grid", "GRID_Z"]

#: the axes of a plot with a grid: under its ViewBox (pyqtgraph's is at -100), so under the data
GRID_Z = -200


def show_grid(plot: pg.PlotItem, x: bool = True, y: bool = True, alpha: float = 0.12) -> None:
    """``plot.showGrid(x, y, alpha)`` drawn opaque and under the data."""
    plot.showGrid(x=x, y=y, alpha=alpha)
    for name in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(name)
        axis.setZValue(GRID_Z)
        if not getattr(axis, "_opaque_ticks", False):
            _draw_ticks_opaque(axis)


def _draw_ticks_opaque(axis: pg.AxisItem) -> None:
    """Every translucent tick (grid) line of ``axis`` in the colour it had over the plot's
    background, looked up when the axis is drawn (so a new theme's background counts)."""
    generate = axis.generateDrawSpecs

    def opaque_specs(painter):
        specs = generate(painter)
        if specs is None:
            return None
        axis_spec, ticks, texts = specs
        under = QColor(plot_colors()[0])
        opaque, out = {}, []
        for pen, p1, p2 in ticks:
            color = pen.color()
            if color.alpha() < 255:
                key = (color.rgba(), pen.widthF())
                if key not in opaque:
                    solid = QPen(pen)
                    solid.setColor(blend(QColor(color.red(), color.green(), color.blue()), under, color.alphaF()))
                    opaque[key] = solid
                pen = opaque[key]
            out.append((pen, p1, p2))
        return axis_spec, out, texts

    axis.generateDrawSpecs = opaque_specs
    axis._opaque_ticks = True
