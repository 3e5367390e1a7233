"""The plot every panel of the Positions view starts from: themed, no menu,
a title that may be clipped rather than widen the panel."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget

from explorer.ui.style import plot_colors, shrinkable, style_plot

__all__ = ["add_plot", "PlotPanel"]


def add_plot(layout: QLayout, min_width: int = 160, min_height: int = 140) -> tuple[pg.PlotWidget, pg.PlotItem]:
    """A themed PlotWidget added to ``layout``; returns it and its PlotItem."""
    bg, _fg = plot_colors()
    widget = pg.PlotWidget(background=bg, enableMenu=False)
    widget.setMinimumSize(min_width, min_height)
    plot = widget.getPlotItem()
    plot.setMenuEnabled(False)
    plot.hideButtons()
    style_plot(plot)
    shrinkable(plot.titleLabel)
    layout.addWidget(widget)
    return widget, plot


class PlotPanel(QWidget):
    """A panel holding one plot from :func:`add_plot`, filling the panel; ``_fg``
    is the palette's text colour for titles."""

    def __init__(self, parent=None):
        super().__init__(parent)
        _bg, self._fg = plot_colors()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.plot_widget, self.plot = add_plot(self._layout)

    def set_title(self, title: str) -> None:
        self.plot.setTitle(title, color=self._fg, size="10pt")
