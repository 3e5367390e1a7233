"""The training charts with one point per row of E: steps with gradient and
with change per row, each row's distance from its start, and the PCA of the
table coloured by class. They only draw what the history and its latest
frame hold (the PCA and silhouette were computed in the worker)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsSimpleTextItem

from explorer.core.projection.label_layout import place_centred_labels
from explorer.core.training.charts import TrainingHistory
from explorer.core.training.frames import PCA_EVERY, TableFrame
from explorer.ui.style import CHANGED_ROWS, GRADIENT_ROWS, NEUTRAL, class_color
from explorer.ui.training.plots import Chart, PaintLog, nice_ceil

__all__ = ["UpdatesChart", "DriftChart", "PcaChart", "ClassLabel", "FREQUENCY_AXIS"]

FREQUENCY_AXIS = "occurrences in the corpus (log)"


def _frequency_x(counts: np.ndarray) -> tuple[np.ndarray, tuple[float, float]]:
    """log10 of each row's corpus count (never-seen rows at 0.5), and the x range.

    The plots draw log10 themselves (their axes label it as a log scale):
    a PlotItem in log mode would transform every item's data again each time.
    """
    x = np.log10(np.maximum(counts, 0.5).astype(np.float64))
    return x, (math.log10(0.5) - 0.15, float(x.max(initial=0.0)) + 0.15)


def _log_axis(chart: Chart) -> None:
    chart.plot.getAxis("bottom").setLogMode(True)


class UpdatesChart(Chart):
    """Steps with gradient (filled) and with change (ring) of each row, by its token's frequency."""

    def __init__(self, glw, row: int, col: int, fg: str, paint_log: PaintLog):
        super().__init__(glw, row, col, f"Steps per row: <span style='color:{GRADIENT_ROWS}'>gradient"
                         f"</span> / <span style='color:{CHANGED_ROWS}'>changed</span>", "steps",
                         FREQUENCY_AXIS, fg, paint_log, short_title="Steps per row, by frequency")
        _log_axis(self)
        self.changes = self.scatter(symbol="o", size=6, brush=None, pen=pg.mkPen(CHANGED_ROWS, width=1),
                                    antialias=False)
        self.updates = self.scatter(symbol="o", size=5, pen=None, brush=pg.mkBrush(GRADIENT_ROWS), antialias=False)
        self.plot.setToolTip("One point per row: how many steps gave it a gradient (filled) and how many changed it "
                     "(ring), against how often its token occurs in the corpus. Never-seen tokens are drawn at 0.5")

    def start(self, counts: np.ndarray, planned_steps: int) -> None:
        """x: the corpus counts; y: up to the run's planned steps (a row cannot get more)."""
        self.set_range(_frequency_x(counts)[1], (0, planned_steps * 1.04))

    def clear(self) -> None:
        self.changes.setData([], [])
        self.updates.setData([], [])

    def draw(self, h: TrainingHistory) -> None:
        x, _ = _frequency_x(h.counts)
        self.updates.setData(x, h.grad_count.astype(np.float64))
        self.changes.setData(x, h.change_count.astype(np.float64))


class DriftChart(Chart):
    """‖E_t[i] − E_0[i]‖ of each row, by its token's frequency."""

    def __init__(self, glw, row: int, col: int, fg: str, paint_log: PaintLog):
        super().__init__(glw, row, col, "Distance of each row from its start", "‖E_t[i] − E_0[i]‖",
                         FREQUENCY_AXIS, fg, paint_log, short_title="Distance from start, by frequency")
        _log_axis(self)
        self.points = self.scatter(symbol="o", size=5, pen=None, brush=pg.mkBrush(GRADIENT_ROWS), antialias=False)
        self.plot.setToolTip("One point per row: Euclidean distance of the row from its random start against "
                             "its token's frequency (a new picture every few steps): rare rows stay near where "
                             "they started")

    def clear(self) -> None:
        self.points.setData([], [])

    def start(self, counts: np.ndarray) -> None:
        self.set_range(_frequency_x(counts)[1], (0, 0.1))

    def draw(self, h: TrainingHistory) -> None:
        x, lx = _frequency_x(h.counts)
        drift = h.drift()
        ok = np.isfinite(drift)
        self.points.setData(x[ok], drift[ok])
        dmax = float(drift[ok].max()) if ok.any() else 0.0
        # the axis only grows during a run (and in coarse steps): each change rebuilds it
        top = max(self.view_range[1][1] if self.view_range else 0.0, nice_ceil(dmax * 1.05) if dmax > 0 else 0.1)
        self.set_range(lx, (0, top))


