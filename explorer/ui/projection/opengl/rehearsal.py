"""The 3D view's first drawing, rehearsed off the window's thread when 3D is first asked for.

The warm-up loads the OpenGL driver (:mod:`.driver`), but loading maps a library without
reading it: the first frame of the first 3D view still runs code of the driver and of LLVM
(a software OpenGL compiles each shader with it) that no one has run yet. Where those pages are
not in memory (the first 3D view after the machine started, or on a machine that drops files
unread for a minute from its page cache, as this project's VM does) the window's thread read
them from disk: 42-68 MB and 67 major page faults in the first toggle of 3D, a stall of 407 ms
in a walk. :func:`rehearse_first_draw` makes an OpenGL context in a worker, on an offscreen
surface made on the window's thread (as Qt Quick's render thread does), and draws points and
lines with pyqtgraph's own shaders into a small framebuffer: the disk is read there, and the
pages stay mapped in the process. Then the 3D view's first frames read 0.2-0.9 MB. The worker
also answers :func:`.support.gl_status`, so the window makes no context to ask. Meanwhile the
projection stays 2D under "Preparing 3D…" (0.2-0.5 s, once per process), as it does while the 3D
view's code is imported (the view's ``gl_needed``, which the app answers with both).

Only where Qt can use OpenGL from another thread (``supportsThreadedOpenGL``) and the platform
draws OpenGL at all (not offscreen or minimal); elsewhere the first frames draw as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication, QOffscreenSurface, QOpenGLContext, QSurfaceFormat

from explorer.ui.projection.opengl.support import GLStatus, answered, remember_gl_status

__all__ = ["Rehearsal", "rehearse_first_draw", "rehearsal_job", "rehearsing", "rehearsal_signals", "last_rehearsal",
           "why_not_rehearse", "rehearsal_wanted", "SIZE"]

#: the side of the framebuffer drawn into (pixels)
SIZE = 32
#: platforms that draw no OpenGL
_NO_GL = ("offscreen", "minimal", "vnc")


@dataclass(frozen=True)
class Rehearsal:
    """What :func:`rehearsal_job` did: the driver's answer (``status``) and the pixels its points and
    lines lit in the framebuffer (0 when nothing was drawn)."""

    status: GLStatus
    lit: int = 0


class _Signals(QObject):
    #: a rehearsal ended (drawn, failed or cancelled)
    ended = Signal()


_signals: _Signals | None = None
_running: list[QOffscreenSurface] = []  # the surface of the rehearsal under way (one at most)
_started: list[bool] = []  # [True] once one was started: one per process
_results: list[Rehearsal] = []  # what it did, once it ended
_kept: list[QOffscreenSurface] = []  # the surface of a cancelled rehearsal: its worker may still draw on it


def rehearsal_signals() -> _Signals:
    """The module's signals (made on first use, on the window's thread)."""
    global _signals
    if _signals is None:
        _signals = _Signals()
    return _signals


def last_rehearsal() -> Rehearsal | None:
    """What the process's rehearsal did (None: none ended, or it was cancelled)."""
    return _results[-1] if _results else None


def rehearsing() -> bool:
    """A rehearsal is under way: the first 3D view waits for it (they would load the same code)."""
    return bool(_running)


def rehearsal_wanted() -> bool:
    """None has started yet, and one can run here: the first 3D view waits for one."""
    return not _started and not why_not_rehearse()


def why_not_rehearse() -> str:
    """Why no rehearsal here ('' when one can run)."""
    app = QGuiApplication.instance()
    if app is None:
        return "no window"
    if app.platformName() in _NO_GL:
        return f"the '{app.platformName()}' platform draws no OpenGL"
    if not QOpenGLContext.supportsThreadedOpenGL():
        return "Qt cannot use OpenGL from another thread here"
    return ""


def rehearse_first_draw(runner) -> bool:
    """Start :func:`rehearsal_job` in ``runner`` (an :class:`explorer.workers.JobRunner`), once per
    process, where it can run (:func:`why_not_rehearse`). Returns whether it started."""
    if not rehearsal_wanted():
        return False
    _started.append(True)
    surface = QOffscreenSurface()
    surface.setFormat(QSurfaceFormat.defaultFormat())
    surface.create()
    if not surface.isValid():
        return False
    _running.append(surface)

    def ended(result=None, cancelled: bool = False) -> None:
        if isinstance(result, Rehearsal):
            _results.append(result)
            if result.status.ok:
                remember_gl_status(result.status)
        if surface in _running:
            _running.remove(surface)
            if cancelled:  # (closing the window): the job stops at its next step, perhaps after drawing
                _kept.append(surface)
            else:  # the job has returned or raised: its context is gone
                surface.destroy()
            rehearsal_signals().ended.emit()

    runner.succeeded.connect(ended)
    runner.failed.connect(ended)
    runner.cancelled.connect(lambda: ended(cancelled=True))
    runner.start(rehearsal_job, surface)
    return True


