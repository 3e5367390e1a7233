"""The axes' quick layout (explorer/ui/common/quick_axis.py) against pyqtgraph's own:
the same ticks, pens, label rects and strings, for every kind of axis the app draws
and ranges a user can reach."""

from __future__ import annotations

import math

import pyqtgraph as pg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QFont, QPainter, QPicture

from explorer.ui.common import quick_axis
from explorer.ui.common.integer_axis import CellAxis, IntegerAxis
from explorer.ui.common.plot_grid import show_grid


def _specs(axis: pg.AxisItem, method, tick_values):
    """``method(axis, painter)`` on a picture's painter, as ``AxisItem.paint`` calls it, with
    ``tick_values`` as every axis's ``tickValues`` meanwhile; and the label space it asked the
    axis for (what it passed to ``_updateMaxTextSize``)."""
    picture = QPicture()
    painter = QPainter(picture)
    if axis.style["tickFont"]:
        painter.setFont(axis.style["tickFont"])
    asked = []
    update = axis._updateMaxTextSize
    axis._updateMaxTextSize = lambda x: (asked.append(x), update(x))
    installed = pg.AxisItem.tickValues
    pg.AxisItem.tickValues = tick_values
    try:
        specs = method(axis, painter)
    finally:
        pg.AxisItem.tickValues = installed
        del axis._updateMaxTextSize
        painter.end()
    return specs, asked


def _plain(specs):
    """Specs as plain values (QPen and QPointF compare fuzzily or by identity)."""
    if specs is None:
        return None
    (pen, a, b), ticks, texts = specs

    def pen_(q):
        return (q.color().rgba(), q.widthF(), q.style(), q.isCosmetic())

    return ((pen_(pen), (a.x(), a.y()), (b.x(), b.y())),
            [(pen_(q), (p1.x(), p1.y()), (p2.x(), p2.y())) for q, p1, p2 in ticks],
            [((r.x(), r.y(), r.width(), r.height()), int(flags), s) for r, flags, s in texts])


AXES = {
    "plain": lambda name: pg.AxisItem(name),
    "integer": lambda name: IntegerAxis(name),
    "cell": lambda name: CellAxis(name),
}


def _plot(qtbot, kind: str, size: tuple[int, int]) -> pg.PlotWidget:
    w = pg.PlotWidget(enableMenu=False, axisItems={n: AXES[kind](n) for n in ("left", "bottom", "right", "top")})
    qtbot.addWidget(w)
    w.resize(*size)
    for name in ("right", "top"):
        w.getPlotItem().showAxis(name)
    w.show()
    qtbot.waitExposed(w)
    return w


def _same_layout(w: pg.PlotWidget, quick) -> int:
    """Compares the two layouts of every axis of ``w``; returns how many ticks were laid out."""
    ticks = 0
    for name in ("left", "bottom", "right", "top"):
        axis = w.getPlotItem().getAxis(name)
        # pyqtgraph's layout with pyqtgraph's tick values, against ours with ours
        theirs, their_space = _specs(axis, quick_axis.original_draw_specs, quick_axis.original_tick_values)
        ours, our_space = _specs(axis, quick, quick_axis.tick_values)
        assert _plain(ours) == _plain(theirs), name
        assert our_space == their_space, name
        ticks += len(theirs[1]) if theirs else 0
    return ticks


RANGES = [(0, 10), (-3.5, 2.25), (0, 50_257), (1e-9, 3e-9), (-1e12, 1e12), (7, 7.0000001), (5, 5), (0.5, 63.5)]


@pytest.mark.parametrize("kind", sorted(AXES))
def test_the_quick_layout_is_pyqtgraphs_for_every_axis_and_range(qtbot, kind):
    w = _plot(qtbot, kind, (520, 340))
    plot = w.getPlotItem()
    laid_out = 0
    for x0, x1 in RANGES:
        for y0, y1 in RANGES[::-1]:
            plot.setXRange(x0, x1, padding=0)
            plot.setYRange(y0, y1, padding=0)
            w.repaint()  # the geometry and ranges settled, as before a paint
            laid_out += _same_layout(w, quick_axis.draw_specs)
    assert laid_out > 500  # ticks were laid out, not only empty axes compared


