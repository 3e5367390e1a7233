"""The texts of the 3D view (its axes' titles, the tokens' labels), drawn in one pass of Qt's
raster painter over the OpenGL frame.

pyqtgraph's ``GLTextItem`` draws each text with a ``QPainter`` on the OpenGL surface, Qt's GL
paint engine: with a software OpenGL (llvmpipe, a machine without a GPU) each text cost about
0.7 ms, and the view's 27 texts took a frame from 14-15 ms to 31-34 (a 1400×900 view, 50,000
points, rotating). Here the texts are drawn with the raster engine into one transparent image,
which is then drawn over the frame once: 15-16 ms a frame with all of them.

A text whose point is in view is kept whole in view (:func:`kept_in_view`): the camera frames the
points, and an axis's title, which starts at the axis's end, ran past the view's edge in a narrow
window ("PC1 · 14.5%" cut to "PC1 ·" at 1024x700).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pyqtgraph.opengl.GLGraphicsItem import GLGraphicsItem
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QMatrix4x4, QPainter, QVector3D

__all__ = ["GLTexts", "Text3D", "kept_in_view"]


@dataclass(frozen=True)
class Text3D:
    """A text at a point of the scene: its baseline starts where ``pos`` (3,) is seen."""

    pos: tuple[float, float, float]
    text: str
    colour: QColor
    font: QFont


def kept_in_view(at: QPointF, size: QRectF, view: QRectF) -> QPointF:
    """Where to start a text whose baseline should start at ``at``, so that all of it is inside ``view``.

    ``size`` is the text's bounding rectangle about its baseline's start (``QFontMetricsF.boundingRect``).
    A text of a point out of view, or one wider or taller than the view, stays where it was: moved, it
    would seem to name something it does not."""
    if not view.contains(at) or size.width() > view.width() or size.height() > view.height():
        return at
    x = min(max(at.x(), view.left() - size.left()), view.right() - size.right())
    y = min(max(at.y(), view.top() - size.top()), view.bottom() - size.bottom())
    return QPointF(x, y)


class GLTexts(GLGraphicsItem):
    """Texts placed in 3D, drawn flat facing the viewer (:meth:`set_texts`)."""

    def __init__(self):
        super().__init__()
        self.setGLOptions("additive")
        self._texts: list[Text3D] = []
        self._sizes: list[QRectF] = []
        self._image: QImage | None = None  # kept between frames while the view's size stays

    def set_texts(self, texts: list[Text3D]) -> None:
        self._texts = [t for t in texts if t.text]
        # each text's rectangle about its baseline's start, measured once here, not in every frame
        self._sizes = [QFontMetricsF(t.font).boundingRect(t.text) for t in self._texts]
        self.update()

    def screen_points(self) -> list[QPointF]:
        """Where each text's point is seen in the view (logical pixels), as the camera sees it now: its
        baseline starts there unless that would put part of it out of view (:func:`kept_in_view`)."""
        project = self._projection()
        return [project.map(QVector3D(*t.pos)).toPointF() for t in self._texts]

    def _projection(self) -> QMatrix4x4:
        rect = QRectF(self.view().rect())
        to_viewport = QMatrix4x4()
        to_viewport.viewport(rect.left(), rect.bottom(), rect.width(), -rect.height())
        return to_viewport * self.mvpMatrix()

    def paint(self) -> None:
        if not self._texts:
            return
        self.setupGLState()
        view = self.view()
        ratio = view.devicePixelRatio()
        size = (max(1, round(view.width() * ratio)), max(1, round(view.height() * ratio)))
        if self._image is None or (self._image.width(), self._image.height()) != size \
                or self._image.devicePixelRatio() != ratio:
            self._image = QImage(*size, QImage.Format_ARGB32_Premultiplied)
            self._image.setDevicePixelRatio(ratio)
        self._image.fill(0)
        raster = QPainter(self._image)
        raster.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        near = QRectF(-view.width(), -view.height(), 3 * view.width(), 3 * view.height())  # what may show of a text
        seen = QRectF(2, 2, view.width() - 4, view.height() - 4)  # a hair from the edges
        for text, size, at in zip(self._texts, self._sizes, self.screen_points()):
            # not one behind the camera (no finite place), nor far off
            if math.isfinite(at.x()) and math.isfinite(at.y()) and near.contains(at):
                raster.setFont(text.font)
                raster.setPen(text.colour)
                raster.drawText(kept_in_view(at, size, seen), text.text)
        raster.end()
        over = QPainter(view)
        over.drawImage(0, 0, self._image)
        over.end()
