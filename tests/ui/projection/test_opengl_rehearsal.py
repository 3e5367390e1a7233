"""The 3D view's first drawing rehearsed off the window's thread (opengl.rehearsal)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

from tests.support.x_server import private_display

#: the app on a private X display, as a user starts it; 3D turned on for the first time (``toggle``), or
#: turned on and the window closed at once (``close``). When the rehearsal ends, every mapped library's
#: pages are dropped from the page cache (what is mapped in the process stays), as a machine that
#: reclaims files unread for a while does: what do the 3D view's first frames read on the window's thread?
_SCRIPT = """
import os, resource, sys, time
from PySide6.QtCore import QEventLoop, QSettings, QTimer
from explorer.app import Explorer, make_app
from explorer.ui.projection.opengl import rehearsal, support
from explorer.ui.projection.opengl.driver import mapped_libraries

def wait(cond, what, timeout=90):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise SystemExit("timed out waiting for " + what)
        loop = QEventLoop(); QTimer.singleShot(20, loop.quit); loop.exec()

def on_ended():  # connected before the view's own slot: runs first, before the 3D view is made
    ended.append(support.gl_probed())
    for path in mapped_libraries():
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
    before.append(resource.getrusage(resource.RUSAGE_THREAD).ru_inblock)

mode, ini = sys.argv[1], sys.argv[2]
app = make_app()
ex = Explorer(QSettings(ini, QSettings.IniFormat))
ex.window.resize(1024, 700); ex.window.show()
ended, before = [], []
rehearsal.rehearsal_signals().ended.connect(on_ended)
ex.start(model="toy:cat-sat", text="the cat sat")
wait(lambda: ex.state.table is not None, "the model")
ex.window.show_view("projection")
wait(lambda: ex.view_built("projection") and ex.projection_view.plot_pages.cloud is not None, "the projection")
pages = ex.projection_view.plot_pages
pages.toggle.setChecked(True)
seen = (rehearsal.rehearsal_wanted(), pages.showing_3d,
        pages.notice.isVisible() and "Preparing 3D" in pages.notice.text())
if mode == "close":
    ex.window.close()  # as the user closes it: the imports or the rehearsal cancelled, perhaps while it draws
    app.processEvents()
    print(repr(seen), flush=True)
    if not ex.shutdown(wait_ms=500):  # as explorer.launch ends: a job that would not stop is not waited for
        sys.stderr.flush()
        os._exit(0)
    sys.exit(0)
wait(lambda: ended, "the rehearsal")
wait(lambda: pages.gl is not None and pages.gl.scene.complete, "the first 3D frames")
read_kb = (resource.getrusage(resource.RUSAGE_THREAD).ru_inblock - before[0]) // 2
done = rehearsal.last_rehearsal()
print(repr((done.status.ok, done.status.renderer == support.gl_status().renderer, done.lit, ended, seen, read_kb,
            pages.showing_3d)))
ex.shutdown(wait_ms=3000)
"""


def _run(mode: str, tmp_path, stderr: list | None = None) -> tuple:
    with private_display() as display:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        env.pop("QT_XCB_GL_INTEGRATION", None)
        env.pop("WAYLAND_DISPLAY", None)
        done = subprocess.run([sys.executable, "-c", _SCRIPT, mode, str(tmp_path / "settings.ini")],
                              capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    if stderr is not None:
        stderr.append(done.stderr)
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="drops files from the page cache (posix_fadvise)")
def test_3d_first_asked_for_waits_for_a_rehearsal_and_the_window_then_reads_no_driver_code(tmp_path):
    """In a walk the first 3D toggle stalled the window 407 ms: its thread read 2.8 MB of the driver's
    code from disk (42-68 MB with the page cache emptied). Asked for the first time, 3D says it is
    preparing and shows 2D while a worker draws points and lines with the view's shaders; that worker's
    context answers whether OpenGL works; and with every library's unmapped pages then dropped from
    memory, the 3D view's first frames read next to nothing on the window's thread."""
    ok, same_renderer, lit, ended, seen, read_kb, showing = _run("toggle", tmp_path)
    wanted, showing_at_once, preparing = seen
    if not wanted:
        pytest.skip("no rehearsal here (no OpenGL from another thread)")
    assert not showing_at_once and preparing
    if not ok:
        pytest.skip("this X server makes no OpenGL context in a worker")
    assert same_renderer and lit > 0, "the rehearsal drew nothing"
    assert ended == [True], "the window's thread made a context of its own to ask about OpenGL"
    assert showing
    assert read_kb < 8 * 1024, f"the window's thread read {read_kb:,} KB from disk in its first 3D frames"


def test_closing_the_window_while_3d_is_prepared_ends_the_app_quietly(tmp_path):
    """The window closed while a worker imports the 3D code or draws its rehearsal: the surface it draws
    on is not destroyed under it (the close does not wait long for it), and the process ends without a
    crash or a traceback."""
    stderr = []
    wanted, _, preparing = _run("close", tmp_path, stderr)
    if not wanted:
        pytest.skip("no rehearsal here")
    assert preparing
    assert "Traceback" not in stderr[0] and "Error" not in stderr[0], stderr[0][-3000:]


def test_no_rehearsal_where_no_opengl_is_drawn(qtbot):
    """Offscreen (the tests' platform) draws no OpenGL: nothing is started, and the reason says why."""
    from PySide6.QtWidgets import QApplication

    from explorer.ui.projection.opengl import rehearsal
    from explorer.workers import JobRunner

    if QApplication.instance().platformName() != "offscreen":
        pytest.skip("the tests' platform here draws OpenGL")
    runner = JobRunner()
    assert "offscreen" in rehearsal.why_not_rehearse()
    assert rehearsal.rehearse_first_draw(runner) is False
    assert not runner.running and not rehearsal.rehearsing()

