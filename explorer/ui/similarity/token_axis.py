"""An axis of token labels for a heatmap: one label per cell, never two
overlapping (written across, turned upwards, or on every k-th cell, as
:func:`~explorer.core.matrix.axis_labels.plan_axis_labels` decides for the cell size)."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

from explorer.core.matrix.axis_labels import AxisLabelPlan, plan_axis_labels

#: free pixels between neighbouring labels along a bottom axis / between stacked rows
GAP_ALONG, GAP_STACKED = 4.0, 1.0
#: pixels between the axis line and its labels
OFFSET = 4.0


class TokenAxis(pg.AxisItem):
    """A left or bottom axis whose labels are token pieces at cell centres (i + 0.5).

    Parameters
    ----------
    orientation : str
        ``left`` or ``bottom``.
    max_label_px : float
        Longer labels are shortened with "…" to this many pixels.
    point_delta : int
        The labels' font size relative to the application font.
    """

    def __init__(self, orientation: str, max_label_px: float = 96.0, point_delta: int = 0):
        super().__init__(orientation)
        self._along = orientation in ("bottom", "top")
        self._max_px = float(max_label_px)
        self._font = QFont(QApplication.font())
        if point_delta:
            self._font.setPointSizeF(max(6.0, self._font.pointSizeF() + point_delta))
        self._metrics = QFontMetricsF(self._font)
        self._labels: list[str] = []
        self._texts: list[str] = []
        self._widths: list[float] = []
        self._shortened: dict[str, tuple[str, float]] = {}  # label -> (as written, its width in pixels)
        self.plan = AxisLabelPlan(False, 1, 0.0)
        self.setStyle(showValues=True, tickTextOffset=0)
        self._apply_extent()

    # -- the labels ----------------------------------------------------------------------
    def set_labels(self, labels: list[str]) -> None:
        """One label per cell, in cell order (an empty list: no labels)."""
        labels = [str(lab) for lab in labels]
        if labels == self._labels:
            return  # a new matrix of the same tokens (another measure, a new model's same pieces)
        self._labels = labels
        if len(self._shortened) > 4096:
            self._shortened.clear()
        for lab in labels:
            if lab not in self._shortened:
                text = self._metrics.elidedText(lab, Qt.ElideRight, self._max_px)
                self._shortened[lab] = (text, self._metrics.horizontalAdvance(text))
        self._texts = [self._shortened[lab][0] for lab in labels]
        self._widths = [self._shortened[lab][1] for lab in labels]
        self._relayout()

    @property
    def labels(self) -> list[str]:
        """The labels as written (shortened where too long), one per cell."""
        return list(self._texts)

    def label_rects(self) -> list[tuple[QRectF, str]]:
        """The box each drawn label covers, in this axis' coordinates, with its text."""
        geo = self._cell_geometry()
        if geo is None or not self._texts:
            return []
        to_axis, cell_px = geo
        line = self._metrics.height()
        rect = self.rect()  # the axis' own area (its bounding rect also covers the ticks inside the plot)
        out = []
        for i in range(0, len(self._texts), self.plan.step):
            text, width = self._texts[i], self._widths[i]
            c = to_axis(i + 0.5)
            if self._along:
                if not rect.left() - 0.5 <= c.x() <= rect.right() + 0.5:
                    continue
                top = OFFSET
                box = (QRectF(c.x() - line / 2, top, line, width) if self.plan.rotated
                       else QRectF(c.x() - width / 2, top, width, line))
            else:
                if not rect.top() - 0.5 <= c.y() <= rect.bottom() + 0.5:
                    continue
                box = QRectF(rect.right() - OFFSET - width, c.y() - line / 2, width, line)
            out.append((box, text))
        return out

    # -- layout --------------------------------------------------------------------------
    def _cell_geometry(self):
        """(view coordinate -> point in this axis, pixels per cell), from the linked
        view's current range and size (its transform may not be updated yet)."""
        vb = self.linkedView()
        if vb is None or vb.width() <= 0 or vb.height() <= 0:
            return None
        (x0, x1), (y0, y1) = vb.viewRange()
        if self._along:
            span, size = x1 - x0, vb.width()
        else:
            span, size = y1 - y0, vb.height()
        if span <= 0:
            return None
        px = size / span
        origin = self.mapFromItem(vb, QPointF(0, 0))
        inverted = vb.xInverted() if self._along else vb.yInverted()

        def to_axis(v: float) -> QPointF:
            lo, hi = (x0, x1) if self._along else (y0, y1)
            # along x the view grows rightwards unless inverted; screen y grows downwards
            d = (v - lo) * px if inverted != self._along else (hi - v) * px
            return QPointF(origin.x() + d, origin.y()) if self._along else QPointF(origin.x(), origin.y() + d)

        return to_axis, px

    def _relayout(self) -> None:
        geo = self._cell_geometry()
        cell_px = geo[1] if geo is not None else 0.0
        line = self._metrics.height()
        plan = plan_axis_labels(self._widths, cell_px, line, GAP_ALONG if self._along else GAP_STACKED,
                                along=self._along) if cell_px > 0 else AxisLabelPlan(False, 1, 0.0)
        changed = plan != self.plan
        self.plan = plan
        n = len(self._texts)
        self.setTicks([[(i + 0.5, "") for i in range(0, n, plan.step)], []])
        if changed:
            self._apply_extent()
        self.picture = None
        self.update()

    def _apply_extent(self) -> None:
        extent = int(math.ceil(self.plan.extent + OFFSET + max(0, self.style["tickLength"]))) + 2
        if self._along:
            self.setHeight(extent if self._texts else 2 * OFFSET)
        else:
            self.setWidth(extent if self._texts else 2 * OFFSET)

    def linkedViewChanged(self, view, newRange=None):
        super().linkedViewChanged(view, newRange)
        self._relayout()

    # -- painting ------------------------------------------------------------------------
    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        super().drawPicture(p, axisSpec, tickSpecs, [])  # the axis line and ticks; the labels are ours
        p.setFont(self._font)
        p.setPen(self.textPen())
        for box, text in self.label_rects():
            if self._along and self.plan.rotated:
                p.save()
                p.translate(box.center())
                p.rotate(-90)
                p.drawText(QRectF(-box.height() / 2, -box.width() / 2, box.height(), box.width()),
                           int(Qt.AlignRight | Qt.AlignVCenter), text)
                p.restore()
            else:
                align = Qt.AlignHCenter if self._along else Qt.AlignRight
                p.drawText(box, int(align | Qt.AlignVCenter), text)