#: pixels kept free around each class name
_LABEL_MARGIN = 1
#: opacity (of 255) of a class name's background: the points under it show through
LABEL_FILL_ALPHA = 110


class ClassLabel(QGraphicsRectItem):
    """A class name in a frame of the class's colour, the same size at any zoom.

    Text in the palette's colour on the plot's background: readable on both
    themes whatever the class colour. Plain Qt items, centred on their
    position: painting them runs no Python (pyqtgraph's TextItem recomputes
    its transform before every paint of the scene, and repaints again).
    """

    def __init__(self, name: str, fg: str, bg: str, color: str):
        super().__init__()
        self.setFlag(QGraphicsItem.ItemIgnoresTransformations)
        self.text = QGraphicsSimpleTextItem(name, self)
        font = self.text.font()
        font.setPointSize(8)
        font.setBold(True)
        self.text.setFont(font)
        self.text.setBrush(QColor(fg))
        r = self.text.boundingRect()
        self.text.setPos(-r.width() / 2, -r.height() / 2)
        self.setRect(-r.width() / 2 - 3, -r.height() / 2 - 1, r.width() + 6, r.height() + 2)
        fill = QColor(bg)
        fill.setAlpha(LABEL_FILL_ALPHA)  # the points under a name stay visible through it
        self.setBrush(fill)
        self.setPen(QPen(QColor(color), 1))


