"""What colours the projection's points, and the legend that says so: the
groups of :mod:`explorer.core.tokens.groups` (classes, token kind, length,
row norm, id range, health category) turned into colours. Cheap numpy on
the drawn ids; the metadata itself is computed in workers by the state."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QColor

from explorer.core.health.report import CATEGORIES
from explorer.core.tokens.groups import GROUP_KEYS, TokenGroups
from explorer.ui.style import HEALTH_CATEGORY_COLORS, KIND_COLORS, SEQUENTIAL, class_color

__all__ = ["COLOUR_BY", "cloud_colours", "group_colour_names"]

#: key, name in the menu
COLOUR_BY = list(GROUP_KEYS)


def _sequential(n: int) -> list[str]:
    lut = pg.colormap.get(SEQUENTIAL).getLookupTable(0.1, 0.95, nPts=n, alpha=False)
    return [QColor(*map(int, rgb)).name() for rgb in lut]


def group_colour_names(groups: TokenGroups) -> list[str]:
    """One colour name per group: a sequential map for bins, the kind palette
    for kinds, the colour-blind-safe class palette otherwise."""
    n = len(groups.labels)
    if not n:
        return []
    if groups.ordered:
        return _sequential(n)
    if groups.key == "kind":
        return list(KIND_COLORS[:n])
    if groups.key == "health":
        return [HEALTH_CATEGORY_COLORS[c] for c in CATEGORIES]
    return [class_color(i) for i in range(n)]


def cloud_colours(groups: TokenGroups, faint: QColor, alpha: int = 210):
    """Colour groups for the points of ``groups``.

    Returns ``(group (n,) int64, colours: list of QColor, legend: list of
    (colour name, label, count))``; group 0 is ``faint`` (no group, or
    nothing chosen); the legend is empty when nothing colours the points.
    """
    names = group_colour_names(groups)
    colours = [QColor(faint)]
    for name in names:
        c = QColor(name)
        c.setAlpha(alpha)
        colours.append(c)
    counts = groups.counts().tolist()
    return groups.codes + 1, colours, list(zip(names, groups.labels, counts))
