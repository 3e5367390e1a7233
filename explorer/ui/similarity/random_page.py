"""The random-vector check: cosines of random Gaussian vectors at the table's
d, next to cosines of the table's own rows. Computed by the state (a lazy
computation) only while this page is on screen."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QMenu, QToolButton, QVBoxLayout, QWidget

from explorer.core.errors import user_message
from explorer.core.geometry.vectors import CosineCheck, cosine_normal_pdf
from explorer.core.units import format_percent
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, MadeInParts, PlotsInParts, ShownGate, job_progress, job_status
from explorer.ui.common.export import export_graphics
from explorer.ui.common.plot_grid import show_grid
from explorer.ui.common.plot_title import FittedTitle
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import ACCENT, SPACING, TEXT_TOKENS, plot_colors, style_plot, translucent

NO_MODEL = "Open a model to compare its rows with random vectors"
WAITING = "Counting cosines of random pairs…"


class RandomPage(PlotsInParts, QWidget):
    """Two histograms (random pairs, pairs of rows) with the N(0, 1/d) law.

    The histograms are made a part a turn when the page is first shown (the random pairs' plot,
    the rows' plot, then the drawing; both in one turn stalled a real window 57-87 ms), or one
    part at each idle moment."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        self._check: CosineCheck | None = None
        bg, _ = plot_colors()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground(bg)
        self.glw.ci.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        self.glw.ci.setSpacing(SPACING * 3)
        lay.addWidget(self.glw, 1)
        status = QHBoxLayout()
        status.setContentsMargins(SPACING, 0, SPACING, 0)
        self.status, self.progress = job_status(), job_progress()
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setToolTip("Save the two histograms as PNG or SVG")
        self.export_button.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(self.export_button)
        for ext in ("png", "svg"):
            menu.addAction(f"Histograms as {ext.upper()}…", lambda e=ext: self._export_dialog(e))
        self.export_button.setMenu(menu)
        status.addWidget(self.status, 1)
        status.addWidget(self.progress)
        status.addWidget(self.export_button)
        lay.addLayout(status)
        self.facts = WrapLabel(NO_MODEL)
        self.facts.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.facts.setContentsMargins(SPACING, 0, SPACING, SPACING)
        lay.addWidget(self.facts)
        # made at the first show, a part a turn, or at idle moments (the view opens on the other page)
        self._plot_parts = MadeInParts((self._make_random_plot, self._make_real_plot, self._draw_plots), self)
        self._gate = ShownGate(self, self._synchronize)
        self._binding = JobBinding(self._gate, state.jobs.random_check, on_reset=self._clear, on_result=self._draw,
                                   on_error=self._on_check_failed, progress=self.progress, status=self.status)

    def _make_random_plot(self) -> None:
        fg = plot_colors()[1]
        self.rand_plot = self._histogram_plot(0)
        self.rand_hist = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(translucent(fg, 90)),
                                         pen=pg.mkPen(fg, width=1))
        self.rand_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=2.5))
        self.rand_band = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(translucent(ACCENT, 28)),
                                             pen=pg.mkPen(ACCENT, width=1, style=Qt.DashLine))
        self.rand_title = FittedTitle(self.rand_plot)
        self.rand_plot.addItem(self.rand_band)
        self.rand_plot.addItem(self.rand_hist)
        self.rand_plot.addItem(self.rand_curve)

    def _make_real_plot(self) -> None:
        self.real_plot = self._histogram_plot(1)
        self.real_hist = pg.PlotDataItem(stepMode="center", fillLevel=0,
                                         brush=pg.mkBrush(translucent(TEXT_TOKENS, 120)),
                                         pen=pg.mkPen(TEXT_TOKENS, width=1))
        self.real_curve = pg.PlotDataItem(pen=pg.mkPen(ACCENT, width=2, style=Qt.DashLine))
        self.real_title = FittedTitle(self.real_plot)
        self.real_plot.addItem(self.real_hist)
        self.real_plot.addItem(self.real_curve)

    def _histogram_plot(self, col: int) -> pg.PlotItem:
        plot = self.glw.addPlot(row=0, col=col, enableMenu=False)
        plot.setLabel("bottom", "cosine of a random pair")
        plot.setLabel("left", "density (per unit of cosine)")
        show_grid(plot)
        style_plot(plot)
        return plot

    @property
    def check(self) -> CosineCheck | None:
        """The check drawn (None while it is computed, or with no model)."""
        return self._check

    # -- state -------------------------------------------------------------------------
    def _synchronize(self) -> None:
        self._plot_parts.start()
        self._binding.redraw()

    def _clear(self) -> None:
        self._check = None
        self._draw_plots()
        self.facts.setText(NO_MODEL if self._state.table is None else WAITING)

    def _on_check_failed(self, exc: BaseException) -> None:
        self._clear()
        self.facts.setText(f"The random-vector check failed: {user_message(exc)}")

    def _draw(self, check: CosineCheck) -> None:
        self._check = check
        self.status.setText("")
        self._draw_plots()
        f = check.shell_fraction
        self.facts.setText(
            f"<b>Random vectors</b>: cosines of independent Gaussian vectors in d = {check.dim:,} dimensions follow "
            f"about N(0, 1/d) (green curve): standard deviation 1/√d = {check.theory_std:.4f}, measured "
            f"{check.random_std:.4f}; {check.within_bound:.1%} of pairs have |cos| ≤ 3/√d = {check.bound:.3f} "
            f"(shaded). In high dimensions random directions are nearly orthogonal. "
            f"<b>This table</b>: mean cosine {check.real_mean:+.4f}, standard deviation {check.real_std:.4f} "
            f"(dashed: the random law at the same d). "
            f"<b>Volume</b>: a unit ball in {check.dim:,} dimensions keeps (1 − 0.01)^{check.dim:,} = {f:.5g} of its "
            f"volume inside radius 0.99, so {format_percent(1 - f, 3, rest=f)} lies in the outer 1 % shell.")

    def _draw_plots(self) -> None:
        """The check held on the histograms, or empty ones (once they are made)."""
        if not self.plots_built:
            return  # the last part draws it
        check = self._check
        if check is None:
            for item in (self.rand_hist, self.real_hist, self.rand_curve, self.real_curve):
                item.setData([], [])
            self.rand_title.set("Random Gaussian vectors")
            self.real_title.set("Rows of this table")
            return
        self.rand_hist.setData(check.random_edges, check.random_density)
        self.rand_curve.setData(check.curve_x, check.curve_y)
        self.rand_band.setRegion((-check.bound, check.bound))
        self.rand_title.set(f"{check.n_pairs:,} pairs of random Gaussian vectors, d = {check.dim:,}")
        self.real_hist.setData(check.real_edges, check.real_density)
        # the same N(0, 1/d) law over the real histogram, for comparison
        cx = np.linspace(check.real_edges[0], check.real_edges[-1], 241)
        self.real_curve.setData(cx, cosine_normal_pdf(cx, check.dim))
        self.real_title.set(f"{check.n_real:,} random pairs of this table's rows")
        for p in (self.rand_plot, self.real_plot):
            p.enableAutoRange()

    # -- export ------------------------------------------------------------------------
    def _export_dialog(self, ext: str) -> None:
        filt = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)"}[ext]
        path, _ = QFileDialog.getSaveFileName(self, "Export", f"random_vectors.{ext}", filt)
        if path:
            self.export_plot(path)

    def export_plot(self, path: str) -> None:
        """Save the two histograms as PNG or SVG."""
        if self._gate.stale:
            self._gate.sync_now()
        self.ensure_plots()
        export_graphics(self.glw.ci, path)
