"""A parquet file that Embedding Atlas opens with its own command:
``embedding-atlas FILE.parquet --x x --y y --text piece``. No Qt here.

Columns: ``id``, ``piece`` (as the app shows it), ``stored`` (as the tokenizer
stores it), the metadata of :data:`~explorer.core.interop.rows.METADATA_COLUMNS`
(typed, so the tool's filters and histograms work: ``length`` an integer,
``norm`` a float, missing values null), then ``x``, ``y`` and ``z`` in 3D.
pyarrow is imported only when a file is written.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.interop.rows import METADATA_COLUMNS, LayoutRows

__all__ = ["write_atlas", "atlas_command", "COORDINATE_NAMES"]

COORDINATE_NAMES = ("x", "y", "z")
_TYPES = {"fitted": "bool", "shown": "bool", "lasso": "bool", "class": "string", "kind": "string", "health": "string",
          "length": "int64", "norm": "float64"}


def atlas_command(path) -> str:
    """The command that opens ``path`` in Embedding Atlas."""
    return f"embedding-atlas {path} --x x --y y --text piece"


def write_atlas(path, rows: LayoutRows, axes: Sequence[int] = (0, 1)) -> int:
    """Write ``rows`` to the parquet file ``path`` with ``axes`` (2 or 3 columns
    of ``rows.coords``) as x, y (and z). Returns the rows written."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ExplorerError("Writing parquet needs pyarrow: pip install pyarrow") from exc
    if not 2 <= len(axes) <= 3:
        raise ValueError(f"a layout has 2 or 3 axes, not {len(axes)}")
    columns = {"id": pa.array(rows.ids, pa.int64()), "piece": pa.array(rows.pieces, pa.string()),
               "stored": pa.array(rows.stored, pa.string())}
    for name in METADATA_COLUMNS:
        columns[name] = pa.array(rows.metadata[name], type=pa.type_for_alias(_TYPES[name]))
    coords = np.asarray(rows.coords, np.float32)
    for name, k in zip(COORDINATE_NAMES, axes):
        columns[name] = pa.array(coords[:, k])
    pq.write_table(pa.table(columns), str(path))
    return len(rows)
