"""Where labels go: text boxes beside their points, in screen pixels, so that
no two overlap and none leaves the plot. No Qt here.

Greedy, in priority order (the selected token first, faint points last): a
label takes the first of its places that is inside the plot and free; a
label with no such place is left out. :func:`place_labels` tries four places
beside the point (above right, above left, below right, below left);
:func:`place_centred_labels` centres the box on its point (a class name on
its class's centre) or moves it by whole half widths and heights, nearest
first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PlacedLabel", "place_labels", "place_centred_labels"]


@dataclass(frozen=True)
class PlacedLabel:
    """A label's box, in the pixels the anchors were given in.

    Attributes
    ----------
    index : int
        The label's position in the candidates handed to :func:`place_labels`.
    left, top, width, height : float
        The box (y grows downwards, as on screen).
    dx, dy : float
        The box's top-left corner relative to its point, so that the box can
        follow the point while the view moves.
    """

    index: int
    left: float
    top: float
    width: float
    height: float
    dx: float
    dy: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height

    def overlaps(self, other: PlacedLabel) -> bool:
        """Whether the two boxes share any area (touching edges do not count)."""
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)


def place_labels(
    anchors: np.ndarray,
    sizes: np.ndarray,
    bounds: Sequence[float],
    gap: float = 5.0,
    lift: float = 2.0,
    limit: int | None = None,
) -> list[PlacedLabel]:
    """Place labels beside their points without overlaps.

    Parameters
    ----------
    anchors : ndarray (n, 2) float
        Each label's point (x, y) in screen pixels, highest priority first.
    sizes : ndarray (n, 2) float
        Each label's (width, height) in pixels.
    bounds : (left, top, right, bottom)
        The area labels must stay inside.
    gap : float
        Horizontal distance from the point to the box.
    lift : float
        Vertical distance from the point to the box.
    limit : int, optional
        Labels placed at most.

    Returns
    -------
    list of PlacedLabel
        In priority order; no two overlap, all inside ``bounds``.
    """
    return _place(anchors, sizes, bounds, limit,
                  lambda w, h: ((gap, -lift - h), (-gap - w, -lift - h), (gap, lift), (-gap - w, lift)))


def place_centred_labels(
    anchors: np.ndarray,
    sizes: np.ndarray,
    bounds: Sequence[float],
    reach: tuple[int, int] = (3, 4),
    spacing: float = 1.0,
    limit: int | None = None,
) -> list[PlacedLabel]:
    """Place labels centred on their points, or moved as little as they must not to overlap.

    ``anchors``, ``sizes``, ``bounds``, ``limit`` and the result are those of
    :func:`place_labels`; the boxes may move up to ``reach[0]`` half widths
    sideways and ``reach[1]`` heights up or down (a sideways step counts 2.5
    times a vertical one when choosing the nearest), each step ``spacing``
    pixels longer so that moved boxes keep apart.
    """
    rx, ry = reach
    steps = sorted(((i, j) for i in range(-rx, rx + 1) for j in range(-ry, ry + 1)),
                   key=lambda d: (d[0] * 2.5) ** 2 + d[1] ** 2)

    def places(w: float, h: float):
        sx, sy = w / 2 + spacing, h + spacing
        return [(i * sx - w / 2, j * sy - h / 2) for i, j in steps]

    return _place(anchors, sizes, bounds, limit, places)


def _place(anchors, sizes, bounds, limit, places) -> list[PlacedLabel]:
    """The greedy loop both placements share; ``places(w, h)`` gives a box's
    candidate (dx, dy) offsets from its point, best first."""
    anchors = np.asarray(anchors, np.float64).reshape(-1, 2)
    sizes = np.asarray(sizes, np.float64).reshape(-1, 2)
    if len(anchors) != len(sizes):
        raise ValueError("one size per anchor is needed")
    x0, y0, x1, y1 = (float(b) for b in bounds)
    n = len(anchors)
    limit = n if limit is None else min(n, int(limit))
    boxes = np.empty((max(limit, 1), 4))  # left, top, right, bottom of the placed ones
    placed: list[PlacedLabel] = []
    for i in range(n):
        if len(placed) >= limit:
            break
        (ax, ay), (w, h) = anchors[i], sizes[i]
        if not (np.isfinite(ax) and np.isfinite(ay)):
            continue
        for dx, dy in places(w, h):
            left, top = ax + dx, ay + dy
            right, bottom = left + w, top + h
            if left < x0 or top < y0 or right > x1 or bottom > y1:
                continue
            m = len(placed)
            b = boxes[:m]
            if m and np.any((b[:, 0] < right) & (left < b[:, 2]) & (b[:, 1] < bottom) & (top < b[:, 3])):
                continue
            boxes[m] = (left, top, right, bottom)
            placed.append(PlacedLabel(i, left, top, w, h, dx, dy))
            break
    return placed
