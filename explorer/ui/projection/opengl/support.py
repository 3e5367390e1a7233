"""Can this platform draw the projection in 3D?

The 3D view is a pyqtgraph ``GLViewWidget``: it needs PyOpenGL and an
OpenGL context. The offscreen platform has none, a machine without a GL
driver makes none, and a driver may still fail when the first frame is
drawn. :func:`gl_status` answers the first questions once per process
(a context is made on an offscreen surface and asked for its version); the
3D widget reports the last one itself (``GLProjection.failed``). Every
answer is a sentence the view can show as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import user_message

__all__ = ["GLStatus", "gl_status", "gl_probed", "remember_gl_status", "answered"]


@dataclass(frozen=True)
class GLStatus:
    """Whether a 3D view can be drawn.

    Attributes
    ----------
    ok : bool
    reason : str
        Why not, in words for the user (empty when ``ok``).
    renderer : str
        The OpenGL renderer and version (``llvmpipe … · 4.5 …``) when ``ok``.
    """

    ok: bool
    reason: str = ""
    renderer: str = ""


#: the answer, once known (a list: set once, read from any thread)
_known: list[GLStatus] = []


def gl_status() -> GLStatus:
    """Probe once: PyOpenGL and pyqtgraph.opengl import, and an OpenGL
    context can be made current and answers ``glGetString``. (Known already
    when the 3D view's first drawing was rehearsed: :mod:`.rehearsal`.)"""
    if not _known:
        _known.append(_probe())
    return _known[0]


def gl_probed() -> bool:
    """:func:`gl_status` knows its answer (asking makes no context)."""
    return bool(_known)


def remember_gl_status(status: GLStatus) -> None:
    """The answer of a context made elsewhere (:mod:`.rehearsal`), unless one is known already."""
    if not _known:
        _known.append(status)


def _probe() -> GLStatus:
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        return GLStatus(False, "3D needs the window to be running")
    platform = app.platformName()
    try:
        import OpenGL.GL as gl  # noqa: F401  (PyOpenGL)
        import pyqtgraph.opengl  # noqa: F401
    except Exception as exc:  # ImportError, or PyOpenGL finding no libGL (its own error types)
        return GLStatus(False, f"3D needs PyOpenGL with an OpenGL library ({user_message(exc)})")
    from PySide6.QtGui import QOffscreenSurface, QOpenGLContext

    ctx = QOpenGLContext()
    if not ctx.create():
        return GLStatus(False, f"3D needs OpenGL, and the '{platform}' display platform cannot make an "
                               "OpenGL context here")
    surface = QOffscreenSurface()
    surface.setFormat(ctx.format())
    surface.create()
    try:
        if not surface.isValid() or not ctx.makeCurrent(surface):
            return GLStatus(False, f"3D needs OpenGL, and no OpenGL context could be made current on the "
                                   f"'{platform}' display platform")
        try:
            version = gl.glGetString(gl.GL_VERSION)
            renderer = gl.glGetString(gl.GL_RENDERER)
        except Exception as exc:  # PyOpenGL's GLError and friends
            return GLStatus(False, f"3D needs OpenGL, and the OpenGL driver failed ({user_message(exc)})")
        finally:
            ctx.doneCurrent()
    finally:
        surface.destroy()
    return answered(version, renderer)


def answered(version, renderer) -> GLStatus:
    """The status of a driver that said ``glGetString``'s ``version`` and ``renderer`` (bytes, or None)."""
    if not version:
        return GLStatus(False, "3D needs OpenGL, and the OpenGL driver did not answer")
    text = lambda b: b.decode("ascii", "replace") if isinstance(b, bytes) else str(b)  # noqa: E731
    return GLStatus(True, "", f"{text(renderer)} · OpenGL {text(version)}")
