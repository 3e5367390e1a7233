"""pyqtgraph's axis layout, computed without its per-tick overhead.

Every fresh paint of a chart (a resize, a tab shown, a new model, a step of
the tour) lays out each axis again: ``AxisItem.generateDrawSpecs`` places the
ticks and measures the labels. pyqtgraph's own takes 1.3-3.8 ms an axis in a
real window (a ``Point`` made per tick end, a painter text measurement per
candidate label, the axis's bounding rect asked again per label), and a
1920x1080 resize of the Matrix tab lays out eleven axes: about a quarter of
the chart painting the window did in the monkey's stalls over 100 ms.

:func:`draw_specs` returns the same specs (the same pens, points, rects and
strings, in the same order) from the same arithmetic, with plain ``QPointF``
ends, the label sizes remembered per font and text, and the bounding rect
asked once. :func:`install` makes it the method of every ``pg.AxisItem``
(subclasses that override it call it through ``super()``); the tests compare
it with pyqtgraph's own on many axes, so that a pyqtgraph that lays out axes
differently is seen, not drawn wrong.
"""

from __future__ import annotations

import bisect
import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

__all__ = ["draw_specs", "install", "original_draw_specs", "original_tick_values", "tick_values"]

#: pyqtgraph's own method, kept to compare with (and to put back)
original_draw_specs = pg.AxisItem.generateDrawSpecs
original_tick_values = pg.AxisItem.tickValues

#: label sizes (width, height * 0.8) per (font, kerning, device resolution, text): axis labels repeat
#: ("0", "1,000", "0.5") across resizes and charts. Bounded: cleared when it grows past this
_SIZE_LIMIT = 20_000
_sizes: dict[tuple, tuple[float, float]] = {}

_MEASURE_BOX = QRectF(0, 0, 100, 100)

_LEFT, _RIGHT, _TOP, _BOTTOM = "left", "right", "top", "bottom"
_FLAGS = {
    _LEFT: Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    _RIGHT: Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextDontClip,
    _TOP: Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom | Qt.TextFlag.TextDontClip,
    _BOTTOM: Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextDontClip,
}


def install() -> None:
    """Every ``pg.AxisItem`` lays itself out with :func:`draw_specs` and :func:`tick_values`."""
    pg.AxisItem.generateDrawSpecs = draw_specs
    pg.AxisItem.tickValues = tick_values


def tick_values(self: pg.AxisItem, low: float, high: float, size: float) -> list:
    """``pg.AxisItem.tickValues``: ``[(spacing, values), ...]`` a level at a time, with the
    values of a level that fall within 1% of its spacing of a coarser level's dropped. The same
    floats from the same arithmetic, in plain Python (numpy's per-call overhead was most of it
    for a few dozen ticks)."""
    low, high = sorted((low, high))
    low *= self.scale
    high *= self.scale
    ticks = []
    taken: list[float] = []  # the values of the coarser levels, sorted
    for spacing, offset in self.tickSpacing(low, high, size):
        start = (math.ceil((low - offset) / spacing) * spacing) + offset
        tol = spacing / self.scale * 0.01
        kept = []
        for i in range(int((high - start) / spacing) + 1):
            v = (i * spacing + start) / self.scale
            at = bisect.bisect_left(taken, v)
            if (at < len(taken) and abs(taken[at] - v) <= tol) or (at > 0 and abs(taken[at - 1] - v) <= tol):
                continue
            kept.append(v)
        for v in kept:
            bisect.insort(taken, v)
        ticks.append((spacing / self.scale, kept))
    if self.logMode:
        return self.logTickValues(low, high, size, ticks)
    return ticks


def _label_size(p: QPainter, key: tuple, text: str) -> tuple[float, float]:
    size = _sizes.get((key, text))
    if size is None:
        br = p.boundingRect(_MEASURE_BOX, Qt.AlignmentFlag.AlignCenter, text)
        size = (br.width(), br.height() * 0.8)  # pyqtgraph's: "boundingRect is usually just a bit too large"
        if len(_sizes) >= _SIZE_LIMIT:
            _sizes.clear()
        _sizes[(key, text)] = size
    return size


