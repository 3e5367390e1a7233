"""Which points a lasso drawn on the projection encloses: an even-odd
ray cast over all points at once (vectorised over the points, a loop over
the polygon's edges). No Qt here."""

from __future__ import annotations

import numpy as np

__all__ = ["inside_polygon"]


def inside_polygon(xy: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """(n,) bool: which points ``xy`` (n, 2) lie inside ``polygon`` (m, 2), the
    path closed from its last vertex back to its first (even-odd rule, so a
    path that crosses itself leaves the twice-enclosed part out). Fewer than
    three vertices enclose nothing; non-finite points are never inside."""
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    poly = np.asarray(polygon, np.float64).reshape(-1, 2)
    poly = poly[np.isfinite(poly).all(axis=1)]
    inside = np.zeros(len(xy), bool)
    if len(poly) < 3 or not len(xy):
        return inside
    x, y = xy[:, 0], xy[:, 1]
    x0, y0 = poly[:, 0], poly[:, 1]
    x1, y1 = np.roll(x0, -1), np.roll(y0, -1)
    for ax, ay, bx, by in zip(x0, y0, x1, y1):
        crosses = (ay > y) != (by > y)  # the edge spans the point's height (a horizontal edge never does)
        if not crosses.any():
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            at = ax + (y - ay) * (bx - ax) / (by - ay)  # where the edge meets the point's horizontal line
        inside ^= crosses & (x < at)
    return inside & np.isfinite(xy).all(axis=1)
