"""Qt's item roles and alignments as plain ints, for item models' ``data()``.

Qt asks a table's model for about ten roles of every visible cell at every
paint: two thousand calls into Python for a tall table. PySide passes the
role as an int, but reading ``Qt.DisplayRole`` looks the name up through
shiboken's type machinery, 2.7 µs a time here; a ``data()`` comparing the
role with five such names spent more time reading them than answering. The
names are read once here, and a model compares ints.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

__all__ = ["DISPLAY", "ALIGNMENT", "DECORATION", "TOOLTIP", "FOREGROUND", "FONT", "HORIZONTAL", "RIGHT", "LEFT"]

DISPLAY = int(Qt.ItemDataRole.DisplayRole)
ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
DECORATION = int(Qt.ItemDataRole.DecorationRole)
TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
FONT = int(Qt.ItemDataRole.FontRole)
#: a header's orientation, as headerData() is given it
HORIZONTAL = Qt.Orientation.Horizontal
#: right- and left-aligned text, centred vertically
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
