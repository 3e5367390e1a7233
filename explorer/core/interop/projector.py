"""The TensorBoard Embedding Projector's folder, so that
``tensorboard --logdir FOLDER`` opens a layout as it is. No Qt here.

The folder holds, as the projector documents its format:

* ``metadata.tsv``: one row per token with a header row (more than one
  column): id, piece and the metadata of :data:`~explorer.core.interop.rows.METADATA_COLUMNS`;
  no cell holds a tab or a line break (the TSV has no quoting);
* ``layout.tsv``: the layout's coordinates (x, y and z in 3D), one row per token;
  a 2-D layout gets a third column of zeros: the projector runs its own PCA
  with three components on whatever tensor it shows, and on two columns it
  draws nothing ("Total variance described: NaN%", seen in TensorBoard 2.21);
  on (x, y, 0) its PCA is the layout itself, turned;
* ``vectors.bytes`` (optional): the tokens' embedding rows as raw float32
  bytes, row-major, their shape in the config;
* ``projector_config.pbtxt``: both tensors, each with the metadata file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.interop.rows import METADATA_COLUMNS, LayoutRows, one_line

__all__ = ["ProjectorFolder", "write_projector", "CONFIG_NAME", "METADATA_NAME", "LAYOUT_NAME", "VECTORS_NAME"]

CONFIG_NAME = "projector_config.pbtxt"
METADATA_NAME = "metadata.tsv"
LAYOUT_NAME = "layout.tsv"
VECTORS_NAME = "vectors.bytes"


@dataclass(frozen=True)
class ProjectorFolder:
    """What :func:`write_projector` wrote: the folder, its tensors' names and the rows."""

    folder: Path
    tensor_names: tuple[str, ...]
    rows: int


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return f"{value:.6g}" if isinstance(value, float) else one_line(str(value))


def _quoted(text: str) -> str:
    """A protobuf text-format string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _tensor_name(text: str) -> str:
    # the projector treats "name:0" as a TensorFlow tensor's output: no colons in a name
    return one_line(text).replace(":", " ").strip() or "layout"


def write_projector(folder, rows: LayoutRows, axes: Sequence[int] = (0, 1), vectors: np.ndarray | None = None,
                    title: str = "layout") -> ProjectorFolder:
    """Write the projector's folder for ``rows`` (created if missing; these files replaced).

    Parameters
    ----------
    folder : path
    rows : LayoutRows
    axes : sequence of int
        The coordinate columns that make the layout (2 or 3 of ``rows.coords``).
    vectors : ndarray (n, d) float, optional
        The tokens' embedding rows, in the order of ``rows.ids``, for the
        projector's own PCA, t-SNE and UMAP.
    title : str
        Names the tensors in the projector's menu (``"<title>"`` and ``"<title>, vectors"``).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    n = len(rows)
    columns = [rows.metadata[name] for name in METADATA_COLUMNS]
    with open(folder / METADATA_NAME, "w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(["id", "piece", *METADATA_COLUMNS]) + "\n")
        for r, tid in enumerate(rows.ids.tolist()):
            f.write("\t".join([str(tid), rows.pieces[r]] + [_cell(c[r]) for c in columns]) + "\n")
    layout = np.asarray(rows.coords, np.float32)[:, list(axes)]
    if layout.shape[1] == 2:  # see the module's docstring
        layout = np.c_[layout, np.zeros(len(layout), np.float32)]
    with open(folder / LAYOUT_NAME, "w", encoding="utf-8", newline="\n") as f:
        f.writelines("\t".join(f"{v:.9g}" for v in row) + "\n" for row in layout.tolist())
    name = _tensor_name(title)
    entries = [(name, LAYOUT_NAME, None)]
    if vectors is not None:
        vectors = np.ascontiguousarray(vectors, dtype="<f4")
        if vectors.shape[0] != n or vectors.ndim != 2:
            raise ValueError(f"vectors of shape {vectors.shape} for {n:,} rows")
        vectors.tofile(folder / VECTORS_NAME)
        entries.append((f"{name}, vectors", VECTORS_NAME, vectors.shape))
    lines = []
    for tensor, path, shape in entries:
        lines += ["embeddings {", f"  tensor_name: {_quoted(tensor)}", f"  tensor_path: {_quoted(path)}"]
        lines += [f"  tensor_shape: {int(s)}" for s in shape or ()]
        lines += [f"  metadata_path: {_quoted(METADATA_NAME)}", "}"]
    (folder / CONFIG_NAME).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ProjectorFolder(folder, tuple(e[0] for e in entries), n)
