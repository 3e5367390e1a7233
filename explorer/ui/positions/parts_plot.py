"""The parts of one token's input vector, dimension by dimension: its token
row, position row, type row, their sum and the LayerNorm output."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from explorer.core.geometry.vectors import vector_norm
from explorer.core.input_layer import InputVectors
from explorer.ui.common.plot_grid import show_grid
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.positions.plot_frame import PlotPanel
from explorer.ui.style import ACCENT, CLASS_COLORS, NEUTRAL, translucent

__all__ = ["PartsPlot", "parts_of"]

#: (name, colour, width) of each part, in the order the model adds them
_STYLES = {
    "token row": (CLASS_COLORS[4], 1.5),
    "position row": (CLASS_COLORS[5], 1.5),
    "type row": (NEUTRAL, 1.0),
    "sum": (CLASS_COLORS[0], 1.5),
    "input vector": (ACCENT, 2.5),
}


def parts_of(v: InputVectors, i: int) -> list[tuple[str, np.ndarray]]:
    """(name, row) of each part of token ``i`` of ``v`` that the model has; the last is its input vector."""
    out = [("token row", v.token_rows[i])]
    if v.position_rows is not None:
        out.append(("position row", v.position_rows[i]))
    if v.type_rows is not None:
        out.append(("type row", v.type_rows[i]))
    if v.normed is not None:
        out += [("sum", v.sums[i]), ("input vector", v.normed[i])]
    elif len(out) > 1:
        out.append(("input vector", v.sums[i]))
    return out


class PartsPlot(PlotPanel):
    """One curve per part over the first dimensions; the key under it gives each part's norm."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot.setLabel("left", "value")
        show_grid(self.plot, x=False)
        self.plot.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(translucent(self._fg, 60))))
        self.curves = {name: pg.PlotDataItem(pen=pg.mkPen(color, width=width)) for name, (color, width)
                       in _STYLES.items()}
        for c in self.curves.values():
            self.plot.addItem(c)
        # the key under the plot, not over the curves: a legend covered half of a narrow plot
        # all its wrapped lines in the panel's minimum: a splitter that gave the panel the key's
        # one-line height (1024 x 700) laid the key over the axis
        self.key = WrappedLabel()
        self.key.setTextFormat(Qt.RichText)
        self.key.setAlignment(Qt.AlignHCenter)
        self._layout.addWidget(self.key)
        self.shown: list[str] = []

    def set_token(self, v: InputVectors | None, i: int | None, label: str, dims: int) -> None:
        """Draw the parts of token ``i`` of ``v`` (None: nothing) over dimensions 0..dims-1."""
        self.key.setText("")
        self.shown = []
        for c in self.curves.values():
            c.setData([], [])
        if v is None or i is None:
            self.key.hold()  # the next token's key takes this room: the plot does not move twice
            self.set_title("Select a token to see the parts of its input vector")
            return
        x = np.arange(dims)
        key = []
        for name, row in parts_of(v, i):
            self.curves[name].setData(x, row[:dims])
            color = _STYLES[name][0]
            norm = vector_norm(row)
            key.append(f'<span style="color:{color}">■</span>&nbsp;{name.replace(" ", "&nbsp;")}&nbsp;‖{norm:.2f}‖')
            self.shown.append(name)
        self.key.setText(" &nbsp; ".join(key))
        self.set_title(f"The parts of “{label}”")
        self.plot.enableAutoRange()
