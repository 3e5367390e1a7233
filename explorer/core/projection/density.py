"""The density of a 2D layout: a smoothed histogram over a rectangle, the
levels that enclose given shares of its mass, the contour lines at those
levels and the grid's peaks.

It is what turns 30,000 to 256,000 points that draw as one blob into a map
(issue 15). Pure numpy, no Qt; :func:`density_job` is the generator a worker
runs when the layout changes or the view settles on a new range.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DensityGrid", "DensityMap", "histogram", "density_grid", "mass_levels", "contour_segments", "grid_peaks",
           "density_job", "MASS_SHARES"]

#: the contours enclose these shares of the points in range (the densest regions first)
MASS_SHARES = (0.9, 0.7, 0.5, 0.3, 0.1)
#: the image's top colour: this quantile of the occupied cells (a few very dense cells do not wash out the rest)
DISPLAY_QUANTILE = 0.995


@dataclass(frozen=True, eq=False)
class DensityGrid:
    """Points per cell of a regular grid, smoothed.

    Attributes
    ----------
    counts : np.ndarray
        (ny, nx) float64, row 0 at ``y0``; sums to ``n_in_range`` (smoothing moves mass, never loses it).
    x0, x1, y0, y1 : float
        The rectangle the grid covers (view coordinates).
    n_in_range : int
        Points inside the rectangle.
    levels : tuple[float, ...]
        Contour levels, increasing: ``levels[k]`` encloses ``shares[k]`` of the mass.
    shares : tuple[float, ...]
        The mass share each level encloses, decreasing.
    display_max : float
        The cell value the image shows in its top colour.
    key : object
        Whatever the caller passed to say what the grid is for.
    """

    counts: np.ndarray
    x0: float
    x1: float
    y0: float
    y1: float
    n_in_range: int
    levels: tuple[float, ...]
    shares: tuple[float, ...]
    display_max: float
    key: object = None

    @property
    def cell(self) -> tuple[float, float]:
        """(width, height) of a cell."""
        ny, nx = self.counts.shape
        return (self.x1 - self.x0) / nx, (self.y1 - self.y0) / ny

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """x (nx,) and y (ny,) of the cells' centres."""
        ny, nx = self.counts.shape
        w, h = self.cell
        return self.x0 + (np.arange(nx) + 0.5) * w, self.y0 + (np.arange(ny) + 0.5) * h


def _fold_kernel(n: int, sigma: float) -> np.ndarray:
    """(n, n) matrix of a Gaussian blur along one axis whose columns each sum to 1:
    what would leave the grid is folded back (mirrored) at the edge it crosses."""
    sigma = max(float(sigma), 1e-6)  # narrower is the same no-blur, without overflowing offsets / sigma
    radius = max(1, int(np.ceil(3 * sigma)))
    offsets = np.arange(-radius, radius + 1)
    w = np.exp(-0.5 * (offsets / sigma) ** 2)
    w /= w.sum()
    k = np.zeros((n, n))
    cols = np.arange(n)
    for off, weight in zip(offsets, w):
        rows = cols + off
        rows = np.where(rows < 0, -rows - 1, rows)  # mirror about the edges
        rows = np.where(rows >= n, 2 * n - rows - 1, rows)
        rows = np.clip(rows, 0, n - 1)  # kernels wider than the grid
        np.add.at(k, (rows, cols), weight)
    return k


def histogram(xy: np.ndarray, rect: Sequence[float], bins: tuple[int, int]) -> tuple[np.ndarray, int]:
    """Points per cell (ny, nx) of ``rect`` = (x0, x1, y0, y1), and the number inside."""
    x0, x1, y0, y1 = (float(v) for v in rect)
    nx, ny = int(bins[0]), int(bins[1])
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    x, y = xy[:, 0], xy[:, 1]
    inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    ix = np.minimum(((x[inside] - x0) * (nx / (x1 - x0))).astype(np.int64), nx - 1)
    iy = np.minimum(((y[inside] - y0) * (ny / (y1 - y0))).astype(np.int64), ny - 1)
    counts = np.bincount(iy * nx + ix, minlength=nx * ny).reshape(ny, nx).astype(np.float64)
    return counts, int(np.count_nonzero(inside))


def mass_levels(counts: np.ndarray, shares: Sequence[float] = MASS_SHARES) -> tuple[float, ...]:
    """Cell values whose super-level sets hold ``shares`` of the mass (highest-density regions).

    Returns them increasing (for decreasing shares); equal levels are kept once.
    """
    v = np.sort(np.asarray(counts, np.float64).ravel())[::-1]
    total = v.sum()
    if not total > 0:
        return ()
    cum = np.cumsum(v)
    out: list[float] = []
    for share in sorted(shares, reverse=True):
        k = int(np.searchsorted(cum, share * total))
        level = float(v[min(k, len(v) - 1)])
        if level > 0 and (not out or level > out[-1]):
            out.append(level)
    return tuple(out)