def _pens(axis: pg.AxisItem) -> dict:
    """The axis's pens as pyqtgraph resolves them (``pen()``, ``tickPen()``), made once per pen
    the axis is given: ``mkPen`` per level per layout was a twentieth of a resize of the Lookup tab.
    Kept on the axis with the pens they came from (``setPen`` and ``setTickPen`` make new ones)."""
    pen, tick_pen, foreground = axis._pen, axis._tickPen, pg.getConfigOption("foreground")
    pens = axis.__dict__.get("_quick_pens")
    if pens is None or pens["pen"] is not pen or pens["tick_pen"] is not tick_pen or pens["foreground"] != foreground:
        pens = {"pen": pen, "tick_pen": tick_pen, "foreground": foreground, "axis": axis.pen(), "tick": axis.tickPen()}
        axis.__dict__["_quick_pens"] = pens
    return pens


def _tick_pen(axis: pg.AxisItem, level: int, ticks: int, length_px: float) -> QPen:
    alpha = axis.style["tickAlpha"]
    if alpha is None:
        alpha = 255 / (level + 1)
        if axis.grid is not False:
            alpha *= axis.grid / 255. * pg.functions.clip_scalar((0.05 * length_px / (ticks + 1)), 0., 1.)
    elif isinstance(alpha, float):
        alpha = min(255, max(0, int(round(alpha * 255))))
    elif isinstance(alpha, int):
        if alpha > 255 or alpha < 0:
            raise ValueError("lineAlpha should be [0..255]")
    else:
        raise TypeError("Line Alpha should be of type None, float or int")
    pens = _pens(axis)
    pen = pens.get(int(alpha))
    if pen is None:
        pen = pens["tick"]
        if pen.brush().style() == Qt.BrushStyle.SolidPattern:  # only a plain colour is made translucent
            pen = QPen(pen)
            color = QColor(pen.color())
            color.setAlpha(int(alpha))
            pen.setColor(color)
        pens[int(alpha)] = pen
    return pen