class PcaChart(Chart):
    """The rows of E on two principal components, coloured by class, class names at their centres."""

    EMPTY_TITLE = "PCA of E, coloured by word class"
    EMPTY_SHORT_TITLE = "PCA of E, by word class"

    def __init__(self, glw, row: int, col: int, fg: str, bg: str, paint_log: PaintLog):
        super().__init__(glw, row, col, self.EMPTY_TITLE, "PC 2", "PC 1", fg, paint_log,
                         short_title=self.EMPTY_SHORT_TITLE)
        self._bg = bg
        self.points = self.scatter(size=7, pen=None)
        self.plot.setToolTip(
            f"Rows of E projected on PC 1 and PC 2, refitted every {PCA_EVERY} steps (signs kept aligned so the "
            "picture does not flip); colours are the word classes, the same as in the Projection tab; the "
            "silhouette (cosine, by class, −1…1) says how well the classes separate")
        self.labels: list[ClassLabel] = []
        self._names: tuple[str, ...] = ()
        self._brushes: np.ndarray | None = None  # one QBrush per row (objects)
        self._sizes: np.ndarray | None = None
        self.coords: np.ndarray | None = None
        #: the class centres the names were last placed for (view coordinates)
        self._centres: np.ndarray | None = None
        self._drawn_step = -1
        #: V of the class-free brushes last made (-1: none, or made for classes)
        self.classes_for = -1

    def set_classes(self, classes, vocab_size: int) -> None:
        """The run's ClassIndex (or None): a brush per row, a label per class (made once per run)."""
        names = tuple(classes.names) if classes is not None else ()
        of = classes.of if classes is not None else np.full(vocab_size, -1)
        cache: dict[int, object] = {}
        faint = QColor(NEUTRAL)
        faint.setAlpha(150)
        brushes, sizes = [], np.full(vocab_size, 7.0)
        for i in range(vocab_size):
            k = int(of[i]) if i < len(of) else -1
            if k not in cache:
                cache[k] = pg.mkBrush(faint if k < 0 else QColor(class_color(k)))
            brushes.append(cache[k])
            if k < 0:
                sizes[i] = 5
        self._brushes, self._sizes = np.array(brushes, dtype=object), sizes
        self.classes_for = vocab_size if classes is None else -1
        if names != self._names:
            for label in self.labels:
                self.plot.removeItem(label)
            self.labels = [self._make_label(k, n) for k, n in enumerate(names)]
            self._names = names

    def set_background(self, bg: str) -> None:
        """Class names made from now on fill their frames with ``bg`` (a theme change; the
        names shown are recoloured with the plot)."""
        self._bg = bg

    def _make_label(self, k: int, name: str) -> ClassLabel:
        label = ClassLabel(name, self._fg, self._bg, class_color(k))
        label.setVisible(False)
        self.plot.addItem(label, ignoreBounds=True)
        return label

    def _place_labels(self, centres: np.ndarray | None) -> None:
        """Each class name at its class's centre or, where it would cover a name
        placed before it, the nearest free place around it inside the plot; a
        name with no free place is left out (its colour still says the class),
        never piled on the others. Placed in pixels: called again whenever the
        plot changes size (the names keep their size, the plot's scale does not)."""
        self._centres = centres
        if centres is None or not self.labels:
            return
        vb = self.vb
        anchors = np.full((len(self.labels), 2), np.nan)
        for k, centre in enumerate(centres[:len(self.labels)]):
            if np.isfinite(centre).all():
                at = vb.mapViewToScene(QPointF(float(centre[0]), float(centre[1])))
                anchors[k] = at.x(), at.y()
        # each box with a free margin (its frame is drawn half outside it), kept off the
        # tick marks the left and bottom axes draw into the plot
        sizes = np.array([(label.rect().width(), label.rect().height()) for label in self.labels]) + 2 * _LABEL_MARGIN
        b = vb.sceneBoundingRect()
        ticks = [max(0.0, -float(self.plot.getAxis(name).style["tickLength"])) for name in ("left", "bottom")]
        bounds = (b.left() + ticks[0], b.top(), b.right(), b.bottom() - ticks[1])
        placed = {p.index: p for p in place_centred_labels(anchors, sizes, bounds, spacing=0)}
        for k, label in enumerate(self.labels):
            p = placed.get(k)
            label.setVisible(p is not None)
            if p is not None:
                label.setPos(vb.mapSceneToView(QPointF(p.left + p.width / 2, p.top + p.height / 2)))

    def _on_vb_resized(self, vb) -> None:
        super()._on_vb_resized(vb)
        self._place_labels(self._centres)

    def start(self, frame: TableFrame) -> None:
        """The range of the table before training (it then grows only when a point would leave it)."""
        self.forget_range()
        self._fit_range(frame.coords, force=True)

    def _fit_range(self, coords: np.ndarray, force: bool = False, refitted: bool = False) -> None:
        fin = coords[np.isfinite(coords).all(axis=1)]
        if not fin.size:
            return
        lo, hi = fin.min(axis=0), fin.max(axis=0)
        cur = self.view_range
        outside = (cur is None or lo[0] < cur[0][0] or hi[0] > cur[0][1] or lo[1] < cur[1][0]
                   or hi[1] > cur[1][1])
        # a new range rebuilds both axes: only when a point would leave the
        # plot, or the points have shrunk to a small part of it
        shrunk = cur is not None and refitted and (
            (hi[0] - lo[0]) < 0.4 * (cur[0][1] - cur[0][0]) and (hi[1] - lo[1]) < 0.4 * (cur[1][1] - cur[1][0]))
        if force or outside or shrunk:
            pad = np.maximum((hi - lo) * 0.15, 1e-6)
            self.set_range((lo[0] - pad[0], hi[0] + pad[0]), (lo[1] - pad[1], hi[1] + pad[1]))

    def clear(self) -> None:
        self.points.setData([], [])
        for label in self.labels:
            label.setVisible(False)
        self.coords = None
        self._centres = None
        self._drawn_step = -1
        self.forget_range()
        self.set_title(self.EMPTY_TITLE, self.EMPTY_SHORT_TITLE)

    def draw(self, frame: TableFrame | None, silhouette_init: float | None) -> None:
        if frame is None or frame.step == self._drawn_step or self._brushes is None:
            return
        coords = frame.coords
        if len(self._brushes) != coords.shape[0]:
            return
        self._drawn_step = frame.step
        self.coords = coords
        self._fit_range(coords, refitted=frame.refitted)
        ok = np.isfinite(coords).all(axis=1)  # a diverging run's rows turn NaN: those have no place
        self.points.setData(coords[ok, 0], coords[ok, 1], brush=self._brushes[ok], size=self._sizes[ok])
        self._place_labels(frame.centres)
        title = short = f"PCA of E at step {frame.step:,}"
        if frame.silhouette is not None:
            start = f"{silhouette_init:+.2f} → " if silhouette_init is not None and frame.step > 0 else ""
            title = f"PCA of E · class silhouette {start}{frame.silhouette:+.2f}"
            short = f"PCA · silhouette {start}{frame.silhouette:+.2f}"
        self.set_title(title, short)

