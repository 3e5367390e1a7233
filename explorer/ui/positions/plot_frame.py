"""The plot every panel of the Positions view starts from: themed, no menu,
a title that may be clipped rather than widen the panel."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QLayout

from ..style import plot_colors, shrinkable, style_plot

__all__ = ["add_plot"]


def add_plot(layout: QLayout, min_width: int = 160, min_height: int = 140) -> tuple[pg.PlotWidget, pg.PlotItem]:
    """A themed PlotWidget added to ``layout``; returns it and its PlotItem."""
    bg, _fg = plot_colors()
    widget = pg.PlotWidget(background=bg)
    widget.setMinimumSize(min_width, min_height)
    plot = widget.getPlotItem()
    plot.setMenuEnabled(False)
    plot.hideButtons()
    style_plot(plot)
    shrinkable(plot.titleLabel)
    layout.addWidget(widget)
    return widget, plot
