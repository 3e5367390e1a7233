"""The projection's labels: one plot item that paints every label beside its
point, placed without overlaps by :func:`explorer.core.projection.label_layout.place_labels`.

Placing runs only when the view settles (the caller debounces it); while
the user pans or zooms, each placed label follows its point at the same
pixel offset, so a frame costs a few text draws and no Python per label
beyond them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QStaticText

from explorer.core.projection.label_layout import place_labels

__all__ = ["LabelSpec", "LabelLayer", "faint_labels"]

#: padding around a label's text, pixels
_PAD_X, _PAD_Y = 3.0, 1.0


@dataclass(frozen=True)
class LabelSpec:
    """A label the view would like to show.

    Attributes
    ----------
    token_id : int
    x, y : float
        Its point, in view coordinates.
    text : str
    color : str
        Text colour (a palette name from style.py or #rrggbb).
    bold : bool
    filled : bool
        Drawn on a translucent background box (tokens that matter); faint
        points' labels are not.
    """

    token_id: int
    x: float
    y: float
    text: str
    color: str
    bold: bool = False
    filled: bool = True


def faint_labels(xy: np.ndarray, ids: np.ndarray, rect, piece, color: str, seen: set[int],
                 limit: int) -> list[LabelSpec]:
    """Labels for the points of the cloud inside ``rect`` (view coordinates), when
    at most ``limit`` are (the view is zoomed in far enough); ids in ``seen`` are skipped.

    ``xy`` (n, 2) and ``ids`` (n,) are the cloud's points; ``piece(id)`` gives a token's
    shown piece (a :class:`~explorer.core.tokens.pieces.DisplayPiece`, e.g. ``table.shown_piece``).
    """
    if not len(xy):
        return []
    lo_y, hi_y = sorted((rect.top(), rect.bottom()))
    inside = np.nonzero((xy[:, 0] >= rect.left()) & (xy[:, 0] <= rect.right())
                        & (xy[:, 1] >= lo_y) & (xy[:, 1] <= hi_y))[0]
    if len(inside) > limit:
        return []
    return [LabelSpec(int(ids[k]), float(xy[k, 0]), float(xy[k, 1]), piece(int(ids[k])).short(), color,
                      False, False) for k in inside if int(ids[k]) not in seen]


class LabelLayer(pg.GraphicsObject):
    """Paints the placed labels; :meth:`place` chooses which and where."""

    def __init__(self, font: QFont, fill: QColor, limit: int = 90):
        super().__init__()
        self._font = QFont(font)
        self._bold = QFont(font)
        self._bold.setBold(True)
        self._metrics = (QFontMetricsF(self._font), QFontMetricsF(self._bold))
        self._fill = QColor(fill)
        self._limit = limit
        self._specs: list[LabelSpec] = []
        # what is painted: spec, offset of the box from the point (pixels), its size, the prepared text
        self._shown: list[tuple[LabelSpec, float, float, float, float, QStaticText]] = []
        self.setZValue(50)

    # -- placement -------------------------------------------------------------------------
    def place(self, specs: list[LabelSpec]) -> None:
        """Place ``specs`` (highest priority first) inside the view box, none overlapping."""
        self._specs = list(specs)
        self._shown = []
        vb = self.getViewBox()
        if vb is None or not specs or not self.isVisible():
            self.update()
            return
        box = vb.sceneBoundingRect()
        anchors = np.array([self._scene_xy(vb, s) for s in specs], np.float64)
        sizes = np.array([self._box_size(s) for s in specs], np.float64)
        placed = place_labels(anchors, sizes, (box.left(), box.top(), box.right(), box.bottom()), limit=self._limit)
        for pl in placed:
            spec = specs[pl.index]
            text = QStaticText(spec.text)
            text.setTextFormat(Qt.PlainText)
            text.prepare(font=self._bold if spec.bold else self._font)
            self._shown.append((spec, pl.dx, pl.dy, pl.width, pl.height, text))
        self.prepareGeometryChange()
        self.update()

    def clear(self) -> None:
        self.place([])

    def recolour(self, swapped) -> None:
        """A new palette (see ui/common/recolour.py): the boxes' fill, the old background, takes the new one."""
        to = swapped(self._fill)
        if to is not None:
            self._fill = to
            self.update()

    @staticmethod
    def _scene_xy(vb, spec: LabelSpec) -> tuple[float, float]:
        p = vb.mapViewToScene(QPointF(spec.x, spec.y))
        return p.x(), p.y()

    def _box_size(self, spec: LabelSpec) -> tuple[float, float]:
        fm = self._metrics[1 if spec.bold else 0]
        return fm.horizontalAdvance(spec.text) + 2 * _PAD_X, fm.height() + 2 * _PAD_Y

    # -- what is shown (tests, exports) ----------------------------------------------------
    def shown(self) -> list[tuple[int, str]]:
        """(token id, text) of the labels drawn, in priority order."""
        return [(s.token_id, s.text) for s, *_ in self._shown]

    def scene_rects(self) -> list[QRectF]:
        """Each drawn label's box in scene coordinates, where the view is now."""
        vb = self.getViewBox()
        if vb is None:
            return []
        out = []
        for spec, dx, dy, w, h, _text in self._shown:
            x, y = self._scene_xy(vb, spec)
            out.append(QRectF(x + dx, y + dy, w, h))
        return out

    # -- drawing -----------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        vb = self.getViewBox()
        return vb.viewRect() if vb is not None and self._shown else QRectF()

    def viewRangeChanged(self) -> None:
        if self._shown:
            self.prepareGeometryChange()

    def paint(self, p: QPainter, *_args) -> None:
        if not self._shown:
            return
        t = p.transform()
        p.resetTransform()
        p.setRenderHint(QPainter.Antialiasing, False)
        p.setRenderHint(QPainter.TextAntialiasing, True)
        for spec, dx, dy, w, h, text in self._shown:
            pt = t.map(QPointF(spec.x, spec.y))
            left, top = pt.x() + dx, pt.y() + dy
            if spec.filled:
                p.fillRect(QRectF(left, top, w, h), self._fill)
            p.setFont(self._bold if spec.bold else self._font)
            p.setPen(QColor(spec.color))
            p.drawStaticText(QPointF(left + _PAD_X, top + _PAD_Y), text)
