"""What colours the projection's points, and the legend that says so:
the bundled model's classes, the token kind, the piece's length or the
row's norm (:mod:`explorer.core.token_meta`), or nothing. Cheap numpy on
the drawn ids; the metadata itself is computed in a worker by the state."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from ...core.token_meta import KINDS
from ..style import KIND_COLORS, SEQUENTIAL, class_color

__all__ = ["COLOUR_BY", "cloud_colours"]

#: key, name in the menu
COLOUR_BY = [("classes", "Classes"), ("kind", "Token kind"), ("length", "Length"), ("norm", "Row norm"),
             ("none", "Nothing")]
_LENGTH_EDGES = [1, 2, 3, 4, 6, 9]
_LENGTH_LABELS = ["0", "1", "2", "3", "4–5", "6–8", "≥ 9"]
_NORM_BINS = 6


def _sequential(n: int) -> list[str]:
    lut = pg.colormap.get(SEQUENTIAL).getLookupTable(0.1, 0.95, nPts=n, alpha=False)
    return [QColor(*map(int, rgb)).name() for rgb in lut]


def cloud_colours(by: str, ids: np.ndarray, faint: QColor, classes=None, meta=None, alpha: int = 210):
    """Colour groups for the points ``ids``.

    Returns ``(group (n,) int64, colours: list of QColor, legend: list of
    (colour name, label))``; group 0 is ``faint`` (no class, no value, or
    nothing chosen); the legend is empty when nothing colours the points.
    """
    ids = np.asarray(ids, np.int64)
    group = np.zeros(len(ids), np.int64)
    names: list[str] = []
    labels: list[str] = []
    if by == "classes" and classes is not None:
        of = classes.of[ids].astype(np.int64)
        group = np.where(of >= 0, of + 1, 0)
        names = [class_color(i) for i in range(len(classes.names))]
        labels = list(classes.names)
    elif by == "kind" and meta is not None:
        group = meta.kind[ids].astype(np.int64) + 1
        names, labels = list(KIND_COLORS[: len(KINDS)]), list(KINDS)
    elif by == "length" and meta is not None:
        group = np.digitize(meta.length[ids], _LENGTH_EDGES).astype(np.int64) + 1
        names, labels = _sequential(len(_LENGTH_LABELS)), [f"{t} characters" for t in _LENGTH_LABELS]
    elif by == "norm" and meta is not None:
        norms = meta.norm[ids]
        finite = np.isfinite(norms)
        if finite.any():
            edges = np.quantile(norms[finite], np.linspace(0, 1, _NORM_BINS + 1))
            group = np.where(finite, np.clip(np.searchsorted(edges[1:-1], norms, side="right"), 0,
                                             _NORM_BINS - 1) + 1, 0)
            names = _sequential(_NORM_BINS)
            labels = [f"{edges[k]:.3g} – {edges[k + 1]:.3g}" for k in range(_NORM_BINS)]
    colours = [QColor(faint)]
    for name in names:
        c = QColor(name)
        c.setAlpha(alpha)
        colours.append(c)
    return group, colours, list(zip(names, labels))
