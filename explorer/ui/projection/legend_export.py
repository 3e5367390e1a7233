"""Export the projection's plot as PNG or SVG with its legend drawn into the
image: the highlights' colours, then what colours the points (one swatch
and label per group, with its count). The legend exists only while the
file is written; on screen the side panel holds it."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from explorer.ui.common.export import export_graphics
from explorer.ui.style import ACCENT, EXTRA, NEIGHBORS, SEARCH_HITS, TEXT_TOKENS, plot_colors

__all__ = ["HIGHLIGHTS", "export_with_legend", "legend_lines"]

#: the colours every projection uses, first in its legend
HIGHLIGHTS = [(ACCENT, "selected"), (TEXT_TOKENS, "text"), (NEIGHBORS, "neighbours"), (EXTRA, "added")]


def legend_lines(title: str, entries, hits: int | None = None) -> list[tuple[str | None, str]]:
    """(colour or None for a heading, text) of the legend: the highlights, the search hits, ``title`` and
    its (colour, label[, count]) entries."""
    lines: list[tuple[str | None, str]] = list(HIGHLIGHTS)
    if hits is not None:
        lines.append((SEARCH_HITS, f"search hits ({hits:,})"))
    if entries:
        lines.append((None, title))
        lines += [(e[0], e[1] + (f" ({e[2]:,})" if len(e) > 2 else "")) for e in entries]
    return lines


def export_with_legend(plot_item: pg.PlotItem, path: str, lines) -> None:
    """Save ``plot_item`` to ``path`` (PNG or SVG by the extension) with a legend of ``lines``
    (see :func:`legend_lines`) in its top right corner."""
    bg, fg = plot_colors()
    fill = QColor(bg)
    fill.setAlpha(225)
    columns = 2 if len(lines) > 12 else 1
    legend = pg.LegendItem(offset=None, pen=pg.mkPen(QColor(fg).lighter(150)), brush=pg.mkBrush(fill),
                           labelTextColor=fg, labelTextSize="9pt", colCount=columns)
    for colour, text in lines:
        if colour is None:  # a heading: on a row of its own, a sample of nothing
            while columns > 1 and len(legend.items) % columns:
                legend.addItem(pg.ScatterPlotItem(size=0, pen=None, brush=None), "")
            sample, text = pg.ScatterPlotItem(size=0, pen=None, brush=None), f"<b>{text}</b>"
        else:
            sample = pg.ScatterPlotItem(size=10, symbol="o", pen=None, brush=pg.mkBrush(colour))
        legend.addItem(sample, text)
        while colour is None and columns > 1 and len(legend.items) % columns:  # the heading's row is its own
            legend.addItem(pg.ScatterPlotItem(size=0, pen=None, brush=None), "")
    # pyqtgraph draws a legend at screen scale: here it scales with the image like the rest
    legend.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations, False)
    vb = plot_item.getViewBox()
    legend.setParentItem(vb)
    legend.adjustSize()
    size = legend.layout.effectiveSizeHint(Qt.PreferredSize)
    legend.resize(size)
    # at most half the plot's width and 70 % of its height: a small plot gets a smaller legend
    # (the image is at least 1,200 px wide, so its words stay readable)
    scale = min(1.0, 0.5 * vb.width() / max(size.width(), 1.0), 0.7 * vb.height() / max(size.height(), 1.0))
    legend.setScale(scale)
    legend.setPos(max(0.0, vb.width() - scale * size.width() - 8), 8)  # the top right corner of the plot
    try:
        export_graphics(plot_item, path)
    finally:
        if legend.scene() is not None:
            legend.scene().removeItem(legend)
