"""Facts about one row of the table: its values, size, norm and where it
lies in memory, and the mean of the rows of a word split into pieces.
Microseconds of work: computed where they are shown. No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from explorer.core.geometry.vectors import mean_pool, vector_norm
from explorer.core.tokens.tokenize import Token

__all__ = ["RowFacts", "row_facts", "PooledWord", "pooled_word", "row_csv"]

#: significant digits that carry a value of a float of this many bytes through text and back unchanged
ROUND_TRIP_DIGITS = {2: 5, 4: 9, 8: 17}


@dataclass(frozen=True)
class RowFacts:
    """Row ``token_id`` of a table and what the inspector says of it.

    Attributes
    ----------
    token_id : int
    values : ndarray (d,) float32
        The row, converted to float32 whatever the stored dtype.
    norm : float
        L2 norm over the finite values (summed in float64: huge finite
        values must not overflow to inf); NaN when none is finite.
    vmin, vmax : float
        Smallest and largest finite value (NaN when none is finite).
    nonfinite : int
        Values that are NaN or infinite.
    offset : int
        Bytes from the table's start to the row, as stored: i × row_bytes.
    stride : int
        Bytes of one stored row (row_bytes).
    itemsize : float
        Bytes per value as stored (fractional for block quantisations).
    """

    token_id: int
    values: np.ndarray
    norm: float
    vmin: float
    vmax: float
    nonfinite: int
    offset: int
    stride: int
    itemsize: float


def row_facts(table, token_id: int) -> RowFacts:
    """The facts of row ``token_id`` of ``table`` (an EmbeddingTable).

    Raises IndexError for an id outside the table.
    """
    row = table.row(int(token_id))
    finite = np.isfinite(row)
    if finite.any():
        good = row[finite].astype(np.float64)
        norm = vector_norm(good)
        vmin, vmax = float(good.min()), float(good.max())
    else:
        norm = vmin = vmax = float("nan")
    return RowFacts(int(token_id), row, norm, vmin, vmax, int((~finite).sum()),
                    table.byte_offset(int(token_id)), int(table.row_bytes), table.row_bytes / table.dim)


@dataclass(frozen=True)
class PooledWord:
    """A word split into pieces, and the mean of its pieces' rows.

    Attributes
    ----------
    text : str
        The word as typed.
    pieces : tuple of Token
        Its pieces, in order (two or more).
    vector : ndarray (d,) float32
        Mean of the pieces' rows (mean pooling).
    """

    text: str
    pieces: tuple[Token, ...]
    vector: np.ndarray


def pooled_word(table, text: str, pieces: Sequence[Token]) -> PooledWord | None:
    """Mean pooling of a word's pieces, or None for a word of one piece or
    with a piece that names no row of the table."""
    pieces = tuple(pieces)
    if len(pieces) < 2 or not all(0 <= t.id < table.vocab_size for t in pieces):
        return None
    vec = mean_pool(table.rows([t.id for t in pieces]))
    return PooledWord(text[pieces[0].start:pieces[-1].end], pieces, vec)


def row_csv(token_id: int, piece: str, row: np.ndarray) -> str:
    """Row ``token_id`` as CSV: a header (``id,piece,e0,...``) and one line, the piece quoted, each
    value with the digits that read back to the same number of the row's float type (9 for float32,
    17 for float64; ``nan`` and ``inf`` as Python writes them).

    Formatted by the ``%`` operator in one call: a row 65,536 wide took 45 ms by ``repr`` per
    value (a click on Copy as CSV stood the window still 128-152 ms in walks of the monkey), 11 ms so.
    """
    row = np.asarray(row).reshape(-1)
    itemsize = row.dtype.itemsize if row.dtype.kind == "f" else 8
    digits = ROUND_TRIP_DIGITS.get(itemsize, 17)
    values = row.tolist()
    line = (",".join([f"%.{digits}g"] * len(values)) % tuple(values)) if values else ""
    quoted = piece.replace('"', '""')
    return f'{_csv_header(len(values))}\n{int(token_id)},"{quoted}",{line}\n'


@lru_cache(maxsize=8)
def _csv_header(width: int) -> str:
    return "id,piece," + ",".join(f"e{j}" for j in range(width))
