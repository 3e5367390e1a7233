"""The projection in 3D: pyqtgraph's GL view drawn in an OpenGL window of
its own, whose items are made once and then only fed data (the cloud, the
highlighted tokens, the selection with lines to its neighbours, three
labelled axes and a few token labels).

Why a window (``QOpenGLWindow`` in a window container) and not pyqtgraph's
``GLViewWidget`` (a ``QOpenGLWidget``): the first ``QOpenGLWidget`` in a
window turns the whole window over to OpenGL composition for the rest of the
process, even after the widget is gone. Every repaint of every view then
goes through a texture upload; with a software OpenGL (llvmpipe, as on a
machine without a GPU) a resize of the window cost 86-96 ms instead of 28-30
and two more threads' worth of CPU, in every tab. A native child window draws
itself and leaves the rest of the window to Qt's raster painting.

Drag to rotate, wheel to zoom, Ctrl+drag to pan; hovering a point names it
and a click selects it (picked in screen space from the camera's matrices,
no GL selection buffer). Import this module only after
:func:`.support.gl_status` said OpenGL works: it imports PyOpenGL. A GL
error while drawing (pyqtgraph would print it and go on, frame after
frame) is caught item by item, reported once through ``failed`` and the
widget draws nothing more.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage
from PySide6.QtOpenGL import QOpenGLWindow
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.core.arrays import finite_bounds
from explorer.core.geometry.vectors import vector_norm
from explorer.ui.common.embedded_window import embed_window
from explorer.ui.projection.opengl.texts import GLTexts, Text3D
from explorer.ui.projection.scene3d import Cloud3D, nearest_on_screen, rgba_of
from explorer.ui.style import ACCENT, blend, plot_colors

__all__ = ["GLProjection", "GLScene", "MAX_LABELS_3D"]

#: token labels drawn in 3D (the selection's, then the text's); more would hide the cloud
MAX_LABELS_3D = 24
#: pixels the pointer may move between press and release for a click
CLICK_SLOP = 4
#: the kinds of item whose first drawing in a new context is slow, in the order a new scene takes them
#: up, one more kind a frame: a shader compiled by a software OpenGL (llvmpipe) for the points and for
#: the lines, Qt's GL paint engine for the texts' image (12, 17 and 23 ms on SmolLM2 when each text was
#: drawn by the GL paint engine, all in the frame of the first 3D toggle: 70 ms, and 140-180 ms in walks
#: while jobs ran)
FIRST_FRAMES = (gl.GLScatterPlotItem, gl.GLLinePlotItem, GLTexts)


class GLScene(GLViewMixin, QOpenGLWindow):
    """Rotatable 3D scatter of the projection (the OpenGL window :class:`GLProjection` holds).

    Signals
    -------
    point_hovered(int)
        Token id under the pointer (-1: none).
    point_clicked(int)
        Token id of the point clicked.
    failed(str)
        Drawing failed (an OpenGL error); the view should fall back to 2D.
    """

    point_hovered = Signal(int)
    point_clicked = Signal(int)
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent=parent)
        bg, fg = plot_colors()
        self._fg = fg
        self.setBackgroundColor(bg)
        self._broken = False
        self._kinds_drawn = 1  # how many of FIRST_FRAMES this scene draws yet (all, once each has been drawn)
        self._held = False  # an item of a kind not drawn yet waited for the next frame
        self._stale = True  # something changed since the last frame (see event)
        self._drawn_size = QSize()
        self._press = None
        self._ids = np.zeros(0, np.int64)
        self._pos = np.zeros((0, 3), np.float32)
        self._mark_ids = np.zeros(0, np.int64)
        self._mark_pos = np.zeros((0, 3), np.float32)
        self._hovered = -1
        opts = {"glOptions": "translucent"}
        # the highlighted tokens are drawn after the cloud and over it, never hidden behind its points
        on_top = {"glOptions": {GL.GL_DEPTH_TEST: False, GL.GL_BLEND: True, GL.GL_CULL_FACE: False,
                                "glBlendFunc": (GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA)}}
        self.cloud = gl.GLScatterPlotItem(pos=np.zeros((0, 3)), size=4, pxMode=True, **opts)
        self.marks = gl.GLScatterPlotItem(pos=np.zeros((0, 3)), size=9, pxMode=True, **on_top)
        self.selection = gl.GLScatterPlotItem(pos=np.zeros((0, 3)), size=14, pxMode=True,
                                              color=rgba_of([QColor(ACCENT)])[0], **on_top)
        self.neighbor_lines = gl.GLLinePlotItem(pos=np.zeros((0, 3)), mode="lines", width=1.5,
                                                color=rgba_of([QColor(ACCENT)])[0], antialias=True, **on_top)
        self.texts = GLTexts()  # the axes' titles and the tokens' labels, drawn last, over everything
        for depth, item in enumerate((self.neighbor_lines, self.marks, self.selection, self.texts), start=1):
            item.setDepthValue(depth)
        axis_rgba = rgba_of([blend(fg, bg, 0.55)])[0]
        self.axes = gl.GLLinePlotItem(pos=np.zeros((0, 3)), mode="lines", width=1.5, color=axis_rgba, antialias=True,
                                      **opts)
        self._title_font = QFont(QGuiApplication.font())
        self._title_font.setPointSize(10)
        self._label_font = QFont(QGuiApplication.font())
        self._label_font.setPointSize(9)
        self._titles: list[Text3D] = []  # the axes'
        self._labels: list[Text3D] = []  # the tokens'
        for item in (self.axes, self.cloud, self.neighbor_lines, self.marks, self.selection, self.texts):
            self.addItem(item)
        # seen from the negative side of PC1 and PC2: the positive ends, where the titles are, lie away
        self.setCameraPosition(distance=10, elevation=20, azimuth=-125)

    # -- what pyqtgraph's GL items ask of a view, that a window lacks -------------------------
    def devicePixelRatioF(self) -> float:
        return self.devicePixelRatio()

    def rect(self) -> QRect:
        return QRect(0, 0, self.width(), self.height())

    # -- data ------------------------------------------------------------------------------
    def set_cloud(self, cloud: Cloud3D | None) -> None:
        """Every projected token, its three axes and their titles."""
        if cloud is None or not len(cloud.ids):
            self._ids, self._pos = np.zeros(0, np.int64), np.zeros((0, 3), np.float32)
            self.cloud.setData(pos=self._pos)
            self.axes.setData(pos=np.zeros((0, 3)))
            self._titles = []
            self._show_texts()
            return
        self._ids, self._pos = cloud.ids, cloud.pos
        self.cloud.setData(pos=cloud.pos, color=cloud.rgba, size=cloud.size)
        bounds = finite_bounds(cloud.pos)
        reach = np.maximum(np.abs(bounds[0]), np.abs(bounds[1])) if bounds is not None else np.ones(3)
        reach = np.where(reach > 0, reach, 1.0)
        ends = np.zeros((6, 3), np.float32)
        for k in range(3):
            ends[2 * k, k], ends[2 * k + 1, k] = -reach[k], reach[k]
        fg = QColor(self._fg)
        self._titles = [Text3D(tuple(map(float, ends[2 * k + 1])), cloud.titles[k], fg, self._title_font)
                        for k in range(3)]
        self.axes.setData(pos=ends)
        self._show_texts()

    def frame(self) -> None:
        """Point the camera at the cloud, far enough to see all of it."""
        bounds = finite_bounds(self._pos)
        if bounds is None:
            return
        lo, hi = bounds
        centre = (lo + hi) / 2
        self.opts["center"] = pg_vector(centre)
        self.setCameraPosition(distance=vector_norm(hi - lo) or 10.0)

    def set_marks(self, ids: np.ndarray, pos: np.ndarray, colours: list[str]) -> None:
        """Highlighted tokens (the text's, their neighbours, the added ones) over the cloud."""
        self._mark_ids = np.asarray(ids, np.int64)
        self._mark_pos = np.asarray(pos, np.float32).reshape(-1, 3)
        if not len(self._mark_ids):
            self.marks.setData(pos=np.zeros((0, 3)))
        else:
            self.marks.setData(pos=self._mark_pos, color=rgba_of([QColor(c) for c in colours]), size=9)
        self.update()

    def set_selection(self, pos: np.ndarray) -> None:
        """The selected token at ``pos[0]``, joined by lines to ``pos[1:]`` (its neighbours)."""
        pos = np.asarray(pos, np.float32).reshape(-1, 3)
        self.selection.setData(pos=pos[:1])
        pairs = np.zeros((2 * max(0, len(pos) - 1), 3), np.float32)
        if len(pos) > 1:
            pairs[0::2], pairs[1::2] = pos[0], pos[1:]
        self.neighbor_lines.setData(pos=pairs)
        self.update()

    def set_labels(self, labels: list[tuple[np.ndarray, str, str]]) -> None:
        """Up to :data:`MAX_LABELS_3D` texts: (position (3,), text, colour)."""
        self._labels = [Text3D(tuple(map(float, np.asarray(pos, np.float64).reshape(3))), " " + text, QColor(colour),
                               self._label_font) for pos, text, colour in labels[:MAX_LABELS_3D]]
        self._show_texts()

    def labels_shown(self) -> list[str]:
        return [t.text.strip() for t in self._labels if t.text]

    def _show_texts(self) -> None:
        self.texts.set_texts(self._titles + self._labels)
        self.update()

    # -- picking ---------------------------------------------------------------------------
    def mvp(self) -> np.ndarray:
        """Projection × view matrix (4, 4) of the current camera, row-major."""
        region = self.getViewport()
        m = self.projectionMatrix(region, region) * self.viewMatrix()
        return np.asarray(m.copyDataTo(), np.float64).reshape(4, 4)

    def token_at(self, x: float, y: float) -> int:
        """Token id drawn at pixel (x, y) (highlighted tokens first), or -1."""
        mvp, w, h = self.mvp(), self.width(), self.height()
        for ids, pos in ((self._mark_ids, self._mark_pos), (self._ids, self._pos)):
            k = nearest_on_screen(pos, mvp, w, h, x, y)
            if k >= 0:
                return int(ids[k])
        return -1

    def mousePressEvent(self, ev):
        self._press = ev.position()
        super().mousePressEvent(ev)

    def mouseMoveEvent(self, ev):
        super().mouseMoveEvent(ev)
        if ev.buttons() == Qt.NoButton:
            tid = self.token_at(ev.position().x(), ev.position().y())
            if tid != self._hovered:
                self._hovered = tid
                self.point_hovered.emit(tid)

    def mouseReleaseEvent(self, ev):
        press, self._press = self._press, None
        if press is not None and ev.button() == Qt.LeftButton \
                and (ev.position() - press).manhattanLength() <= CLICK_SLOP:
            tid = self.token_at(ev.position().x(), ev.position().y())
            if tid >= 0:
                self.point_clicked.emit(tid)
        super().mouseReleaseEvent(ev)

    # -- frames drawn once ----------------------------------------------------------------------
    def update(self) -> None:
        """Draw a new frame (pyqtgraph's items and camera ask for one here)."""
        self._stale = True
        super().update()

    def event(self, ev) -> bool:
        kind = ev.type()
        if kind in (QEvent.Expose, QEvent.Resize):
            self._stale = True
        elif kind in (QEvent.Paint, QEvent.UpdateRequest) and not self._stale and self._drawn_size == self.size():
            # drawn already, nothing asked for since: the window system paints a window shown again
            # twice, and a resize both paints it and has it updated (under X, software OpenGL: two
            # frames of 20-30 ms each time the 3D view came back, and at each resize)
            return True
        return super().event(ev)

    # -- drawing that may fail ----------------------------------------------------------------
    def addItem(self, item):
        paint = item.paint
        kind = FIRST_FRAMES.index(type(item)) if type(item) in FIRST_FRAMES else 0

        def guarded():
            if self._broken:
                return
            if kind >= self._kinds_drawn:
                self._held = True
                return
            try:
                paint()
            except Exception as exc:  # PyOpenGL's GLError and friends
                self._fail(exc)

        item.paint = guarded
        super().addItem(item)

    def initializeGL(self):
        # pyqtgraph keeps one shader program per item class, made in the first context that drew one;
        # in a new widget's context that program is not valid: make them again here
        for cls in (gl.GLScatterPlotItem, gl.GLLinePlotItem):
            cls._shaderProgram = None
        try:
            super().initializeGL()
        except Exception as exc:  # an old or broken driver: say so once, draw nothing more
            self._fail(exc)

    def paintGL(self):
        self._stale, self._drawn_size = False, self.size()  # what asks for a frame from here on asks again
        if self._broken:
            return
        self._held = False
        try:
            super().paintGL()
        except Exception as exc:
            self._fail(exc)
        if self._held:  # the next kind of item in the next frame: no frame pays for all of them
            self._kinds_drawn += 1
            self.update()

    @property
    def complete(self) -> bool:
        """Every kind of item has been drawn at least once (the first frames draw one more kind each)."""
        return self._kinds_drawn >= len(FIRST_FRAMES) and not self._held

    def _fail(self, exc: BaseException) -> None:
        from explorer.core.errors import user_message

        if not self._broken:
            self._broken = True
            self.failed.emit(f"3D drawing failed, so the projection stays 2D ({user_message(exc)})")

    @property
    def broken(self) -> bool:
        return self._broken


class GLProjection(QWidget):
    """The 3D view as a widget: a container around the :class:`GLScene` window (``scene``),
    with the scene's signals and data methods."""

    point_hovered = Signal(int)
    point_clicked = Signal(int)
    failed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.scene = GLScene()
        self.container = embed_window(self.scene, self)
        self.container.setFocusPolicy(Qt.ClickFocus)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.container)
        self.scene.point_hovered.connect(self.point_hovered)
        self.scene.point_clicked.connect(self.point_clicked)
        self.scene.failed.connect(self.failed)

    # the scene's data and picking, as the view calls them
    def set_cloud(self, cloud: Cloud3D | None) -> None:
        self.scene.set_cloud(cloud)

    def frame(self) -> None:
        self.scene.frame()

    def set_marks(self, ids: np.ndarray, pos: np.ndarray, colours: list[str]) -> None:
        self.scene.set_marks(ids, pos, colours)

    def set_selection(self, pos: np.ndarray) -> None:
        self.scene.set_selection(pos)

    def set_labels(self, labels: list[tuple[np.ndarray, str, str]]) -> None:
        self.scene.set_labels(labels)

    def labels_shown(self) -> list[str]:
        return self.scene.labels_shown()

    def mvp(self) -> np.ndarray:
        return self.scene.mvp()

    def token_at(self, x: float, y: float) -> int:
        return self.scene.token_at(x, y)

    def addItem(self, item) -> None:  # noqa: N802 (pyqtgraph's name)
        self.scene.addItem(item)

    def update(self) -> None:
        """Draw the scene again (a widget's own update would not reach the window)."""
        super().update()
        self.scene.update()

    @property
    def broken(self) -> bool:
        return self.scene.broken

    def grab_frame(self) -> QImage:
        """The scene as last drawn (``QWidget.grab`` leaves a native child window out)."""
        return self.scene.grabFramebuffer()


def pg_vector(xyz) -> object:
    """A pyqtgraph Vector (the camera centre's type)."""
    from pyqtgraph import Vector

    return Vector(*map(float, xyz))
