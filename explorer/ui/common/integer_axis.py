"""An axis of whole numbers (columns, token ids, rows): it never ticks 0.5."""

from __future__ import annotations

import pyqtgraph as pg

__all__ = ["CellAxis", "IntegerAxis"]


class IntegerAxis(pg.AxisItem):
    """Ticks only at whole numbers, labelled ``1,024`` (not ``1024.0`` or ``0.5``).

    pyqtgraph picks tick spacings of 1, 2 or 5 times a power of ten, which
    goes below one (0.5, 0.2) when few columns are in view, and to 2.5 for
    minor ticks: those levels are dropped, and one is kept at least.
    """

    def tickSpacing(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph's name)
        levels = [(spacing, 0.0) for spacing, _offset in super().tickSpacing(minVal, maxVal, size)
                  if spacing >= 1 and float(spacing).is_integer()]
        return levels or [(1.0, 0.0)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        return [f"{int(round(v * scale)):,}" for v in values]


class CellAxis(IntegerAxis):
    """Whole numbers at the centres of unit cells: cell k spans [k, k + 1]
    (an image drawn one pixel per column or row) and is ticked at k + 0.5
    with the label ``k``."""

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph's name)
        return [(spacing, [v + 0.5 for v in values])
                for spacing, values in super().tickValues(minVal - 0.5, maxVal - 0.5, size)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        return super().tickStrings([v - 0.5 for v in values], scale, spacing)
