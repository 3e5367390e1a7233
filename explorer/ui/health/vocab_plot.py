"""The vocabulary as a scatter: token id on x, the row's norm or score on y,
coloured by tokenizer category, flagged rows ringed, the selection marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QVBoxLayout, QWidget
from superqt import QElidingLabel
from superqt.utils import qthrottled, signals_blocked

from explorer.core.health import CATEGORIES, CATEGORY_LABELS, Flag, HealthReport
from explorer.core.health.text import format_number
from explorer.ui.common.integer_axis import IntegerAxis
from explorer.ui.common.plot_grid import show_grid
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.common.raster import DotRaster
from explorer.ui.style import ACCENT, ERROR, HEALTH_CATEGORY_COLORS, plot_colors, style_as, style_plot

__all__ = ["VocabPlot", "Y_CHOICES", "MAX_RINGS"]

#: what the y axis can show: key -> (combo text, axis label)
Y_CHOICES = {
    "score": ("y: score", "score"),
    "norm": ("y: norm ‖E[i]‖", "norm ‖E[i]‖"),
}
#: flagged rows ringed at most (the most under-trained first)
MAX_RINGS = 3000
#: a click selects the nearest point within this many pixels
_PICK_PX = 8


class VocabPlot(QWidget):
    """Signals
    -------
    token_clicked(int)
        A point was clicked: its token id.
    """

    token_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._report: HealthReport | None = None
        self._piece_of = None
        self._waiting_rows = 0  # rows of the table being checked, while there is no report
        self._selected = -1
        bg, fg = plot_colors()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        # the view puts these two in its own row of controls
        self.y_choice = QComboBox()
        self.y_choice.setToolTip("What the y axis shows")
        for key, (text, _label) in Y_CHOICES.items():
            self.y_choice.addItem(text, key)
        self.y_choice.currentIndexChanged.connect(self._on_y_choice_changed)
        self.readout = QElidingLabel("")
        style_as(self.readout, "ChipId")

        self.plot_widget = pg.PlotWidget(background=bg, axisItems={"bottom": IntegerAxis("bottom")}, enableMenu=False)
        # the histogram's minimum: the two share a row of the splitter, which a long
        # summary at 1024 x 700 squeezes below 160 px; a taller minimum here cut off
        # this plot's axis label while the histogram beside it fitted
        self.plot_widget.setMinimumHeight(120)
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setMenuEnabled(False)
        show_grid(self.plot)
        self.plot.setLabel("bottom", "token id")
        style_plot(self.plot)
        self.dots = DotRaster(size=3)
        self.plot.vb.addItem(self.dots, ignoreBounds=True)
        self.dots.attach(self.plot.vb)
        self.rings = pg.ScatterPlotItem(size=8, pen=pg.mkPen(ERROR, width=1.2), brush=None, symbol="o")
        self.marker = pg.ScatterPlotItem(size=12, pen=pg.mkPen(ACCENT, width=2.5), brush=pg.mkBrush(ACCENT),
                                         symbol="o")
        self.bar = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(ERROR, width=1, style=Qt.DashLine))
        for item in (self.rings, self.bar, self.marker):
            self.plot.addItem(item)
        self.bar.hide()
        lay.addWidget(self.plot_widget, 1)
        self.title = FittedTitle(self.plot)
        self.plot.scene().sigMouseClicked.connect(self._on_scene_clicked)
        self._hover = qthrottled(self._show_hover, timeout=50, parent=self)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self._fg = fg

    # -- what is drawn -----------------------------------------------------------------
    @property
    def y_key(self) -> str:
        return self.y_choice.currentData()

    def y_values(self) -> np.ndarray:
        """The y of every row (NaN where undefined)."""
        r = self._report
        if r is None:
            return np.zeros(0)
        return r.scores if self.y_key == "score" else r.norms

    def set_report(self, report: HealthReport | None, piece_of=None, vocab_size: int = 0) -> None:
        """Draw ``report``; the y axis shows whichever indicator flagged more rows. No report:
        empty axes over the next table's ``vocab_size`` rows (never the last model's range)."""
        self._report, self._piece_of, self._waiting_rows = report, piece_of, int(vocab_size)
        self.readout.setText("")
        if report is not None:
            counts = report.flag_counts()
            key = "norm" if counts["low_norm"] + counts["zero"] > counts["high_score"] else "score"
            with signals_blocked(self.y_choice):
                self.y_choice.setCurrentIndex(list(Y_CHOICES).index(key))
        self._redraw()

    def set_selected(self, token_id: int) -> None:
        self._selected = int(token_id)
        self._place_marker()

    def _on_y_choice_changed(self, _index: int) -> None:
        self._redraw()

    def _redraw(self) -> None:
        r = self._report
        if r is None:
            self.dots.clear_points()
            self.rings.setData([], [])
            self.marker.setData([], [])
            self.bar.hide()
            self.title.set(f"Checking {self._waiting_rows:,} rows…" if self._waiting_rows else "")
            self.plot.vb.setRange(xRange=(-0.5, max(1, self._waiting_rows) - 0.5), yRange=(0, 1), padding=0.02)
            return
        y = self.y_values()
        ids = np.arange(r.vocab_size, dtype=np.float64)
        cats = r.categories[: r.vocab_size]
        # the bulk first, the rare categories on top
        order = sorted(range(len(CATEGORIES)), key=lambda c: -int(np.count_nonzero(cats == c)))
        with self.dots.held():  # drawn once, for the new points in the new range
            self.dots.set_groups([(ids[cats == c], y[cats == c], HEALTH_CATEGORY_COLORS[CATEGORIES[c]])
                                  for c in order])
            self._auto_range(y)
        flagged = r.flagged[:MAX_RINGS]
        flagged = flagged[np.isfinite(y[flagged])]  # a zero row has no score: no place on that axis
        self.rings.setData(flagged.astype(np.float64), y[flagged])
        bar = r.score_threshold if self.y_key == "score" else r.norm_threshold
        self.bar.setVisible(bool(np.isfinite(bar)))
        if np.isfinite(bar):
            self.bar.setValue(bar)
        label = Y_CHOICES[self.y_key][1]
        self.plot.setLabel("left", label)
        self.title.set(f"{label} of every row (dashed: the bar beyond chance)")
        self._place_marker()

    def _auto_range(self, y: np.ndarray) -> None:
        finite = y[np.isfinite(y)]
        r = self._report
        if not len(finite):
            return
        lo, hi = float(finite.min()), float(finite.max())
        pad = 0.04 * (hi - lo or 1.0)
        self.plot.vb.setRange(xRange=(-0.5, r.vocab_size - 0.5), yRange=(lo - pad, hi + pad), padding=0.02)

    def _place_marker(self) -> None:
        r, i = self._report, self._selected
        if r is None or not 0 <= i < r.vocab_size or not np.isfinite(self.y_values()[i]):
            self.marker.setData([], [])
            return
        self.marker.setData([float(i)], [float(self.y_values()[i])])

    # -- the mouse ---------------------------------------------------------------------
    def _nearest(self, scene_pos) -> int:
        """The id of the point nearest to ``scene_pos`` within a few pixels, or -1."""
        r = self._report
        vb = self.plot.vb
        if r is None or not vb.sceneBoundingRect().contains(scene_pos):
            return -1
        p = vb.mapSceneToView(scene_pos)
        (x0, x1), (y0, y1) = vb.viewRange()
        sx, sy = vb.width() / (x1 - x0), vb.height() / (y1 - y0)
        y = self.y_values()
        lo = max(0, int(p.x() - _PICK_PX / sx) - 1)
        hi = min(r.vocab_size, int(p.x() + _PICK_PX / sx) + 2)
        if hi <= lo:
            return -1
        with np.errstate(invalid="ignore"):
            d = np.hypot((np.arange(lo, hi) - p.x()) * sx, (y[lo:hi] - p.y()) * sy)
        d = np.where(np.isfinite(d), d, np.inf)
        k = int(np.argmin(d))
        return lo + k if d[k] <= _PICK_PX else -1

    def _on_scene_clicked(self, event) -> None:
        i = self._nearest(event.scenePos())
        if i >= 0:
            self.token_clicked.emit(i)

    def _show_hover(self, pos) -> None:
        i = self._nearest(pos)
        r = self._report
        if i < 0 or r is None:
            self.readout.setText("")
            return
        piece = self._piece_of(i) if self._piece_of else str(i)
        self.readout.setText(f"{piece}  id {i:,}  {CATEGORY_LABELS[r.category_of(i)]}  norm "
                             f"{format_number(r.norms[i])}  score {format_number(r.scores[i])}"
                             + ("  flagged" if r.flags[i] & Flag.UNDER_TRAINED else ""))