def draw_specs(self: pg.AxisItem, p: QPainter):  # noqa: C901, PLR0912, PLR0915 (one layout, as pyqtgraph's)
    """``(axisSpec, tickSpecs, textSpecs)`` for ``self`` drawn with ``p``, as
    ``pg.AxisItem.generateDrawSpecs`` returns them; None when the axis has no length."""
    style = self.style
    if style["tickFont"] is not None:
        p.setFont(style["tickFont"])
    bounds = self.mapRectFromParent(self.geometry())
    view = self.linkedView()
    tick_bounds = bounds if view is None or self.grid is False else view.mapRectToItem(self, view.boundingRect())

    orientation = self.orientation
    if orientation == _LEFT:
        span = [bounds.topRight() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(-1.0, 1.0)]
        tick_start, tick_stop, tick_dir, axis = tick_bounds.right(), bounds.right(), -1, 0
    elif orientation == _RIGHT:
        span = [bounds.topLeft() + QPointF(1.0, -1.0), bounds.bottomLeft() + QPointF(1.0, 1.0)]
        tick_start, tick_stop, tick_dir, axis = tick_bounds.left(), bounds.left(), 1, 0
    elif orientation == _TOP:
        span = [bounds.bottomLeft() + QPointF(-1.0, -1.0), bounds.bottomRight() + QPointF(1.0, -1.0)]
        tick_start, tick_stop, tick_dir, axis = tick_bounds.bottom(), bounds.bottom(), -1, 1
    elif orientation == _BOTTOM:
        span = [bounds.topLeft() + QPointF(-1.0, 1.0), bounds.topRight() + QPointF(1.0, 1.0)]
        tick_start, tick_stop, tick_dir, axis = tick_bounds.top(), bounds.top(), 1, 1
    else:
        raise ValueError("self.orientation must be in {'left', 'right', 'top', 'bottom'}")
    ends = [self.mapToDevice(point) for point in span]
    if None in ends:
        return None
    along = ends[1] - ends[0]
    length_px = math.hypot(along.x(), along.y())  # as pg.Point.length
    if length_px == 0:
        return None

    if self._tickLevels is None:
        levels = self.tickValues(self.range[0], self.range[1], length_px)
        given = None
    else:
        levels = [(None, [value for value, _text in level]) for level in self._tickLevels]
        given = [[text for _value, text in level] for level in self._tickLevels]

    low, high = self.range[0], self.range[1]
    dif = high - low
    if dif == 0:
        scale, offset = 1, 0
    elif axis == 0:
        scale = -bounds.height() / dif
        offset = low * scale - bounds.height()
    else:
        scale = bounds.width() / dif
        offset = low * scale
    x_min, x_max = sorted((low * scale - offset, high * scale - offset))

    positions: list[list] = []
    tick_specs = []
    for i, (_spacing, values) in enumerate(levels):
        placed = []
        positions.append(placed)
        length = style["tickLength"] / ((i * 0.5) + 1.0)
        pen = _tick_pen(self, i, len(values), length_px)
        stop = tick_stop if self.grid is not False else tick_stop + length * tick_dir
        for v in values:
            x = (v * scale) - offset
            if x < x_min or x > x_max:  # out of bounds: not drawn
                placed.append(None)
                continue
            placed.append(x)
            if axis == 0:
                tick_specs.append((pen, QPointF(tick_start, x), QPointF(stop, x)))
            else:
                tick_specs.append((pen, QPointF(x, tick_start), QPointF(x, stop)))

    # the axis line stops at its first and last ticks, where the style asks
    for end, (stop_here, outer, inner) in enumerate(zip(style["stopAxisAtTick"], (min, max), (max, min))):
        if stop_here is True:
            tick = outer(map(outer, positions))
            point = span[end]
            if axis == 0:
                point.setY(inner(point.y(), tick))
            else:
                point.setX(inner(point.x(), tick))
    axis_spec = (_pens(self)["axis"], span[0], span[1])

    text_specs: list = []
    if not style["showValues"]:
        return axis_spec, tick_specs, text_specs

    device = p.device()
    font = p.font()  # QFont.key() leaves out kerning (and feature settings): the whole description
    dpi = (device.logicalDpiX(), device.logicalDpiY()) if device else (0, 0)
    key = (font.toString(), font.kerning(), dpi)
    text_offset = style["tickTextOffset"][axis]
    offset_px = max(0, style["tickLength"]) + text_offset
    flags = _FLAGS[orientation]
    box = self.boundingRect()
    measured: list[tuple[float, float]] = []  # every label measured so far, all levels
    last_size2 = 0
    for i in range(min(len(levels), style["maxTextLevel"] + 1)):
        if given is None:
            spacing, values = levels[i]
            strings = self.tickStrings(values, self.autoSIPrefixScale * self.scale, spacing)
        else:
            strings = given[i]
        if len(strings) == 0:
            continue
        placed = positions[i]
        sizes = []
        for j, s in enumerate(strings):
            if placed[j] is None:  # a tick out of bounds has no label
                sizes.append(None)
                continue
            size = _label_size(p, key, s)
            sizes.append(size)
            measured.append(size)
        if measured:
            if axis == 0:
                size1 = sum(h for _w, h in measured)
                size2 = max(w for w, _h in measured)
            else:
                size1 = sum(w for w, _h in measured)
                size2 = max(h for _w, h in measured)
        else:
            size1 = size2 = 0
        if i > 0:  # the top level is always drawn; a crowded lower one ends the labels
            fill = float(size1) / length_px
            if any(len(text_specs) >= n and fill >= limit for n, limit in style["textFillLimits"]):
                break
        last_size2 = size2
        for j, s in enumerate(strings):
            size = sizes[j]
            if size is None:
                continue
            x = placed[j]
            width, height = size
            if orientation == _LEFT:
                rect = QRectF(tick_stop - offset_px - width, x - (height / 2), width, height)
            elif orientation == _RIGHT:
                rect = QRectF(tick_stop + offset_px, x - (height / 2), width, height)
            elif orientation == _TOP:
                rect = QRectF(x - width / 2., tick_stop - offset_px - height, width, height)
            else:
                rect = QRectF(x - width / 2., tick_stop + offset_px, width, height)
            if box & rect != rect:  # not wholly inside the axis: not drawn
                continue
            text_specs.append((rect, flags, s))
    self._updateMaxTextSize(last_size2)
    return axis_spec, tick_specs, text_specs
