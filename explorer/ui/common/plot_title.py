"""A plot title that fits its plot: shortened with "…" when the plot is
narrower than the text (the whole title in the tooltip), never clipped."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from explorer.ui.style import plot_colors, shrinkable

__all__ = ["FittedTitle"]

#: the title's margins over the view box (pyqtgraph's LabelItem adds a few px)
_MARGIN_PX = 12


class FittedTitle:
    """The title of ``plot``, elided to the plot's width on every resize.

    ``plot.setTitle`` with a long text lets the text run past the plot and be
    cut at the window's edge at 1024 px ("Score of 30,522 rows; line: the
    referen"). Set the title through :meth:`set` instead.
    """

    def __init__(self, plot: pg.PlotItem, size_pt: float = 10.0, color: str | None = None, span: bool = False):
        self.plot = plot
        #: over every column of the plot (its axes and a colour bar too), fitted to the
        #: plot's width; else over the view box, fitted to its width
        self._span = span
        self._spanned = 0  # columns the title spans now
        self._size = size_pt
        self._color = color  # None: the palette's text colour when drawn (it follows a theme change)
        font = QFont()
        font.setPointSizeF(size_pt)
        self._metrics = QFontMetrics(font)
        self._text = ""
        self._short = ""
        self._shown: str | None = None
        plot.setTitle(" ", color=self._color or plot_colors()[1], size=f"{size_pt:g}pt")  # makes the title label
        shrinkable(plot.titleLabel)
        if span:
            plot.geometryChanged.connect(self._fit)
        else:
            plot.vb.sigResized.connect(self._fit)

    @property
    def text(self) -> str:
        """The whole title."""
        return self._text

    @property
    def shown(self) -> str:
        """The title as drawn (elided when the plot is narrow)."""
        return self._shown or ""

    def set(self, text: str, color: str | None = None, short: str | None = None) -> None:
        """Show ``text``; where it does not fit, ``short`` (if given), elided only if that
        does not fit either."""
        self._text = text
        self._short = short or ""
        if color is not None:
            self._color = color
        self._shown = None
        if self._span:
            self._span_columns()
        self._fit()

    def _span_columns(self) -> None:
        """The title over all the plot's columns (a colour bar may have been added since)."""
        layout, label = self.plot.layout, self.plot.titleLabel
        columns = layout.columnCount()
        if columns != self._spanned:
            layout.removeItem(label)
            layout.addItem(label, 0, 0, 1, columns)
            self._spanned = columns

    def _fit(self) -> None:
        # the title sits over the view box's column of the plot's grid (over all of
        # them when it spans the plot)
        room = self.plot.width() if self._span else self.plot.vb.width()
        width = max(0, int(room) - _MARGIN_PX)
        if not self._text or not width:
            self._show(self._text)
            return
        text = self._text
        if self._short and self._metrics.horizontalAdvance(text) > width:
            text = self._short
        shown = self._metrics.elidedText(text, Qt.ElideRight, width)
        # the text item may render wider than these metrics say (its own font
        # and document margins): measure what is drawn and shorten until it fits
        for _ in range(8):
            self._show(shown)
            drawn = self.plot.titleLabel.item.boundingRect().width()
            if drawn <= width + _MARGIN_PX // 2 or len(shown) <= 2:
                break
            if text != self._short and self._short:
                text = shown = self._short
                continue
            keep = max(1, min(len(shown) - 2, int(len(shown) * width / drawn) - 1))
            shown = text[:keep].rstrip() + "…"

    def _show(self, shown: str) -> None:
        if shown == self._shown:
            return
        self._shown = shown
        if not shown:
            self.plot.setTitle(None)
        else:
            self.plot.setTitle(html.escape(shown), color=self._color or plot_colors()[1], size=f"{self._size:g}pt")
        self.plot.titleLabel.setToolTip(self._text if shown != self._text else "")
