"""What the 3D view draws, as plain arrays: the first three coordinates of
the state's projection (PC1-PC3 of the PCA, or a 3-component t-SNE/UMAP
layout), the 2D view's colours as RGBA floats, the axis titles, and the
screen-space picking of the nearest point. Nothing here needs OpenGL, so
the data path is tested on machines without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PySide6.QtGui import QColor

__all__ = ["Cloud3D", "why_not_3d", "cloud_3d", "rgba_of", "axis_titles_3d", "nearest_on_screen"]


@dataclass(frozen=True, eq=False)
class Cloud3D:
    """The point cloud of the 3D view.

    Attributes
    ----------
    ids : ndarray (n,) int64
        The projected token ids (the result's).
    pos : ndarray (n, 3) float32
        Their first three coordinates, as the core computed them.
    rgba : ndarray (n, 4) float32, 0..1
        Their colours: the 2D view's colour groups.
    size : float
        Point size in pixels.
    titles : tuple of 3 str
        The axes' titles (``PC1 · 9.8%`` or ``t-SNE 1``).
    """

    ids: np.ndarray
    pos: np.ndarray
    rgba: np.ndarray
    size: float
    titles: tuple[str, str, str]


def why_not_3d(result) -> str:
    """Why ``result`` cannot be drawn in 3D (empty when it can)."""
    if result is None:
        return ""
    if result.custom_axes:
        return f"Custom axes have {len(result.axis_names)} directions; 3D shows PCA, t-SNE or UMAP"
    if result.n_components < 3:
        return f"This layout has {result.n_components} dimensions; 3D needs three"
    return ""


def rgba_of(colours: Sequence[QColor]) -> np.ndarray:
    """(k, 4) float32 RGBA in 0..1 of the colours, alpha included."""
    return np.asarray([c.getRgbF() for c in colours], np.float32).reshape(-1, 4)


def axis_titles_3d(result) -> tuple[str, str, str]:
    """``PC1 · 12.3%`` (the component's share of the variance) for a PCA, ``t-SNE 1`` for a layout."""
    if result.linear:
        ev = np.asarray(result.explained, np.float64)
        return tuple(f"{result.axis_name(k)} · {100 * ev[k]:.1f}%" if k < len(ev) else result.axis_name(k)
                     for k in range(3))
    return tuple(f"{result.name} {k + 1}" for k in range(3))


def cloud_3d(result, group: np.ndarray, colours: Sequence[QColor], size: float) -> Cloud3D:
    """The 3D cloud of ``result``: its first three coordinates, coloured by
    ``group`` (n,) indexing ``colours`` (the 2D view's :func:`cloud_colours`).
    Raises ValueError when the result has fewer than three dimensions."""
    reason = why_not_3d(result)
    if reason:
        raise ValueError(reason)
    table = rgba_of(colours)
    group = np.asarray(group, np.int64)
    pos = np.ascontiguousarray(result.coords[:, :3], np.float32)
    return Cloud3D(np.asarray(result.ids, np.int64), pos, table[group], float(size), axis_titles_3d(result))


def nearest_on_screen(pos: np.ndarray, mvp: np.ndarray, width: float, height: float, x: float, y: float,
                      radius: float = 8.0) -> int:
    """Index of the point of ``pos`` (n, 3) drawn nearest to pixel (x, y), or -1.

    ``mvp`` (4, 4) maps a point to clip space (projection × view); pixels
    count from the top left of a ``width`` × ``height`` view. Only points
    in front of the camera and within ``radius`` pixels count; of two at
    the same distance on screen the nearer to the camera wins.
    """
    pos = np.asarray(pos, np.float64).reshape(-1, 3)
    if not len(pos) or width <= 0 or height <= 0:
        return -1
    m = np.asarray(mvp, np.float64)
    # clip space = mvp · (x, y, z, 1), row by row in plain products (the window's thread: no BLAS)
    x_c, y_c, w = (pos[:, 0] * m[k, 0] + pos[:, 1] * m[k, 1] + pos[:, 2] * m[k, 2] + m[k, 3] for k in (0, 1, 3))
    front = w > 1e-9
    safe = np.where(front, w, 1.0)
    sx = (x_c / safe + 1) * 0.5 * width
    sy = (1 - y_c / safe) * 0.5 * height
    d2 = np.where(front, (sx - x) ** 2 + (sy - y) ** 2, np.inf)
    close = np.flatnonzero(d2 <= radius * radius)
    if not len(close):
        return -1
    order = np.lexsort((w[close], np.round(d2[close], 1)))
    return int(close[order[0]])
