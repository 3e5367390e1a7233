"""Token labels along the axes of a heatmap, so that no two overlap: written
across the cells when every label fits its cell, else turned to run upwards
(one line of text per cell), and on every k-th cell only when even a line
of text is taller than a cell (:func:`label_step`, also the rule of the
matrix view's band rows and the Positions maps' rows). No Qt here: the view
measures the text.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["AxisLabelPlan", "plan_axis_labels", "label_step", "column_ticks"]


@dataclass(frozen=True)
class AxisLabelPlan:
    """How an axis writes its labels.

    Attributes
    ----------
    rotated : bool
        The labels run upwards, one line of text across each cell (a bottom axis
        whose labels are wider than its cells).
    step : int
        Every ``step``-th cell is labelled, from the first (1: all).
    extent : float
        Pixels the labels take away from the axis: the height of a bottom axis,
        the width of a left one.
    """

    rotated: bool
    step: int
    extent: float


def plan_axis_labels(widths: Sequence[float], cell_px: float, line_px: float, gap: float = 4.0,
                     along: bool = True) -> AxisLabelPlan:
    """Choose how to write labels of these widths on cells of ``cell_px``.

    Parameters
    ----------
    widths : sequence of float
        Each label's width in pixels (already shortened to the longest allowed).
    cell_px : float
        A cell's size along the axis, in pixels.
    line_px : float
        The height of a line of text.
    gap : float
        Free pixels between two neighbouring labels.
    along : bool
        True for a bottom axis (labels side by side along it, which may turn
        upwards); False for a left axis (labels stacked, one line per cell).

    Returns
    -------
    AxisLabelPlan
    """
    w = np.asarray(widths, np.float64)
    if not w.size:
        return AxisLabelPlan(False, 1, 0.0)
    longest = float(w.max())
    cell_px = max(float(cell_px), 1e-6)
    if along and longest + gap <= cell_px:
        return AxisLabelPlan(False, 1, float(line_px))
    return AxisLabelPlan(along, label_step(cell_px, line_px, gap), longest)


def label_step(cell_px: float, line_px: float, gap: float = 4.0) -> int:
    """Every how many cells a label goes when each takes one line of text across
    its cell: 1 while a line and the gap fit in a cell, else the fewest cells
    that hold them.

    >>> label_step(20.0, 12.0), label_step(5.0, 12.0), label_step(4.0, 12.0, gap=0.0)
    (1, 4, 3)
    """
    cell_px = max(float(cell_px), 1e-6)
    return max(1, math.ceil((float(line_px) + gap) / cell_px - 1e-9))


def column_ticks(dim: int, most: int = 6) -> list[int]:
    """Round column numbers 0, step, 2 step, ... up to ``dim`` (never past it), at most
    ``most`` of them; the step is 1, 2 or 5 times a power of ten.

    For an axis drawn wider than its ``dim`` columns (the matrix view leaves room right
    of the band for the selected token's name), where an automatic axis would number
    columns that do not exist (600 and 700 under a table of 576 columns).
    """
    dim = max(0, int(dim))
    steps = (m * 10 ** e for e in itertools.count() for m in (1, 2, 5))
    step = next(step for step in steps if dim // step + 1 <= most)
    return list(range(0, dim + 1, step))
