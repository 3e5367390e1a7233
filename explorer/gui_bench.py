"""GUI measurements for ``python -m explorer bench --gui`` (Qt offscreen).

Kept out of ``core`` because it drives the real window.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

_READY_SCRIPT = r"""
import sys, time
from PySide6.QtCore import QTimer
from explorer.app import Explorer, make_app
app = make_app()
from PySide6.QtCore import QSettings
import tempfile, os
ex = Explorer(settings=QSettings(os.path.join(tempfile.mkdtemp(), 's.ini'), QSettings.IniFormat))
ex.window.resize(1280, 800)
ex.window.show()
def done(ok):
    ex.window.repaint()
    print('READY' if ok else 'FAILED', flush=True)
    ex.shutdown()
    app.quit()
ex.load_finished.connect(done)
QTimer.singleShot(0, lambda: ex.start(model=SPEC))
app.exec()
"""


def time_to_interactive(spec: str = "default") -> float:
    """Seconds from launching a fresh process to the window drawn with the model loaded."""
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _READY_SCRIPT.replace("SPEC", repr(spec))],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    line = proc.stdout.readline().strip()
    t = time.perf_counter() - t0
    proc.wait(timeout=60)
    if line != "READY":
        raise RuntimeError(f"the window did not come up on {spec}")
    return t


def bench_gui() -> dict:
    """Selection latency on a 50,257 x 768 table, start-up and MiniLM opening times."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import tempfile

    from PySide6.QtCore import QEventLoop, QSettings, QTimer

    from .app import Explorer, make_app
    from .core.sources import package_path

    app = make_app()
    ex = Explorer(settings=QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.IniFormat))
    ex.window.resize(1280, 800)
    ex.window.show()

    def wait_load(spec: str) -> float:
        loop = QEventLoop()
        ok = {}
        ex.load_finished.connect(lambda r: (ok.setdefault("ok", r), loop.quit()))
        t0 = time.perf_counter()
        ex.open_spec(spec)
        QTimer.singleShot(120_000, loop.quit)
        loop.exec()
        ex.window.repaint()
        dt = time.perf_counter() - t0
        ex.load_finished.disconnect()
        if not ok.get("ok"):
            raise RuntimeError(f"could not open {spec}: {ex.last_error}")
        return dt

    out: dict = {}
    wait_load("random:50257x768")
    ids = [42, 7, 50000, 1234, 31337, 5, 25000, 999, 40000, 12]
    ex.state.set_text(" ".join(str(i) for i in ids))
    app.processEvents()
    times = []
    for rep in range(3):
        for i in ids:
            t0 = time.perf_counter()
            ex.state.set_selected_token(i + rep)
            ex.window.repaint()  # every visible view redrawn, synchronously
            times.append(time.perf_counter() - t0)
    out["select_token_ms_median"] = statistics.median(times) * 1000
    out["select_token_ms_max"] = max(times) * 1000
    out["select_token_target_ms"] = 50
    out.update(_scatter_fps(app, ex))
    if package_path("minilm") is not None:
        out["open_minilm_to_drawn_s"] = wait_load("minilm")
        out["open_minilm_target_s"] = 4.0
    ex.shutdown()
    ex.window.close()
    out["start_to_interactive_default_s"] = time_to_interactive("default")
    out["start_target_s"] = 3.0
    return out


def _scatter_fps(app, ex, seconds: float = 3.0) -> dict:
    """Frames per second while panning and zooming the 50,257-point projection.

    The view starts from the whole cloud and pans back and forth: panning
    one way only carried the points off screen, so the faster the frames,
    the fewer points the later ones drew.
    """
    from PySide6.QtCore import QEventLoop, QTimer

    win = ex.window
    win.show_view("projection")
    loop = QEventLoop()
    QTimer.singleShot(0, loop.quit)
    t_end = time.perf_counter() + 60
    while ex.busy() and time.perf_counter() < t_end:  # the PCA job
        app.processEvents(QEventLoop.AllEvents, 50)
    view = ex.projection_view
    vb = view.plot.getPlotItem().getViewBox()
    vb.autoRange()
    port = view.plot.viewport()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        cycle = n // 20
        if n % 20 < 10:
            vb.translateBy(x=vb.viewRect().width() * (0.01 if cycle % 4 < 2 else -0.01))
        else:
            vb.scaleBy((0.98, 0.98) if cycle % 2 else (1.02, 1.02))
        port.repaint()
        n += 1
    fps = n / (time.perf_counter() - t0)
    points = int(len(view.result.ids)) if view.result is not None else 0
    win.show_view("matrix")
    return {"scatter_points": points, "scatter_fps": fps, "scatter_target_fps": 60}


def format_gui(results: dict) -> str:
    lines = ["GUI (offscreen, 1280x800)"]
    lines.append(f"  select a token, 50,257 x 768: median {results['select_token_ms_median']:.1f} ms, "
                 f"max {results['select_token_ms_max']:.1f} ms (target < 50 ms)")
    if "scatter_fps" in results:
        lines.append(f"  pan/zoom the projection of {results['scatter_points']:,} points: "
                     f"{results['scatter_fps']:.1f} frames/s (target >= 60)")
    if "open_minilm_to_drawn_s" in results:
        lines.append(f"  open MiniLM to a drawn matrix: {results['open_minilm_to_drawn_s']:.2f} s (target < 4 s)")
    lines.append(f"  start to interactive window, default model: {results['start_to_interactive_default_s']:.2f} s "
                 "(target < 3 s)")
    return "\n".join(lines)
