"""The projection's plot: every item created once, then only fed data.

It knows nothing of the state: the view hands it coordinates, colours and
labels. Label placement and the analogy's arrow heads wait until the view
settles (debounced); a frame of panning or zooming redraws the point cloud,
the marks, a few lines and the placed labels, with no per-point Python.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QFont
from superqt.utils import qdebounced

from explorer.ui.common.export import export_graphics
from explorer.ui.projection.cluster_labels import ClusterLabels
from explorer.ui.projection.density_layer import DensityOverlay
from explorer.ui.projection.label_layout import LabelLayer, LabelSpec
from explorer.ui.projection.point_cloud import GridLines, PointCloud
from explorer.ui.style import ACCENT, EXTRA, blend, plot_colors, style_plot

__all__ = ["ProjectionPlot", "Mark"]

#: milliseconds the view must stay still before labels are placed again
SETTLE_MS = 120


class Mark:
    """Kinds of highlighted points: (size, symbol)."""

    INTEREST = (9, "o")
    TARGET = (12, "d")


class ProjectionPlot(pg.PlotWidget):
    """Scatter of the projection with its highlights, lines and labels.

    Signals
    -------
    point_hovered(int)
        Token id under the pointer (-1: none).
    point_clicked(int)
        Token id of the point the user clicked.
    settled()
        The view stopped moving (and labels were placed again).
    cloud_changed()
        New points were given (the density map follows them).
    """

    point_hovered = Signal(int)
    point_clicked = Signal(int)
    settled = Signal()
    cloud_changed = Signal()

    def __init__(self, parent=None):
        bg, fg = plot_colors()
        super().__init__(parent, background=bg, enableMenu=False)
        self._bg, self._fg = bg, fg
        self._cloud_ids = np.zeros(0, np.int64)
        self._labels_wanted = None
        pi = self.getPlotItem()
        self.plot_item = pi
        pi.setTitle("Tokens projected on two principal components", color=fg, size="10pt")
        style_plot(pi)
        self.grid = GridLines(pi, 0.14, 0.06)
        pi.addItem(self.grid, ignoreBounds=True)
        for kw in ({"x": 0}, {"y": 0}):
            pi.addLine(**kw, pen=pg.mkPen(blend(fg, bg, 0.45), width=1, style=Qt.DotLine))
        self.cloud = PointCloud()
        self.cloud.hovered.connect(self._on_cloud_hovered)
        self.cloud.clicked.connect(self._on_cloud_clicked)
        pi.addItem(self.cloud)
        self.neighbor_lines = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(ACCENT, width=1.5))
        pi.addItem(self.neighbor_lines)
        self.analogy_lines = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(EXTRA, width=2))
        self.analogy_dashed = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(EXTRA, width=2, style=Qt.DashLine))
        pi.addItem(self.analogy_lines)
        pi.addItem(self.analogy_dashed)
        self.arrow_heads = [pg.ArrowItem(headLen=14, tipAngle=30, tailLen=0, pen=None, brush=pg.mkBrush(EXTRA))
                            for _ in range(3)]
        for head in self.arrow_heads:
            pi.addItem(head, ignoreBounds=True)
            head.hide()
        self._segments: list[tuple[np.ndarray, np.ndarray]] = []
        # pens and brushes made once: pyqtgraph renders a symbol again for every new pen or brush object
        self._mark_pen = pg.mkPen(bg, width=1.5)
        self._brushes: dict[str, object] = {}
        self._marks_drawn: tuple = ()  # what set_marks drew last
        self._selection_drawn: tuple = ()  # and set_selection
        self.marks = pg.ScatterPlotItem(pxMode=True, hoverable=True, tip=None)
        self.selection = pg.ScatterPlotItem(pxMode=True, hoverable=True, tip=None, size=15, symbol="o",
                                            pen=pg.mkPen(bg, width=2), brush=pg.mkBrush(ACCENT))
        for item in (self.marks, self.selection):
            item.sigClicked.connect(self._on_marks_clicked)
            item.sigHovered.connect(self._on_marks_hovered)
            pi.addItem(item)
        font = QFont(self.font())
        font.setPointSize(9)
        fill = QColor(bg)
        fill.setAlpha(200)
        self.labels = LabelLayer(font, fill)
        pi.addItem(self.labels, ignoreBounds=True)
        self._settle = qdebounced(self._on_view_settled, timeout=SETTLE_MS, parent=self)
        vb = pi.getViewBox()
        vb.sigRangeChanged.connect(self._settle)
        vb.sigResized.connect(self._settle)
        self.density = DensityOverlay(self, self)
        self.clusters = ClusterLabels(self, self)
        self.clusters.changed.connect(self._settle)

    @property
    def foreground(self) -> str:
        return self._fg

    def recolour(self, _swapped) -> None:
        """A new palette (see ui/common/recolour.py): the marks' outlines in the new background,
        and the colours kept for what is drawn later."""
        self._bg, self._fg = plot_colors()
        self._mark_pen = pg.mkPen(self._bg, width=1.5)
        self.marks.setPen(self._mark_pen)
        self.selection.setPen(pg.mkPen(self._bg, width=2))

    # -- data ------------------------------------------------------------------------------
    def set_cloud(self, ids: np.ndarray, xy: np.ndarray, group: np.ndarray, colors: list[QColor],
                  size: float) -> None:
        """Every projected token: ids (n,), positions (n, 2), colour group (n,) into ``colors``."""
        self._cloud_ids = np.asarray(ids, np.int64)
        self.cloud.set_points(xy, group, colors, size)
        self.cloud_changed.emit()

    def set_marks(self, ids: list[int], xy: np.ndarray, colors: list[str], kinds: list[tuple[int, str]]) -> None:
        """Highlighted points, drawn over the cloud (the last on top)."""
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        same = (list(ids), xy.tobytes(), list(colors), list(kinds))
        if same == self._marks_drawn:  # a filter click draws the cloud again, rarely the marks
            return
        self._marks_drawn = same
        if not ids:
            self.marks.setData([])
            return
        for c in colors:
            if c not in self._brushes:
                self._brushes[c] = pg.mkBrush(c)
        self.marks.setData(pos=xy, data=np.asarray(ids, np.int64),
                           brush=[self._brushes[c] for c in colors], size=[k[0] for k in kinds],
                           symbol=[k[1] for k in kinds], pen=self._mark_pen)

    def set_selection(self, token_id: int | None, xy: np.ndarray) -> None:
        """The selected token at ``xy[0]``, joined by lines to each of ``xy[1:]`` (its neighbours)."""
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        same = (token_id, xy.tobytes())
        if same == self._selection_drawn:
            return
        self._selection_drawn = same
        if token_id is None or not len(xy):
            self.selection.setData([])
            self.neighbor_lines.setData([], [])
            return
        self.selection.setData(pos=xy[:1], data=np.asarray([token_id], np.int64))
        pairs = np.empty((2 * (len(xy) - 1), 2))
        pairs[0::2] = xy[0]
        pairs[1::2] = xy[1:]
        self.neighbor_lines.setData(pairs[:, 0], pairs[:, 1])

    def set_analogy(self, pa=None, pb=None, pc=None, best=None) -> None:
        """Arrows b → a and c → a − b + c, dashed to the best answer; nothing when pa is None.

        PCA is affine, so the projection of a − b + c is P(a) − P(b) + P(c).
        """
        if pa is None:
            self.analogy_lines.setData([], [])
            self.analogy_dashed.setData([], [])
            self._segments = []
            for head in self.arrow_heads:
                head.hide()
            return
        target = pa - pb + pc
        solid = np.array([pb, pa, pc, target], np.float64)
        self.analogy_lines.setData(solid[:, 0], solid[:, 1])
        dashed = np.array([target, best if best is not None else target], np.float64)
        self.analogy_dashed.setData(dashed[:, 0], dashed[:, 1])
        self._segments = [(pb, pa), (pc, target)] + ([(target, best)] if best is not None else [])
        self._place_arrow_heads()

    def want_labels(self, source) -> None:
        """``source()`` gives the labels (LabelSpec, by priority); they are placed once the view settles."""
        self._labels_wanted = source
        self._settle()

    def clear_all(self) -> None:
        """Nothing drawn: no cloud, marks, selection, analogy or labels (a new model)."""
        self.set_cloud(np.zeros(0), np.zeros((0, 2)), np.zeros(0, np.int64), [QColor(0, 0, 0)], 4)
        self.set_marks([], np.zeros((0, 2)), [], [])
        self.set_selection(None, np.zeros((0, 2)))
        self.set_analogy(None)
        self.labels.clear()

    def auto_range(self) -> None:
        self.plot_item.getViewBox().autoRange(padding=0.06)

    def cloud_ids(self) -> np.ndarray:
        """The token ids of the cloud's points, in the order of ``cloud.positions()``."""
        return self._cloud_ids

    def token_at_cloud_index(self, index: int) -> int:
        return int(self._cloud_ids[index]) if 0 <= index < len(self._cloud_ids) else -1

    def view_rect(self):
        return self.plot_item.getViewBox().viewRect()

    def export(self, path: str) -> None:
        """Save the plot as PNG or SVG (by the file's extension)."""
        export_graphics(self.plot_item, path)

    # -- settling --------------------------------------------------------------------------
    def settle_soon(self) -> None:
        """Place the labels again once the view has been still for a moment (``settled`` follows)."""
        self._settle()

    def place_now(self) -> None:
        """Place the labels and arrow heads for the view as it is (tests; the debounce calls it)."""
        specs: list[LabelSpec] = self._labels_wanted() if self._labels_wanted is not None else []
        specs += self.clusters.specs(self._fg)  # after the tokens that matter: they win any overlap
        self.labels.place(specs)
        self._place_arrow_heads()

    def _on_view_settled(self, *_args) -> None:
        self.place_now()
        self.settled.emit()

    def _place_arrow_heads(self) -> None:
        vb = self.plot_item.getViewBox()
        for i, head in enumerate(self.arrow_heads):
            if i >= len(self._segments):
                head.hide()
                continue
            p0, p1 = self._segments[i]
            s0 = vb.mapViewToScene(QPointF(float(p0[0]), float(p0[1])))
            s1 = vb.mapViewToScene(QPointF(float(p1[0]), float(p1[1])))
            dx, dy = s1.x() - s0.x(), s1.y() - s0.y()
            if dx * dx + dy * dy < 4:
                head.hide()
                continue
            # ArrowItem's angle 0 points left (tip at the position); screen y grows downwards
            head.setStyle(angle=math.degrees(math.atan2(dy, dx)) + 180)
            head.setPos(float(p1[0]), float(p1[1]))
            head.show()

    # -- the pointer -------------------------------------------------------------------------
    def _on_cloud_hovered(self, index: int) -> None:
        self.point_hovered.emit(self.token_at_cloud_index(index))

    def _on_cloud_clicked(self, index: int) -> None:
        tid = self.token_at_cloud_index(index)
        if tid >= 0:
            self.point_clicked.emit(tid)

    def _on_marks_clicked(self, _item, points, _ev=None) -> None:
        pts = list(points) if points is not None else []
        if pts and pts[0].data() is not None and int(pts[0].data()) >= 0:
            self.point_clicked.emit(int(pts[0].data()))

    def _on_marks_hovered(self, _item, points, _ev=None) -> None:
        pts = list(points) if points is not None else []
        if pts and pts[0].data() is not None and int(pts[0].data()) >= 0:
            self.point_hovered.emit(int(pts[0].data()))
