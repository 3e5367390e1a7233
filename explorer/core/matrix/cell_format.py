"""How numbers are written in the cells of a small matrix: one format for a
whole matrix, chosen from its values, so that a matrix never mixes "3",
"+10" and "+0.068"; and compact counts for cells too narrow for "13,586".

The view measures the strings these return and picks a font size that fits
them, or writes nothing when none does (the value stays in the tooltip).
No Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["CellFormat", "cell_format", "compact_count", "MAX_DECIMALS"]

#: most decimals any matrix gets (values of 1e-6 and below read as 0)
MAX_DECIMALS = 6


@dataclass(frozen=True)
class CellFormat:
    """Fixed-point notation with the same number of decimals in every cell.

    Attributes
    ----------
    decimals : int
    signed : bool
        Positive values carry a "+" (signed measures: cosine, dot product).
        A value that rounds to zero is written without a sign ("0.00", never "-0.00").
    """

    decimals: int
    signed: bool = False

    def __call__(self, value: float) -> str:
        value = float(value)
        if not math.isfinite(value):
            return str(value)
        text = f"{value:{'+' if self.signed else ''}.{self.decimals}f}"
        if float(text) == 0.0:
            return f"{0.0:.{self.decimals}f}"
        return text


def cell_format(values: np.ndarray, metric: str, n: int) -> CellFormat:
    """The one format for every cell of a similarity matrix.

    Parameters
    ----------
    values : ndarray, float, shape (n, n)
    metric : str
        ``cosine``, ``dot`` or ``euclidean``.
    n : int
        Tokens compared: past 8 the cells are narrow and get one digit less.

    Returns
    -------
    CellFormat
        Cosines: 3 decimals (2 past 8 tokens). Dot products and distances:
        enough decimals for about 3 significant digits of the largest value
        (2 past 8 tokens), and more when the values differ only in later
        digits, so that the spread between the smallest and the largest
        off-diagonal value shows in at least one digit (distances 12.31 …
        12.48 are not all written "12"); at most :data:`MAX_DECIMALS`.
    """
    signed = metric != "euclidean"
    digits = 3 if n <= 8 else 2
    if metric == "cosine":
        return CellFormat(digits, signed)
    values = np.asarray(values, np.float64)
    finite = values[np.isfinite(values)]
    biggest = float(np.abs(finite).max()) if finite.size else 0.0
    if biggest == 0.0:
        return CellFormat(digits - 1, signed)
    decimals = digits - 1 - math.floor(math.log10(biggest))
    if values.ndim == 2 and values.shape[0] == values.shape[1] and values.shape[0] > 2:
        off = values[~np.eye(values.shape[0], dtype=bool)]
        off = off[np.isfinite(off)]
        spread = float(off.max() - off.min()) if off.size else 0.0
        if spread > 0.0:
            decimals = max(decimals, -math.floor(math.log10(spread)))
    return CellFormat(int(min(MAX_DECIMALS, max(0, decimals))), signed)


def compact_count(x: float) -> str:
    """A count (a distance between ids) in at most five characters: 42, 999,
    1.23k, 13.6k, 128k, 1.05M."""
    x = float(x)
    sign = "-" if x < 0 else ""
    a = abs(x)
    if a < 999.5:
        return f"{sign}{a:.0f}"
    units = (("k", 1e3), ("M", 1e6), ("G", 1e9))
    unit, scale = next(((u, s) for u, s in units if a / s < 999.5), units[-1])
    v = a / scale
    digits = 2 if v < 9.995 else 1 if v < 99.95 else 0
    return f"{sign}{v:.{digits}f}{unit}"
