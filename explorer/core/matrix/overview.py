"""What the matrix view draws: an overview of the whole table and a band of
rows around the selected token, at full resolution. No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MatrixOverview", "matrix_overview", "iter_matrix_overview", "overview_row_step", "RowBand", "row_band",
           "color_limit"]

#: the overview never has more rows/columns than this
MAX_OVERVIEW_ROWS = 2048
MAX_OVERVIEW_COLS = 1024


@dataclass
class MatrixOverview:
    """A picture of E small enough to draw at once.

    Attributes
    ----------
    row_ids : ndarray (r,) int64
        Which table rows the image rows show (every ``row_step``-th row when
        the table is taller than :data:`MAX_OVERVIEW_ROWS`).
    image : ndarray (r, c) float32
        Values of those rows; columns are every ``col_step``-th column.
    row_step, col_step : int
    limit : float
        Symmetric colour limit (a high percentile of |E|) so one outlier does
        not wash the picture out.
    codes : ndarray (r, c) uint8
        The image as colour-map indices (:func:`color_codes`), computed with
        it off the GUI thread: an indexed image is drawn at once, where
        mapping 2 million floats through a colour map on the first paint
        held the window for 50-100 ms on the biggest tables.
    """

    row_ids: np.ndarray
    image: np.ndarray
    row_step: int
    col_step: int
    limit: float
    codes: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.codes is None:
            self.codes = color_codes(self.image, self.limit)


#: colour-map steps of :func:`color_codes`; the code after them marks NaN
CODE_STEPS = 255
NAN_CODE = 255


def color_codes(values: np.ndarray, limit: float) -> np.ndarray:
    """``values`` in [-limit, limit] as uint8 indices 0..254 into a colour map
    of :data:`CODE_STEPS` entries (0 is -limit, 127 is 0, 254 is +limit;
    values beyond are clipped, ±inf included), and NaN as :data:`NAN_CODE`."""
    lim = float(limit) if limit > 0 else 1.0
    with np.errstate(invalid="ignore"):
        scaled = (np.clip(values, -lim, lim) + lim) * ((CODE_STEPS - 1) / (2 * lim))
    codes = np.rint(np.nan_to_num(scaled, nan=0.0)).astype(np.uint8)
    codes[np.isnan(values)] = NAN_CODE
    return codes



def color_limit(values: np.ndarray, percentile: float = 99.5) -> float:
    finite = np.abs(values[np.isfinite(values)])
    if finite.size == 0:
        return 1.0
    lim = float(np.percentile(finite, percentile))
    return lim if lim > 0 else float(finite.max() or 1.0)


def overview_row_step(vocab_size: int) -> int:
    """Every how many rows the overview samples one (at most MAX_OVERVIEW_ROWS rows in all)."""
    return max(1, -(-int(vocab_size) // MAX_OVERVIEW_ROWS))


def iter_matrix_overview(table, chunk: int = 128):
    """Generator form of :func:`matrix_overview`: yields the fraction of rows
    read (so a worker can stop between chunks) and returns the overview."""
    v, d = table.vocab_size, table.dim
    row_step = overview_row_step(v)
    col_step = max(1, -(-d // MAX_OVERVIEW_COLS))
    ids = np.arange(0, v, row_step, dtype=np.int64)
    parts = []
    for start in range(0, len(ids), chunk):
        parts.append(table.rows(ids[start : start + chunk])[:, ::col_step])
        yield min(1.0, (start + chunk) / len(ids))
    rows = np.concatenate(parts) if parts else np.zeros((0, -(-d // col_step)), np.float32)
    return MatrixOverview(ids, np.ascontiguousarray(rows, np.float32), row_step, col_step, color_limit(rows))


def matrix_overview(table) -> MatrixOverview:
    """Sample rows (and columns) evenly so the whole table fits on screen.

    Every ``row_step``-th row and ``col_step``-th column, at most
    :data:`MAX_OVERVIEW_ROWS` x :data:`MAX_OVERVIEW_COLS`.
    """
    gen = iter_matrix_overview(table)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


@dataclass
class RowBand:
    """Consecutive rows around a centre row, every column up to a limit."""

    start: int
    image: np.ndarray  # (n, c) float32
    col_step: int

    @property
    def stop(self) -> int:
        return self.start + self.image.shape[0]


def row_band(table, centre: int, half: int = 24) -> RowBand:
    """Rows centre-half .. centre+half (clipped to the table)."""
    v = table.vocab_size
    n = min(v, 2 * half + 1)
    start = int(min(max(0, centre - half), v - n))
    col_step = max(1, -(-table.dim // MAX_OVERVIEW_COLS))
    rows = table.rows(np.arange(start, start + n))[:, ::col_step]
    return RowBand(start, np.ascontiguousarray(rows, np.float32), col_step)
