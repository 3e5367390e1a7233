"""Round column numbers under a plot, as many as its width holds with room between them.

pyqtgraph always draws its first level of tick labels, however crowded: in a narrow window
the Matrix overview's 100, 200 and 300 touched, and the 4,096 columns of a Positions heatmap
read "100020003000". Used by both.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtGui import QFontMetrics

from explorer.core.matrix.axis_labels import column_ticks

__all__ = ["TICK_GAP_PX", "spaced_column_ticks"]

#: pixels between two column numbers, at least
TICK_GAP_PX = 10


def spaced_column_ticks(axis: pg.AxisItem, dim: int, px_per_column: float) -> list[tuple[int, str]]:
    """Ticks ``(column, "1,000")`` at round columns from 0 to ``dim``, each two at least the
    widest number (in ``axis``'s tick font) and :data:`TICK_GAP_PX` apart."""
    widest = QFontMetrics(axis.style.get("tickFont") or axis.font()).horizontalAdvance(f"{dim:,}") + TICK_GAP_PX
    most = max(2, int(dim * px_per_column // widest) + 1)
    return [(j, f"{j:,}") for j in column_ticks(dim, most)]
