"""The lasso: drag a free-form path around points of the 2D projection and
the tokens inside become a group: listed beside the plot, a colouring
(Colour by → Lasso group), a column of every export, and the input of the
Similarity view (→ Similarity). Which points are inside is
:func:`explorer.core.projection.lasso.inside_polygon`."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QPolygonF
from PySide6.QtWidgets import QHBoxLayout, QListWidget, QPushButton, QVBoxLayout, QWidget

from explorer.core.projection.lasso import inside_polygon
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import ACCENT

__all__ = ["LassoItem", "LassoPanel", "LassoGroup", "LISTED"]

#: tokens of the group listed by name (all of them are in the group)
LISTED = 200


class LassoItem(pg.GraphicsObject):
    """Over the plot while the lasso is on: a drag draws a path (data coordinates).

    Signals
    -------
    drawn(object)
        The path (m, 2) float64 the user drew, when the button is released.
    """

    drawn = Signal(object)

    def __init__(self):
        super().__init__()
        self._path: list[tuple[float, float]] = []
        self._pen = pg.mkPen(ACCENT, width=1.5, style=Qt.DashLine)
        self._pen.setCosmetic(True)
        self.setZValue(60)
        self.setCursor(Qt.CrossCursor)
        self.hide()  # hidden, it takes no mouse events: the plot pans as usual

    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        return vb.viewRect() if vb is not None else QRectF()

    def viewRangeChanged(self) -> None:
        self.prepareGeometryChange()

    def mouseDragEvent(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            ev.ignore()
            return
        ev.accept()
        if ev.isStart():
            start = ev.buttonDownPos()
            self._path = [(start.x(), start.y())]
        pos = ev.pos()
        self._path.append((pos.x(), pos.y()))
        self.update()
        if ev.isFinish():
            self.close_path(self._path)

    def close_path(self, path) -> None:
        """The drag ended along ``path`` (m, 2): emit it and clear the drawing."""
        self._path = []
        self.update()
        self.drawn.emit(np.asarray(path, np.float64).reshape(-1, 2))

    def paint(self, p, *_args) -> None:
        if len(self._path) > 1:
            p.setPen(self._pen)
            p.drawPolygon(QPolygonF([QPointF(x, y) for x, y in self._path]))


class LassoPanel(QWidget):
    """The Lasso toggle, the group's count and names, → Similarity and Clear.

    Signals
    -------
    compare_clicked()
        The user asked to compare the group in the Similarity view.
    clear_clicked()
        The user emptied the group.
    """

    compare_clicked = Signal()
    clear_clicked = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        row = QHBoxLayout()
        self.toggle = QPushButton("Lasso")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("On: drag around points of the plot to make them a group (dragging no longer pans)")
        self.compare_button = QPushButton("→ Similarity")
        self.compare_button.setToolTip("Show the group's tokens in the Similarity view, in place of the added "
                                       "tokens (at most 200)")
        self.compare_button.clicked.connect(self.compare_clicked)
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear_clicked)
        for w in (self.toggle, self.compare_button, self.clear_button):
            row.addWidget(w)
        row.addStretch(1)
        lay.addLayout(row)
        self.label = WrapLabel()
        lay.addWidget(self.label)
        self.list = QListWidget()
        self.list.setMaximumHeight(110)
        lay.addWidget(self.list)
        self.show_group([], [])

    def show_group(self, ids, pieces) -> None:
        """The group's tokens (ids, and their shown pieces for the first :data:`LISTED`)."""
        n = len(ids)
        self.label.setText(f"<b>Lasso group</b>: {n:,} token{'s' if n != 1 else ''}; Colour by → Lasso group "
                           "colours them, the exports mark them" if n else
                           "<b>Lasso</b>: turn it on and drag around points to make them a group")
        self.list.clear()
        self.list.addItems([f"{p}   #{i:,}" for i, p in zip(list(ids)[:LISTED], pieces)]
                           + ([f"… and {n - LISTED:,} more"] if n > LISTED else []))
        self.list.setVisible(bool(n))
        self.compare_button.setEnabled(bool(n))
        self.clear_button.setEnabled(bool(n))


class LassoGroup(QObject):
    """Wires the lasso: ``panel`` (LassoPanel), the ``plot`` it draws on, ``points`` (PointSelection)
    that keeps the group, and the state the group is handed to."""

    def __init__(self, state, panel: LassoPanel, plot, points, parent=None):
        super().__init__(parent)
        self._state, self.panel, self._plot, self._points = state, panel, plot, points
        self.item = LassoItem()
        plot.plot_item.getViewBox().addItem(self.item, ignoreBounds=True)
        self.item.drawn.connect(self._on_item_drawn)
        panel.toggle.toggled.connect(self.item.setVisible)
        panel.compare_clicked.connect(self._on_compare_clicked)
        panel.clear_clicked.connect(self._on_clear_clicked)
        state.model_changed.connect(self._on_state_model_changed)

    def choose(self, ids) -> None:
        """Make ``ids`` the group (as a lasso around them would)."""
        self._points.set_chosen(ids)
        table = self._state.table
        chosen = self._points.chosen_ids
        pieces = [table.shown_piece(int(i)).text for i in chosen[:LISTED]] if table is not None else []
        self.panel.show_group(chosen.tolist(), pieces)

    def _on_item_drawn(self, path: np.ndarray) -> None:
        """The tokens of the drawn cloud inside ``path``."""
        ids = self._plot.cloud_ids()
        xy = self._plot.cloud.positions()
        self.choose(ids[inside_polygon(xy, path)] if len(ids) == len(xy) else [])

    def _on_clear_clicked(self) -> None:
        self.choose([])

    def _on_compare_clicked(self) -> None:
        self._state.set_extra_tokens(self._points.chosen_ids.tolist())

    def _on_state_model_changed(self, _table) -> None:
        self.panel.show_group([], [])
