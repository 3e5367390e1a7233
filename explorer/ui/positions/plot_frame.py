"""The plot every panel of the Positions view starts from: themed, no menu,
a title fitted to the plot's width (a shorter one, or elided) rather than cut
or widening the panel."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget

from explorer.ui.common.plot_title import FittedTitle
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
    """A panel holding one plot from :func:`add_plot`, filling the panel, and its
    fitted ``title``; ``_fg`` is the palette's text colour."""

    def __init__(self, parent=None):
        super().__init__(parent)
        _bg, self._fg = plot_colors()
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.plot_widget, self.plot = add_plot(self._layout)
        self.title = FittedTitle(self.plot, 10, span=True)

    def set_title(self, title: str, short: str | None = None) -> None:
        """``title`` over the plot; ``short`` where it does not fit (else it is elided)."""
        self.title.set(title, short=short)
