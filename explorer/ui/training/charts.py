"""The six live training charts in one pyqtgraph grid.

Every item is created once; :meth:`TrainingCharts.draw` changes them with
setData from the session's history. The time series redraw on every call;
the slow charts (per row, and the raster at full speed) once every
SLOW_SECONDS, one of them per call so that no single frame carries them all.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QFrame, QGraphicsPixmapItem, QGraphicsView, QScrollArea, QWidget

from explorer.core.training.charts import RASTER_CHANGED, RASTER_GRAD, TrainingHistory, binned, moving_average
from explorer.core.training.session import LOSS_WINDOW, RASTER_STEPS, TrainingSession
from explorer.ui.style import CHANGED_ROWS, DECAY_ROWS, GRADIENT_ROWS, NEUTRAL, SPACING, blend, plot_colors, shrinkable
from explorer.ui.training.plots import Chart, PaintLog
from explorer.ui.training.row_charts import FREQUENCY_AXIS, DriftChart, PcaChart, UpdatesChart

__all__ = ["TrainingCharts", "ChartsArea", "LossChart", "SparsityChart", "RasterChart", "MAX_POINTS", "SLOW_SECONDS"]

#: at most this many points per time-series curve
MAX_POINTS = 300
#: the raster image has at most this many rows (groups of rows for bigger vocabularies)
RASTER_ROWS = 512
#: the slow charts redraw once every this many seconds (one of them per frame);
#: at full speed every this many (they cost the training more then)
SLOW_SECONDS, SLOW_SECONDS_FLAT_OUT = 1.0, 3.0
SLOW_CHARTS = ("raster", "updates", "drift", "pca")
#: below this width (px) the six charts stack in one column, each this high, and scroll
TWO_COLUMNS_MIN_WIDTH = 360
STACKED_CHART_HEIGHT = 240
#: in two columns below this width or height (px) the charts go compact (short titles,
#: no axis labels, the colours named once above them): all six in sight at 1024 x 700
#: (a first try at two columns there was reverted: the full titles ran into each other
#: and the rotated axis labels were cut)
ROOMY_WIDTH, ROOMY_HEIGHT = 560, 450


class LossChart(Chart):
    """Cross-entropy per step (faint) and its trailing mean (bold), with ln V dashed."""

    def __init__(self, glw, row: int, col: int, fg: str):
        super().__init__(glw, row, col, "Loss (dashed: ln V, a uniform guess)", "cross-entropy (nats)", "step", fg,
                         short_title="Loss in nats (dashed: ln V)")
        faint = QColor(NEUTRAL)
        faint.setAlpha(110)
        # no antialiasing, thin lines: a wide antialiased curve costs milliseconds
        # to paint on every frame (while the worker waits for the GIL)
        self.raw = self.curve(pg.mkPen(faint, width=1))
        self.avg = self.curve(pg.mkPen(fg, width=2))
        self.uniform = self.curve(pg.mkPen(NEUTRAL, width=1, style=Qt.DashLine))  # ln V across the run
        self.plot.setToolTip(f"Cross-entropy of each step's batch (grey) and its mean over the last {LOSS_WINDOW} "
                             "steps (bold), in nats; the dashed line is ln V, the loss of a uniform guess")

    def clear(self) -> None:
        for c in (self.raw, self.avg, self.uniform):
            c.setData([], [])
        self.forget_range()

    def start(self, planned_steps: int, vocab_size: int) -> None:
        """The axes of a run: x to its last step, y to a little above ln V."""
        ln_v = math.log(max(vocab_size, 2))
        self.uniform.setData([0, planned_steps], [ln_v, ln_v])
        self.set_range((0, planned_steps), (0, math.ceil(ln_v * 1.05 * 2) / 2))

    def draw(self, h: TrainingHistory, steps: np.ndarray) -> None:
        loss = h.series("loss")
        self.raw.setData(steps, binned(loss, MAX_POINTS)[0])
        self.avg.setData(steps, binned(moving_average(loss, LOSS_WINDOW), MAX_POINTS)[0])
        top = float(np.nanmax(np.where(np.isfinite(loss), loss, np.nan))) if np.isfinite(loss).any() else 0.0
        if self.view_range is not None and top > self.view_range[1][1]:  # a spike above ln V
            self.set_range(self.view_range[0], (0, math.ceil(top * 1.05 * 2) / 2))


class SparsityChart(Chart):
    """Rows with gradient, rows changed and rows moved by weight decay alone per step, as % of V
    (tied: the whole table's gradient too).

    The curves often coincide (SGD: changed = with gradient; tied: changed = the
    whole table = 100 %), so each keeps its own look: "with gradient" is a wide
    pale band at the bottom, "changed" a thin solid line over it, "decay only"
    dashed over both, the tied table's total wide and dashed on top.
    """

    def __init__(self, glw, row: int, col: int, fg: str, bg: str):
        super().__init__(glw, row, col, self.title_for(False), "% of the V rows", "step", fg,
                         short_title=self.SHORT_TITLE)
        self.total = self.curve(pg.mkPen(NEUTRAL, width=3, style=Qt.DashLine), z=5)
        # opaque pale band (no alpha blending to paint); the lines stay readable on it
        self.grad = self.curve(self.band_pen(bg), z=1)
        self.changed = self.curve(pg.mkPen(CHANGED_ROWS, width=1.5), z=3)
        self.decay = self.curve(pg.mkPen(DECAY_ROWS, width=2, style=Qt.DashLine), z=4)
        self._tied = False
        self.plot.setToolTip(
            "Per step, as % of V: rows of the input table with a non-zero gradient (= the distinct ids of the "
            "batch, untied; the wide pale band); rows whose values changed (the thin line: momentum and weight "
            "decay move rows without gradient); rows that had no gradient and changed only because of weight "
            "decay (dashed: the same step without decay would have left them as they were); tied: the shared "
            "table's whole gradient, dense (100 %, grey dashes)")

    @staticmethod
    def band_pen(bg: str) -> QPen:
        """The "with gradient" band: opaque, pale over ``bg``."""
        pen = pg.mkPen(blend(GRADIENT_ROWS, bg, 0.55), width=6)
        pen.setCosmetic(True)
        return pen

    #: compact, the colours are named once above the grid (TrainingCharts.key)
    SHORT_TITLE = "% of the V rows, by step"

    @staticmethod
    def title_for(tied: bool) -> str:
        t = (f"% of rows: <span style='color:{GRADIENT_ROWS}'>{'input ' if tied else ''}gradient</span>"
             f" / <span style='color:{CHANGED_ROWS}'>changed</span>")
        # tied, every row has a gradient each step: no row can move by decay alone
        if tied:
            return t + f" / <span style='color:{NEUTRAL}'>tied table</span>"
        return t + f" / <span style='color:{DECAY_ROWS}'>decay only</span>"

    def start(self, planned_steps: int, tied: bool) -> None:
        """A run's axes (x to its last step) and, when tied, the whole table's curve."""
        self._tied = tied
        self.set_title(self.title_for(tied), self.SHORT_TITLE)
        self.total.setVisible(tied)
        self.decay.setVisible(not tied)
        self.set_range((0, planned_steps), (-3, 103))  # a curve at 0 % or 100 % clear of the frame

    def clear(self) -> None:
        for c in (self.total, self.changed, self.grad, self.decay):
            c.setData([], [])

    def draw(self, h: TrainingHistory, steps: np.ndarray) -> None:
        self.grad.setData(steps, binned(h.fraction("input_grad_rows"), MAX_POINTS)[0])
        self.changed.setData(steps, binned(h.fraction("changed_rows"), MAX_POINTS)[0])
        self.decay.setData(steps, binned(h.fraction("decay_only_rows"), MAX_POINTS)[0])
        if self._tied:
            self.total.setData(steps, binned(h.fraction("grad_rows"), MAX_POINTS)[0])


class RasterChart(Chart):
    """The last RASTER_STEPS steps (columns) x rows by frequency: gradient / changed / untouched."""

    def __init__(self, glw, row: int, col: int, fg: str, bg: str):
        super().__init__(glw, row, col, f"Rows with <span style='color:{GRADIENT_ROWS}'>gradient</span> / "
                         f"<span style='color:{CHANGED_ROWS}'>changed</span> (last {RASTER_STEPS} steps)",
                         "rows, frequent → rare", "steps before the latest", fg,
                         short_title=f"Rows × last {RASTER_STEPS} steps")
        self.plot.invertY(True)
        # a pixmap Qt paints alone (no Python on the GUI thread while it paints)
        self.image = QGraphicsPixmapItem()
        self.image.setTransformationMode(Qt.FastTransformation)
        self.plot.addItem(self.image, ignoreBounds=True)
        #: the cells last drawn, (rows, steps) uint8
        self.cells: np.ndarray | None = None
        self._lut = np.zeros((3, 3), np.uint8)
        self.set_background(bg)
        self.plot.setToolTip(
            "One column per step, one line per row of E, the most frequent token at the top: blue = the row "
            "had gradient; orange = it changed without gradient (momentum, weight decay); blank = untouched")

    def set_background(self, bg: str) -> None:
        """The cells' opaque colours over ``bg`` (changed: a light mix with it); the
        picture drawn, if any, again in them (a theme change)."""
        back = np.array(QColor(bg).getRgb()[:3], np.float64)
        for value, (color, weight) in {0: (bg, 1.0), RASTER_CHANGED: (CHANGED_ROWS, 0.45),
                                       RASTER_GRAD: (GRADIENT_ROWS, 1.0)}.items():
            self._lut[value] = np.round(weight * np.array(QColor(color).getRgb()[:3]) + (1 - weight) * back)
        if self.cells is not None:
            self._paint(self.cells)

    def _paint(self, img: np.ndarray) -> None:
        rows, n = img.shape
        rgb = np.ascontiguousarray(self._lut[img])  # (rows, n, 3)
        self.image.setPixmap(QPixmap.fromImage(QImage(rgb.data, n, rows, 3 * n, QImage.Format_RGB888)))

    def start(self, vocab_size: int) -> None:
        self.set_range((-RASTER_STEPS, 0.5), (0, vocab_size))

    def clear(self) -> None:
        self.image.setPixmap(QPixmap())
        self.cells = None

    def draw(self, h: TrainingHistory) -> None:
        img, steps = h.raster(RASTER_ROWS)
        rows, n = img.shape
        if not n:
            return
        self._paint(img)
        # x: steps before the latest (a fixed axis; the picture scrolls left); y: rows of E
        self.image.setTransform(QTransform.fromScale(1.0, h.vocab_size / rows))
        self.image.setPos(-n + 0.5, 0)
        self.cells = img


#: the charts of the grid: loss, sparsity, raster, updates per row, drift, PCA
CHART_COUNT = 6


class TrainingCharts(pg.GraphicsLayoutWidget):
    """Loss, sparsity, raster, updates per row, drift and PCA, drawn from a TrainingSession.

    The grid is painted by Qt's own QGraphicsView.paintEvent, not
    pyqtgraph's Python one, which would hold the GIL for the whole paint
    while the worker waits for it; the views' transforms are kept current
    by the charts instead (see plots.Chart). ``paint_log`` holds the CPU
    time of the paints that still run Python (the scatter plots): with the
    update time, what a frame costs the worker through the GIL.
    """

    paintEvent = QGraphicsView.paintEvent

    def __init__(self, parent=None, plots: Sequence[pg.PlotItem] = (), make_charts: bool = True):
        super().__init__(parent)
        self._plots = list(plots)  # made beforehand (TrainingView.built_in_steps), one per chart, in order
        bg = plot_colors()[0]
        self.setBackground(bg)
        self.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.ci.setSpacing(SPACING)
        self.paint_log = PaintLog()
        self.columns = 2
        self.compact = False
        self.run = None  # the TrainingRun the charts are set up for
        self._slow_next = -1  # index in SLOW_CHARTS of the slow chart due next (-1: none yet)
        self._slow_at = -math.inf
        self._drawn_version = -1
        self._paint_taken = 0.0
        if make_charts:  # else by whoever made it, a step at a time (built_in_steps)
            for _ in self._make_charts():
                pass

    @classmethod
    def built_in_steps(cls, plots: Sequence[pg.PlotItem] = (), per_step: int = 2
                       ) -> Generator[QWidget | None, None, TrainingCharts]:
        """The charts made over turns of the event loop, ``per_step`` charts a turn (a generator for
        :meth:`TrainingView.built_in_steps`). The grid comes first, to be held by the tab's page until
        the view takes it. All six in the turn that made the view took 55-100 ms of it in a real
        window."""
        grid = cls(plots=plots, make_charts=False)
        yield grid
        for k, _ in enumerate(grid._make_charts(), 1):
            if k % per_step == 0:
                yield
        return grid

    def _make_charts(self) -> Generator[None, None, None]:
        """The six charts, in order, a yield after each, each in the palette of its moment (a new one
        between two steps recoloured those made already); then what needs them."""
        bg, fg = plot_colors()
        self.loss = LossChart(self, 0, 0, fg)
        yield
        bg, fg = plot_colors()
        self.sparsity = SparsityChart(self, 0, 1, fg, bg)
        yield
        bg, fg = plot_colors()
        self.raster = RasterChart(self, 1, 0, fg, bg)
        yield
        bg, fg = plot_colors()
        self.updates = UpdatesChart(self, 1, 1, fg, self.paint_log)
        yield
        bg, fg = plot_colors()
        self.drift = DriftChart(self, 2, 0, fg, self.paint_log)
        yield
        bg, fg = plot_colors()
        self.pca = PcaChart(self, 2, 1, fg, bg, self.paint_log)
        self.charts = [self.loss, self.sparsity, self.raster, self.updates, self.drift, self.pca]
        # compact: the colours of the sparsity, raster and per-row charts, named once above them
        self.key = pg.LabelItem("", size="8pt", color=fg)
        self.key.item.document().setDocumentMargin(1)
        shrinkable(self.key)
        self._set_key(False)
        for c in range(2):
            self.ci.layout.setColumnStretchFactor(c, 1)

    def take_plot(self, row: int, col: int) -> pg.PlotItem:
        """A chart's PlotItem at (row, col): one made beforehand, else a new one (no menu)."""
        if self._plots:
            plot = self._plots.pop(0)
            self.addItem(plot, row=row, col=col)
            return plot
        return self.addPlot(row=row, col=col, enableMenu=False)

    def recolour(self, _swapped) -> None:
        """A new palette (see ui/common/recolour.py): the colours mixed with the old background. A grid
        still being made (:meth:`built_in_steps`) recolours the charts it has; the others are made in
        the new palette."""
        bg = plot_colors()[0]
        if hasattr(self, "raster"):
            self.raster.set_background(bg)
        if hasattr(self, "sparsity"):
            self.sparsity.grad.setPen(self.sparsity.band_pen(bg))
        if hasattr(self, "pca"):
            self.pca.set_background(bg)

    def take_paint_cpu_ms(self) -> float:
        """CPU time of the Python paints since the last call, in ms."""
        total, self._paint_taken = self.paint_log.total - self._paint_taken, self.paint_log.total
        return total

    def _set_key(self, tied: bool) -> None:
        names = [(GRADIENT_ROWS, "input gradient" if tied else "gradient"), (CHANGED_ROWS, "changed"),
                 (NEUTRAL, "tied table") if tied else (DECAY_ROWS, "decay only")]
        self.key.setText("   ".join(f"<span style='color:{c}'>■ {n}</span>" for c, n in names))
        self.key.setMaximumHeight(math.ceil(self.key.itemRect().height()))

    def set_columns(self, columns: int, compact: bool = False) -> None:
        """Lay the charts out in 2 columns (3 rows) or 1 column (6 rows); ``compact``
        (2 columns only): short titles, no axis labels, the colour key above the grid."""
        compact = compact and columns == 2
        if (columns, compact) == (self.columns, self.compact):
            return
        self.columns, self.compact = columns, compact
        for item in (*[c.plot for c in self.charts], self.key):
            if item in self.ci.items:
                self.ci.removeItem(item)
        top = 0
        if compact:
            self.ci.addItem(self.key, row=0, col=0, colspan=2)
            top = 1
        for k, chart in enumerate(self.charts):
            chart.set_compact(compact)
            self.ci.addItem(chart.plot, row=top + k // columns, col=k % columns)
        for c in range(2):
            self.ci.layout.setColumnStretchFactor(c, 1 if c < columns else 0)
        self.setMinimumHeight(STACKED_CHART_HEIGHT * len(self.charts) if columns == 1 else 0)

    def start_run(self, session: TrainingSession) -> None:
        """A run's corpus is known: every axis whose range is known now (the
        planned steps, V, the corpus counts, the first frame) is set now, once:
        a new range rebuilds an axis, milliseconds of the GUI thread."""
        run = session.run
        self.run = run
        self.start_axes(run.cfg.steps, run.corpus.counts(), run.cfg.tied, run.classes, run.frame)

    def start_axes(self, steps: int, counts: np.ndarray, tied: bool, classes=None, frame=None,
                   counted: str = FREQUENCY_AXIS) -> None:
        """Set every axis for a run of ``steps`` steps over rows counted by ``counts`` (V,)
        (a recorded run has no TrainingRun: the watch view calls this itself, and says
        what ``counted`` on the per-row charts' x axis)."""
        v = int(counts.shape[0])
        for chart in (self.updates, self.drift):
            if chart.plot.getAxis("bottom").labelText != counted:
                chart.plot.setLabel("bottom", counted)
        self.loss.start(steps, v)
        self.sparsity.start(steps, tied)
        self.raster.start(v)
        self.updates.start(counts, steps)
        self.drift.start(counts)
        self._set_key(tied)
        if classes is not None or self.pca.classes_for != v:
            self.pca.set_classes(classes, v)
        if frame is not None:
            self.pca.start(frame)

    def clear_run(self, tied: bool = False) -> None:
        """Empty every chart (named so: GraphicsLayoutWidget.clear would remove the plots);
        the sparsity legend names the curves of the settings' next run (``tied``), not the last run's."""
        for chart in self.charts:
            chart.clear()
        self.run = None
        self.sparsity.set_title(self.sparsity.title_for(tied), self.sparsity.SHORT_TITLE)
        self._set_key(tied)
        self._slow_next = -1
        self._slow_at = -math.inf
        self._drawn_version = -1

    def set_cached(self, cached: bool) -> None:
        """Axes and titles from Qt's pixmap cache (on screen) or painted (vector export)."""
        for chart in self.charts:
            chart.set_cached(cached)

    def draw(self, session: TrainingSession, final: bool = False) -> bool:
        """Redraw from the session's history if it moved; ``final``: every chart
        at once (a pause, the end, an export). Returns whether anything was drawn.

        The loss and sparsity curves redraw on every call. The slow charts
        (per row, and the raster while the run goes flat out: it is a blur of
        the last 400 steps then) redraw once every SLOW_SECONDS (or
        SLOW_SECONDS_FLAT_OUT), one of them per call, so that no single frame
        carries them all.
        """
        h = session.history
        if h is None or h.n == 0:
            return False
        if h.version == self._drawn_version and not final:
            return False
        self._drawn_version = h.version
        steps, _size = binned(h.series("step"), MAX_POINTS)
        self.loss.draw(h, steps)
        self.sparsity.draw(h, steps)
        paced = session.speed > 0
        if final or paced:
            self.raster.draw(h)
        if final:
            for part in SLOW_CHARTS[1:]:
                self._draw_slow(session, part)
            self._slow_next = -1
            return True
        now = time.perf_counter()
        if self._slow_next < 0 and now - self._slow_at >= (SLOW_SECONDS if paced else SLOW_SECONDS_FLAT_OUT):
            self._slow_at, self._slow_next = now, 0
        if self._slow_next >= 0 and SLOW_CHARTS[self._slow_next] == "raster" and paced:
            self._slow_next += 1  # drawn above already
        if self._slow_next >= 0:
            self._draw_slow(session, SLOW_CHARTS[self._slow_next])
            self._slow_next = self._slow_next + 1 if self._slow_next + 1 < len(SLOW_CHARTS) else -1
        return True

    def _draw_slow(self, session: TrainingSession, part: str) -> None:
        h = session.history
        if part == "raster":
            self.raster.draw(h)
        elif part == "updates":
            self.updates.draw(h)
        elif part == "drift":
            self.drift.draw(h)
        else:
            self.pca.draw(h.frame, session.silhouette_init)


class ChartsArea(QScrollArea):
    """The charts, in two columns when there is room, else stacked in one column that scrolls."""

    def __init__(self, charts: TrainingCharts, parent=None):
        super().__init__(parent)
        self.charts = charts
        self.setWidget(charts)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        width, height = self.viewport().width(), self.viewport().height()
        columns = self.charts.columns
        # hysteresis wider than a scroll bar: the bar coming or going must not flip the layout back
        if columns == 2 and width < TWO_COLUMNS_MIN_WIDTH:
            columns = 1
        elif columns == 1 and width >= TWO_COLUMNS_MIN_WIDTH + 40:
            columns = 2
        # two columns fill the page (no scroll bar): its size cannot flip the compact look back
        self.charts.set_columns(columns, compact=width < ROOMY_WIDTH or height < ROOMY_HEIGHT)
