"""A plot's grid (explorer/ui/common/plot_grid.py): pyqtgraph's grid as it
looked, in opaque lines under the data."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QImage, QPainter

from explorer.ui.common.plot_grid import GRID_Z, show_grid
from explorer.ui.style import plot_colors


def _plot(qtbot, grid) -> pg.PlotWidget:
    w = pg.PlotWidget(background=plot_colors()[0], enableMenu=False)
    qtbot.addWidget(w)
    w.resize(420, 300)
    plot = w.getPlotItem()
    plot.setXRange(0, 10, padding=0)
    plot.setYRange(0, 10, padding=0)
    grid(plot)
    w.show()
    qtbot.waitExposed(w)
    return w


def _pixels(w: pg.PlotWidget) -> np.ndarray:
    image = QImage(w.size(), QImage.Format_RGB32)
    painter = QPainter(image)
    w.render(painter)
    painter.end()
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.width(), 4)[..., :3].astype(int)


def test_the_grid_looks_as_pyqtgraphs_with_every_line_opaque(qtbot):
    theirs = _plot(qtbot, lambda plot: plot.showGrid(x=True, y=True, alpha=0.12))
    ours = _plot(qtbot, show_grid)
    a, b = _pixels(theirs), _pixels(ours)
    background = np.array([int(c) for c in bytes.fromhex(plot_colors()[0][1:])][::-1])  # BGR
    lines = (np.abs(a - background).sum(axis=2) > 0)
    assert lines.sum() > 1000  # a grid was drawn (and tick labels)
    # the same pixels within the rounding of a blend, but where two lines cross: two translucent
    # lines darken each other there, two opaque ones do not (a point, lighter)
    apart = np.abs(a - b).max(axis=2) > 2
    assert apart.mean() < 0.01 and ((b - a)[apart] > 0).all()
    for name in ("left", "bottom"):
        axis = ours.getPlotItem().getAxis(name)
        scratch = QImage(10, 10, QImage.Format_RGB32)
        painter = QPainter(scratch)
        _axis_spec, ticks, _texts = axis.generateDrawSpecs(painter)
        painter.end()
        assert ticks and all(pen.color().alpha() == 255 for pen, _p1, _p2 in ticks)
        assert axis.zValue() == GRID_Z < ours.getPlotItem().vb.zValue()


def test_the_data_is_drawn_over_the_grid(qtbot):
    """A bar across a grid line hides it (a translucent grid over the data tinted the bar)."""
    colour = (200, 30, 30)
    ws = []
    for grid in (lambda plot: plot.showGrid(x=True, y=True, alpha=0.5), lambda plot: show_grid(plot, alpha=0.5)):
        w = _plot(qtbot, grid)
        bar = pg.BarGraphItem(x=[5.0], height=[10.0], width=4.0, brush=pg.mkBrush(*colour), pen=None)
        w.getPlotItem().addItem(bar)
        ws.append(w)
    theirs, ours = (_pixels(w) for w in ws)
    rect = ws[1].getPlotItem().vb.sceneBoundingRect()  # the view in widget pixels; the bar spans x 3..7
    col = int(rect.left() + rect.width() * 0.5)  # x = 5: a grid line of the 0..10 range, inside the bar
    rows = slice(int(rect.top()) + 5, int(rect.bottom()) - 5)
    bgr = np.array(colour[::-1])
    assert (ours[rows, col] == bgr).all()  # the bar, all the way down that line
    assert not (theirs[rows, col] == bgr).all()  # pyqtgraph's grid line crosses it
