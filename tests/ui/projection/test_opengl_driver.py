"""The OpenGL driver loaded ahead of the first 3D view, off the window's thread (opengl.driver)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from explorer.ui.projection.opengl.driver import load_gl_driver
from tests.support.x_server import private_display

#: in a fresh process on a private X display: the driver loads while another thread counts (does the
#: loading let the GIL go?); then Qt's first context is made and the libraries it maps are listed
_SCRIPT = """
import sys
from PySide6.QtGui import QGuiApplication, QOpenGLContext
app = QGuiApplication(sys.argv)
import OpenGL.GL  # the warm-up imports PyOpenGL (and libGL) before it loads the driver
from explorer.ui.projection.opengl.driver import load_gl_driver, mapped_libraries
from tests.support.gil import lets_the_gil_go
load, counted = lets_the_gil_go(load_gl_driver)
kept = set(load.libraries) <= mapped_libraries()
mapped = mapped_libraries()
context = QOpenGLContext()
made = context.create()
print(repr((load.reason, len(load.libraries), counted, kept, made, sorted(mapped_libraries() - mapped))))
"""


def test_the_driver_loads_with_the_gil_let_go_and_qt_s_first_context_finds_it_loaded():
    """Qt's first context loaded the driver on the window's thread holding the GIL (37-63 ms of the
    first 3D toggle, Mesa's software driver): loaded ahead through GLX, other threads run
    meanwhile, and Qt's context then maps nothing of the driver's (at most Qt's own GLX plugin)."""
    with private_display() as display:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        env.pop("QT_XCB_GL_INTEGRATION", None)
        env.pop("WAYLAND_DISPLAY", None)
        done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    reason, loaded, counted, kept, made, qt_mapped = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    if not made:
        pytest.skip("this X server makes no OpenGL context")
    assert reason == "" and loaded > 0
    assert counted, "the loading thread held the GIL throughout"
    assert kept, "a library the driver loaded was unloaded when the X connection closed"
    assert [p for p in qt_mapped if "/plugins/" not in p] == []


@pytest.mark.parametrize("platform", ["offscreen", "wayland", "windows", ""])
def test_the_driver_is_loaded_ahead_only_for_x(platform):
    """Elsewhere the first context loads it as before: nothing is asked, and the reason says why."""
    load = load_gl_driver(platform)
    assert load.libraries == () and load.reason


def test_no_display_no_glx(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    load = load_gl_driver("xcb")
    assert load.libraries == () and load.reason in ("no DISPLAY", "not Linux")