def rehearsal_job(surface: QOffscreenSurface) -> Iterator[tuple[float, str]]:
    """Make an OpenGL context on ``surface`` in this (a worker's) thread, ask the driver its version and
    draw pyqtgraph's points and lines into a :data:`SIZE`-pixel framebuffer; returns a :class:`Rehearsal`.
    Never raises for the driver's failures: they are in the status's reason."""
    yield 0.0, "Preparing 3D"
    ctx = QOpenGLContext()
    ctx.setFormat(surface.format())
    if not ctx.create():
        return Rehearsal(GLStatus(False, "no OpenGL context could be made"))
    if not ctx.makeCurrent(surface):
        return Rehearsal(GLStatus(False, "no OpenGL context could be made current"))
    try:
        from OpenGL import GL

        status = answered(GL.glGetString(GL.GL_VERSION), GL.glGetString(GL.GL_RENDERER))
        if not status.ok:
            return Rehearsal(status)
        yield 0.5, "Preparing 3D"
        return Rehearsal(status, _draw(ctx))
    except Exception as exc:  # PyOpenGL's errors, a driver's: the 3D view says so when it is asked for
        from explorer.core.errors import user_message

        return Rehearsal(GLStatus(False, f"the OpenGL driver failed ({user_message(exc)})"))
    finally:
        ctx.doneCurrent()


def _draw(ctx: QOpenGLContext) -> int:
    """Points and lines with the 3D view's shaders (pyqtgraph's) into a framebuffer; the pixels lit."""
    import numpy as np
    from OpenGL import GL
    from OpenGL.GL import shaders
    from pyqtgraph.opengl.items import GLLinePlotItem, GLScatterPlotItem
    from PySide6.QtOpenGL import QOpenGLBuffer, QOpenGLFramebufferObject, QOpenGLVertexArrayObject

    core = ctx.format().version() >= (3, 1)
    glsl = "#version 140\n" if core else "#version 120\n"
    fbo = QOpenGLFramebufferObject(SIZE, SIZE, QOpenGLFramebufferObject.Attachment.Depth)
    vao = QOpenGLVertexArrayObject()
    vbo = QOpenGLBuffer(QOpenGLBuffer.Type.VertexBuffer)
    try:
        fbo.bind()
        if vao.create():
            vao.bind()
        GL.glViewport(0, 0, SIZE, SIZE)
        GL.glClearColor(0, 0, 0, 0)
        GL.glClear(GL.GL_COLOR_BUFFER_BIT | GL.GL_DEPTH_BUFFER_BIT)
        GL.glEnable(GL.GL_DEPTH_TEST)
        GL.glEnable(GL.GL_BLEND)
        GL.glBlendFunc(GL.GL_SRC_ALPHA, GL.GL_ONE_MINUS_SRC_ALPHA)
        if not core:
            GL.glEnable(GL.GL_POINT_SPRITE)
        GL.glEnable(GL.GL_PROGRAM_POINT_SIZE)
        points = np.array([[-0.5, -0.5, 0, 1], [0.5, 0.5, 0, 1], [0.5, -0.5, 0, 1], [-0.5, 0.5, 0, 1]], np.float32)
        vbo.create()
        vbo.bind()
        vbo.allocate(points, points.nbytes)
        GL.glVertexAttribPointer(0, 4, GL.GL_FLOAT, False, 0, None)
        GL.glEnableVertexAttribArray(0)
        identity = np.eye(4, dtype=np.float32)
        for item, mode in ((GLScatterPlotItem, GL.GL_POINTS), (GLLinePlotItem, GL.GL_LINES)):
            sources = item.SHADER_CORE if core else item.SHADER_LEGACY
            program = shaders.compileProgram(*[shaders.compileShader([glsl, s], k) for k, s in sources.items()])
            for loc, name in enumerate(("a_position", "a_color", "a_size")):
                GL.glBindAttribLocation(program, loc, name)
            GL.glLinkProgram(program)
            GL.glUseProgram(program)
            GL.glVertexAttrib4f(1, 1.0, 1.0, 1.0, 1.0)
            GL.glVertexAttrib1f(2, 6.0)
            GL.glUniformMatrix4fv(GL.glGetUniformLocation(program, "u_mvp"), 1, False, identity)
            for name in ("u_modelview",):
                loc = GL.glGetUniformLocation(program, name)
                if loc >= 0:
                    GL.glUniformMatrix4fv(loc, 1, False, identity)
            loc = GL.glGetUniformLocation(program, "u_scale")
            if loc >= 0:
                GL.glUniform1f(loc, 0.0)
            GL.glDrawArrays(mode, 0, len(points))
            GL.glUseProgram(0)
            GL.glDeleteProgram(program)
        GL.glDisableVertexAttribArray(0)
        vbo.release()
        GL.glFinish()
        image = fbo.toImage()
        return sum(1 for y in range(SIZE) for x in range(SIZE) if image.pixelColor(x, y).alpha() > 0)
    finally:
        vbo.destroy()
        if vao.isCreated():
            vao.destroy()
        fbo.release()
        del fbo
