"""The OpenGL driver, loaded before the first 3D view asks for it, off the window's thread.

The first OpenGL context of a process loads the driver: under X (GLX) with Mesa's software
driver, 26 libraries (the driver, LLVM, ICU, ...), all inside Qt's ``QOpenGLContext.create()``
on the window's thread with the GIL held: 37-63 ms of the first toggle of 3D. The warm-up's
worker runs :func:`load_gl_driver` instead: it asks the X server's GLX for a visual on an X
connection of its own, through ctypes, which lets the GIL go for each call, and takes a
reference of its own to every library that loaded meanwhile, so that closing the connection
does not unload them. Qt's first context then only sets up its own connection: 18-26 ms.
The price, for a user who never turns 3D on: about 51 MB more resident (the libraries' pages,
backed by their files and shared with other processes), measured with Mesa's software driver.

No context is made: choosing a visual loads the driver already (a context saved no more), and
asking for a context can end in an X error, whose default handler ends the process.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass

from explorer.core.libraries import map_library

__all__ = ["DriverLoad", "load_gl_driver", "mapped_libraries"]

#: the GLX attributes asked for (GLX_RGBA, GLX_DOUBLEBUFFER, end of list): any driver has such a visual
_VISUAL = (4, 5, 0)


@dataclass(frozen=True)
class DriverLoad:
    """What :func:`load_gl_driver` did.

    Attributes
    ----------
    libraries : tuple of str
        The libraries that loaded while GLX was asked (paths), kept loaded.
    reason : str
        Why nothing was asked (empty when it was).
    """

    libraries: tuple[str, ...] = ()
    reason: str = ""


def mapped_libraries() -> set[str]:
    """The shared libraries this process has mapped (their paths; Linux)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            paths = {line.split(maxsplit=5)[-1].strip() for line in f if "/" in line}
    except OSError:
        return set()
    return {p for p in paths if p.startswith("/") and ".so" in os.path.basename(p)}


def _qt_platform() -> str:
    """The Qt platform of the running app ('' when there is none)."""
    gui = sys.modules.get("PySide6.QtGui")
    if gui is None or gui.QGuiApplication.instance() is None:
        return ""
    return gui.QGuiApplication.platformName()


def _why_not(platform: str) -> str:
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if platform != "xcb":
        return f"the '{platform or 'no'}' platform does not use GLX"
    if os.environ.get("QT_XCB_GL_INTEGRATION", "xcb_glx") != "xcb_glx":
        return "Qt is told to use another OpenGL integration than GLX"
    if not os.environ.get("DISPLAY"):
        return "no DISPLAY"
    return ""


def load_gl_driver(platform: str | None = None) -> DriverLoad:
    """Load the OpenGL driver that Qt's first context would load (see the module's text), with
    the GIL let go. ``platform``: Qt's platform (default: the running app's); only X (``xcb``)
    with GLX is loaded ahead, elsewhere the driver loads with the first context as before.
    Never raises: the first 3D view says what is wrong with OpenGL, if anything is."""
    reason = _why_not(_qt_platform() if platform is None else platform)
    if reason:
        return DriverLoad(reason=reason)
    try:
        return _ask_glx()
    except (OSError, AttributeError) as exc:  # no libX11 or libGL, or one without these functions
        return DriverLoad(reason=f"GLX could not be asked ({exc})")


def _ask_glx() -> DriverLoad:
    # mapped first with the GIL let go (ctypes.CDLL holds it while it maps); both are usually in already
    for name in ("libX11.so.6", "libGL.so.1"):
        if not map_library(name):
            return DriverLoad(reason=f"no {name}")
    x11, gl = ctypes.CDLL("libX11.so.6"), ctypes.CDLL("libGL.so.1")
    x11.XOpenDisplay.restype, x11.XOpenDisplay.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    x11.XDefaultScreen.argtypes = [ctypes.c_void_p]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    x11.XFree.argtypes = [ctypes.c_void_p]
    gl.glXChooseVisual.restype = ctypes.c_void_p
    gl.glXChooseVisual.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    before = mapped_libraries()
    display = x11.XOpenDisplay(None)  # every call through ctypes lets the GIL go
    if not display:
        return DriverLoad(reason="the X display could not be opened")
    try:
        visual = gl.glXChooseVisual(display, x11.XDefaultScreen(display), (ctypes.c_int * len(_VISUAL))(*_VISUAL))
        loaded = sorted(mapped_libraries() - before)
        kept = tuple(p for p in loaded if map_library(p))  # a reference of ours: they stay after the close
        if visual:
            x11.XFree(visual)
    finally:
        x11.XCloseDisplay(display)
    return DriverLoad(libraries=kept, reason="" if visual else "GLX has no such visual")