def density_grid(xy: np.ndarray, rect: Sequence[float], bins: tuple[int, int] = (128, 128), sigma: float = 1.2,
                 shares: Sequence[float] = MASS_SHARES, key: object = None) -> DensityGrid:
    """The smoothed density of the points ``xy`` (n, 2) over ``rect`` = (x0, x1, y0, y1).

    ``bins`` = (nx, ny) cells; ``sigma`` is the Gaussian's width in cells (0: none).
    Raises ValueError for an empty rectangle or fewer than 2 cells a side.
    """
    x0, x1, y0, y1 = (float(v) for v in rect)
    if not (np.isfinite([x0, x1, y0, y1]).all() and x1 > x0 and y1 > y0):
        raise ValueError("the density needs a rectangle of positive width and height")
    nx, ny = int(bins[0]), int(bins[1])
    if nx < 2 or ny < 2:
        raise ValueError("the density needs at least 2 x 2 cells")
    counts, n = histogram(xy, (x0, x1, y0, y1), (nx, ny))
    if sigma > 0 and n:
        counts = _fold_kernel(ny, sigma) @ counts @ _fold_kernel(nx, sigma).T
    occupied = counts[counts > 1e-9]
    top = float(np.quantile(occupied, DISPLAY_QUANTILE)) if len(occupied) else 1.0
    return DensityGrid(counts, x0, x1, y0, y1, n, mass_levels(counts, shares),
                       tuple(sorted(shares, reverse=True)), max(top, 1e-9), key)


def grid_peaks(counts: np.ndarray, min_share: float = 0.1) -> list[tuple[int, int]]:
    """(row, column) of the cells higher than their 8 neighbours and at least ``min_share``
    of the highest cell, highest first."""
    c = np.asarray(counts, np.float64)
    if c.size == 0 or not c.max() > 0:
        return []
    pad = np.pad(c, 1, constant_values=-np.inf)
    ny, nx = c.shape
    is_peak = c >= min_share * c.max()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                other = pad[1 + dy:1 + dy + ny, 1 + dx:1 + dx + nx]
                # strictly above the earlier neighbours, at least the later ones: a plateau counts once
                is_peak &= (c > other) if (dy, dx) < (0, 0) else (c >= other)
    rows, cols = np.nonzero(is_peak)
    order = np.argsort(-c[rows, cols], kind="stable")
    return [(int(rows[k]), int(cols[k])) for k in order]


def contour_segments(counts: np.ndarray, level: float) -> np.ndarray:
    """Line segments (m, 2, 2) of the contour at ``level`` (marching squares), in cell
    coordinates: (column, row) of the cells' centres, so (0, 0) is the first cell's centre."""
    z = np.asarray(counts, np.float64)
    if z.shape[0] < 2 or z.shape[1] < 2:
        return np.zeros((0, 2, 2))
    a, b, c, d = z[:-1, :-1], z[:-1, 1:], z[1:, 1:], z[1:, :-1]  # corners counter-clockwise from (r, c)
    ny, nx = a.shape
    r, q = np.meshgrid(np.arange(ny, dtype=np.float64), np.arange(nx, dtype=np.float64), indexing="ij")
    # the four edges: corner from, corner to, where each corner sits (column, row)
    edges = ((a, b, (q, r), (q + 1, r)), (b, c, (q + 1, r), (q + 1, r + 1)),
             (d, c, (q, r + 1), (q + 1, r + 1)), (a, d, (q, r), (q, r + 1)))
    cross, pts = [], []
    for v0, v1, p0, p1 in edges:
        hit = (v0 >= level) != (v1 >= level)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(hit, (level - v0) / (v1 - v0), 0.0)
        cross.append(hit)
        pts.append(np.stack([p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1])], axis=-1))
    cross = np.stack(cross, axis=-1)  # (ny, nx, 4)
    pts = np.stack(pts, axis=-2)  # (ny, nx, 4, 2)
    n_cross = cross.sum(axis=-1)
    out = []
    two = n_cross == 2
    if two.any():
        first = np.argmax(cross[two], axis=-1)
        last = 3 - np.argmax(cross[two][:, ::-1], axis=-1)
        p = pts[two]
        idx = np.arange(len(p))
        out.append(np.stack([p[idx, first], p[idx, last]], axis=1))
    four = n_cross == 4
    if four.any():
        p = pts[four]
        centre = (a[four] + b[four] + c[four] + d[four]) / 4
        # the corners on the centre's other side are cut off alone
        bd_alone = (centre >= level) == (a[four] >= level)
        pairs_bd = np.stack([np.stack([p[:, 0], p[:, 1]], 1), np.stack([p[:, 2], p[:, 3]], 1)], 1)
        pairs_ac = np.stack([np.stack([p[:, 0], p[:, 3]], 1), np.stack([p[:, 1], p[:, 2]], 1)], 1)
        out.append(np.where(bd_alone[:, None, None, None], pairs_bd, pairs_ac).reshape(-1, 2, 2))
    return np.concatenate(out) if out else np.zeros((0, 2, 2))


@dataclass(frozen=True, eq=False)
class DensityMap:
    """A density grid with its contour lines in view coordinates.

    ``contours[k]`` is (m, 2, 2): the segments of the contour at ``grid.levels[k]``.
    """

    grid: DensityGrid
    contours: tuple[np.ndarray, ...]


def density_job(xy: np.ndarray, rect: Sequence[float], bins: tuple[int, int], sigma: float = 1.2,
                key: object = None) -> Iterator[tuple[float, str]]:
    """The density map of ``xy`` over ``rect`` (a generator for a worker); returns a :class:`DensityMap`."""
    yield 0.0, "Measuring the density…"
    grid = density_grid(xy, rect, bins, sigma, key=key)
    yield 0.6, "Tracing the contours…"
    w, h = grid.cell
    contours = []
    for level in grid.levels:
        seg = contour_segments(grid.counts, level)
        seg[..., 0] = grid.x0 + (seg[..., 0] + 0.5) * w
        seg[..., 1] = grid.y0 + (seg[..., 1] + 0.5) * h
        contours.append(seg)
    return DensityMap(grid, tuple(contours))
