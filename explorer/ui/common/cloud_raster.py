"""Points rasterised in numpy: the cloud's frame when so many points are on
screen that handing each to Qt as a pixmap fragment costs more than a frame
(256,000 points: about 30 ms in Qt's raster engine, against a few ms here).

Each colour group's dots are counted per device pixel (``numpy.bincount``),
spread over the dot's footprint, and composited as that many translucent
dots of the group's colour would be: opacity ``1 - (1 - a) ** count``,
groups over one another in order. Points snap to whole pixels, which no one
sees when there are more points than pixels.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rasterize", "footprint"]


def footprint(size: float) -> list[tuple[int, int]]:
    """Pixel offsets (dy, dx) a dot of diameter ``size`` pixels covers, around its own pixel."""
    r = max(0.0, size / 2)
    k = int(np.floor(r))
    return [(dy, dx) for dy in range(-k, k + 1) for dx in range(-k, k + 1)
            if dy * dy + dx * dx <= r * r + 0.5] or [(0, 0)]


def rasterize(px: np.ndarray, py: np.ndarray, group: np.ndarray, rgba: np.ndarray, width: int, height: int,
              size: float) -> np.ndarray:
    """An image (height, width, 4) uint8 of the points, premultiplied B, G, R, A (QImage's
    ARGB32_Premultiplied on little-endian machines).

    ``px``, ``py`` are device pixel positions, ``group`` (sorted, as the cloud keeps it)
    indexes ``rgba`` (k, 4) straight colours in 0..1.
    """
    width, height = int(width), int(height)
    offsets = footprint(size)
    pad = max(max(abs(dy), abs(dx)) for dy, dx in offsets)
    border = pad + 1  # points off the image pile up in a border the dots cannot reach in from
    bw, bh = width + 2 * border, height + 2 * border
    ix = np.clip(px, -border, width + border - 1).astype(np.int32)  # finite positions (the caller's)
    iy = np.clip(py, -border, height + border - 1).astype(np.int32)
    flat = iy + border
    flat *= bw
    flat += ix
    flat += border
    canvas = np.zeros((height, width, 4), np.uint8)  # premultiplied B, G, R, A
    first = True
    bounds = np.searchsorted(group, np.arange(len(rgba) + 1))
    for k in range(len(rgba)):
        lo, hi = bounds[k], bounds[k + 1]
        a = float(rgba[k, 3])
        if hi <= lo or a <= 0:
            continue
        counts = np.bincount(flat[lo:hi], minlength=bw * bh).astype(np.int32).reshape(bh, bw)
        covered = _spread(counts, offsets, border, width, height)
        np.minimum(covered, 255, out=covered)
        # a pixel under c dots of opacity a lets (1 - a) ** c through: premultiplied LUTs by c
        through = np.power(np.float32(1 - a), np.arange(256, dtype=np.float32)) if a < 1 else \
            np.r_[np.float32(1), np.zeros(255, np.float32)]
        colour = np.array([rgba[k, 2], rgba[k, 1], rgba[k, 0], 1.0], np.float32)
        lut = np.floor(255 * (1 - through)[:, None] * colour + 0.5).astype(np.uint8)
        src = lut.view(np.uint32).reshape(-1)[covered].view(np.uint8).reshape(height, width, 4)
        if first:  # nothing under it yet
            canvas = src
            first = False
        else:  # over what earlier groups drew
            under = canvas * through[covered][..., None]
            canvas = np.minimum(under + src + 0.5, 255).astype(np.uint8)
    return canvas


def _spread(counts: np.ndarray, offsets: list[tuple[int, int]], border: int, width: int,
            height: int) -> np.ndarray:
    """Dots covering each pixel: ``counts`` (with ``border``) summed over the footprint's offsets."""
    k = max(max(abs(dy), abs(dx)) for dy, dx in offsets)
    if len(offsets) == (2 * k + 1) ** 2:  # a square: a row of sums, then a column of them
        rows = np.zeros((height + 2 * k, width), np.int32)
        for dx in range(-k, k + 1):
            rows += counts[border - k:border + height + k, border - dx:border - dx + width]
        out = np.zeros((height, width), np.int32)
        for dy in range(-k, k + 1):
            out += rows[k - dy:k - dy + height]
        return out
    out = np.zeros((height, width), np.int32)
    for dy, dx in offsets:
        out += counts[border - dy:border - dy + height, border - dx:border - dx + width]
    return out