def _unkerned(family: str, size: int) -> QFont:
    font = QFont(family, size)
    font.setKerning(False)
    return font


@pytest.mark.parametrize("size", [(1024, 700), (260, 90)])
def test_the_quick_layout_is_pyqtgraphs_with_a_grid_fonts_explicit_ticks_and_options(qtbot, size):
    w = _plot(qtbot, "plain", size)
    plot = w.getPlotItem()
    foreground = pg.getConfigOption("foreground")
    plot.setXRange(-20, 180, padding=0)
    plot.setYRange(0.001, 0.9, padding=0)
    variants = [
        lambda: show_grid(plot),  # the app's grid: wrapped layouts, translucent ticks made opaque
        lambda: plot.showGrid(x=True, y=True, alpha=0.3),
        lambda: [plot.getAxis(n).setStyle(tickFont=QFont("DejaVu Sans", 15)) for n in ("left", "bottom")],
        lambda: plot.getAxis("bottom").setTicks([[(0, "zero"), (100, "one hundred")], [(50, "fifty"), (400, "out")]]),
        lambda: plot.getAxis("bottom").setTicks([[(0, "AVAVAV"), (100, "WAVE To")]]),  # kerned pairs
        lambda: plot.getAxis("bottom").setStyle(tickFont=_unkerned("DejaVu Sans", 15)),  # the same, not kerned
        lambda: plot.getAxis("left").setStyle(tickAlpha=0.4, stopAxisAtTick=(True, True)),
        lambda: plot.getAxis("top").setStyle(tickAlpha=200, tickLength=-8, maxTextLevel=0),
        lambda: plot.getAxis("right").setStyle(showValues=False),
        # new pens (the quick layout keeps an axis's pens until it is given others)
        lambda: plot.getAxis("left").setPen("r"),
        lambda: plot.getAxis("left").setTickPen(color=(0, 160, 0), width=2),
        lambda: plot.getAxis("left").setTickPen(),  # back to the axis's pen
        lambda: pg.setConfigOption("foreground", "m"),  # the axes with no pen of their own follow it
        lambda: pg.setConfigOption("foreground", foreground),
        lambda: plot.invertY(True),
        lambda: plot.setLogMode(x=False, y=True),
    ]
    try:
        for variant in variants:
            variant()
            w.repaint()
            assert _same_layout(w, quick_axis.draw_specs) > 0
    finally:
        pg.setConfigOption("foreground", foreground)


@settings(max_examples=300, deadline=None)
@given(low=st.floats(-1e9, 1e9), width=st.floats(1e-6, 1e9), size=st.floats(1, 4000),
       scale=st.sampled_from([1.0, 0.001, 1000.0, 3.0]), kind=st.sampled_from(sorted(AXES)),
       flip=st.booleans())
def test_tick_values_are_pyqtgraphs(qapp, low, width, size, scale, kind, flip):
    high = low + width
    if not math.isfinite(high) or high == low:
        return
    axis = AXES[kind]("bottom")
    axis.setScale(scale)
    args = (high, low, size) if flip else (low, high, size)
    ticks = quick_axis.tick_values(axis, *args)
    assert ticks == quick_axis.original_tick_values(axis, *args)


def test_the_app_lays_its_axes_out_quickly(qapp):
    """What make_app (and the suite, as the app) installs on pyqtgraph as it comes: every axis, built
    in or the app's, uses it."""
    from explorer.ui.style import configure_pyqtgraph

    pg.AxisItem.generateDrawSpecs = quick_axis.original_draw_specs  # as pyqtgraph comes
    pg.AxisItem.tickValues = quick_axis.original_tick_values
    configure_pyqtgraph()
    assert pg.AxisItem.generateDrawSpecs is quick_axis.draw_specs
    assert pg.AxisItem.tickValues is quick_axis.tick_values
    for kind in AXES.values():  # the app's own axes inherit it
        assert kind("left").generateDrawSpecs.__func__ is quick_axis.draw_specs
