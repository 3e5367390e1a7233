"""The projection's density map: a coloured image of where the points crowd,
under the points, with contour lines, so 30,000 to 256,000 points read as a map.

The grid and its contours are :func:`explorer.core.projection.density.density_job`,
run in a worker (the state's ``layout_density``, handed over by :meth:`DensityOverlay.attach`):
asked for again only when the cloud changes or the view settles on a new range
(the plot's ``settled`` signal, itself debounced), never on a frame of
panning. The image and the contour item are created once and fed data.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF, Signal
from PySide6.QtWidgets import QCheckBox
from superqt.utils import qdebounced

from explorer.core.projection.density import DensityMap
from explorer.ui.style import blend, density_lut, is_dark, plot_colors

__all__ = ["DensityOverlay", "DENSITY_DEFAULT_MIN"]

#: the density is on by default for layouts of more points than this
DENSITY_DEFAULT_MIN = 10_000
#: screen pixels per grid cell, and the most cells a side
CELL_PX, MAX_CELLS = 3, 420
#: the grid covers the view and this share of it again on every side (a short pan stays mapped)
MARGIN = 0.25
#: Gaussian width, in cells
SIGMA = 1.6
#: the points' opacity while the map is shown
CLOUD_OPACITY = 0.3
#: milliseconds the cloud must stay unchanged before its density is asked for
CHANGE_MS = 80


class DensityOverlay(QObject):
    """The density image and contours of a :class:`ProjectionPlot`, and their toggle.

    Signals
    -------
    drawn()
        A new density map is on screen (tests, benchmarks).
    """

    drawn = Signal()

    def __init__(self, plot, parent=None):
        super().__init__(parent)
        self._plot = plot
        self._generation = 0  # counts the clouds given to the plot
        self._user_chose = False
        self.toggle = QCheckBox("Density")
        self.toggle.setToolTip("Colour the plot by how many points crowd each place, with contours around the\n"
                               "densest regions holding 10, 30, 50, 70 and 90 % of the points in view: a map of\n"
                               "big vocabularies. On by default above 10,000 points; the points turn translucent.")
        self.toggle.toggled.connect(self._on_toggled)
        self.toggle.clicked.connect(self._on_clicked)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(density_lut(is_dark()))
        self.image.setZValue(-500)  # over the grid lines (-1000), under the points
        bg, fg = plot_colors()
        pen = pg.mkPen(blend(fg, bg, 0.75), width=1)
        pen.setCosmetic(True)
        self.contours = pg.PlotCurveItem(connect="pairs", pen=pen, antialias=False)
        self.contours.setZValue(-400)
        for item in (self.image, self.contours):
            plot.plot_item.addItem(item, ignoreBounds=True)
            item.hide()
        self.computation = None  # the state's, once attached
        self._ask = None
        self._schedule = qdebounced(self._request, timeout=CHANGE_MS, parent=self)
        plot.cloud_changed.connect(self._on_cloud_changed)
        plot.settled.connect(self._schedule)

    # -- public ------------------------------------------------------------------------
    def attach(self, computation, request, forget) -> None:
        """Compute with ``request(xy, rect, bins, sigma, key)``, drop with ``forget()``; the map
        lands from ``computation`` (``state.request_layout_density``, ``state.forget_layout_density``
        and ``state.jobs.layout_density``)."""
        self.computation, self._ask, self._forget = computation, request, forget
        computation.finished.connect(self._on_finished)

    @property
    def shown(self) -> bool:
        return self.toggle.isChecked()

    def set_shown(self, on: bool) -> None:
        """As if the user ticked or cleared the toggle."""
        self.toggle.setChecked(on)
        self._user_chose = True

    @property
    def value(self) -> DensityMap | None:
        """The density map drawn (or None)."""
        return self.computation.value if self.computation is not None else None

    def request_now(self) -> None:
        """Ask for the map of the view as it is now (the debounce calls it; tests)."""
        self._request()

    # -- inputs ------------------------------------------------------------------------
    def _on_clicked(self, _checked: bool) -> None:
        self._user_chose = True

    def _on_toggled(self, on: bool) -> None:
        self._plot.cloud.setOpacity(CLOUD_OPACITY if on else 1.0)
        if on:  # debounced: a filter that crosses DENSITY_DEFAULT_MIN turns it on within a chart's click
            self._schedule()
        else:
            self._drop()

    def _on_cloud_changed(self) -> None:
        self._generation += 1
        n = len(self._plot.cloud)
        if not n:
            self._drop()
            return
        if not self._user_chose:
            self.toggle.setChecked(n > DENSITY_DEFAULT_MIN)
        self._schedule()

    def _request(self) -> None:
        cloud = self._plot.cloud
        if self._ask is None or not self.shown or not len(cloud) or not self._plot.isVisible():
            return
        vb = self._plot.plot_item.getViewBox()
        view = vb.viewRect()
        bounds = _data_rect(cloud)
        if bounds is None or not view.width() > 0 or not view.height() > 0:
            return
        grown = view.adjusted(-MARGIN * view.width(), -MARGIN * view.height(),
                              MARGIN * view.width(), MARGIN * view.height())
        # no cells where no point is: the grid stops a few cells past the data
        pad_x, pad_y = 0.02 * bounds.width() + 1e-9, 0.02 * bounds.height() + 1e-9
        rect = grown.intersected(bounds.adjusted(-pad_x, -pad_y, pad_x, pad_y))
        if not rect.width() > 0 or not rect.height() > 0:
            self.image.hide()
            self.contours.hide()
            return
        size = vb.size()
        px_w = max(1.0, size.width()) * rect.width() / view.width()
        px_h = max(1.0, size.height()) * rect.height() / view.height()
        bins = (int(np.clip(px_w / CELL_PX, 8, MAX_CELLS)), int(np.clip(px_h / CELL_PX, 8, MAX_CELLS)))
        box = (rect.left(), rect.right(), rect.top(), rect.bottom())
        key = (self._generation, tuple(round(v, 12) for v in box), bins)
        self._ask(cloud.positions(), box, bins, SIGMA, key)

    def _drop(self) -> None:
        if self.computation is not None:
            self._forget()
        self.image.hide()
        self.contours.hide()

    # -- drawing -----------------------------------------------------------------------
    def _on_finished(self, result: DensityMap) -> None:
        key = result.grid.key if isinstance(result, DensityMap) else None
        if not self.shown or not isinstance(key, tuple) or key[:1] != (self._generation,):
            return  # a map of an older cloud never lands
        g = result.grid
        self.image.setImage(g.counts.astype(np.float32), levels=(0.0, g.display_max), autoLevels=False)
        self.image.setRect(QRectF(g.x0, g.y0, g.x1 - g.x0, g.y1 - g.y0))
        segs = np.concatenate(result.contours) if result.contours else np.zeros((0, 2, 2))
        pts = segs.reshape(-1, 2)
        self.contours.setData(pts[:, 0], pts[:, 1])
        self.image.show()
        self.contours.setVisible(len(pts) > 0)
        self.drawn.emit()


def _data_rect(cloud) -> QRectF | None:
    """The rectangle of the cloud's finite points (view coordinates), or None."""
    lo = cloud.dataBounds(0)
    hi = cloud.dataBounds(1)
    if lo[0] is None or hi[0] is None:
        return None
    return QRectF(lo[0], hi[0], lo[1] - lo[0], hi[1] - hi[0])
