"""GUI measurements for ``python -m explorer bench --gui`` (a real window when a
display is set, e.g. under ``xvfb-run``; Qt offscreen otherwise).

Kept out of ``core`` because it drives the real window. A *stall* is the
longest gap between ticks of a 5 ms timer on the GUI thread while something
happens: the time the window could not answer the user.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

#: the targets of issue 10, printed beside the figures
TARGETS = {
    "select_token_ms_median": ("<=", 16),
    "select_token_ms_max": ("<=", 50),
    "select_token_big_ms_median": ("<=", 30),
    "scatter_fps": (">=", 60),
    "scatter_big_fps": (">=", 30),
    "chart_click_ms_median": ("<=", 16),
    "paste_stall_ms": ("<=", 100),
    "big_open_stall_ms": ("<=", 100),
    "quit_during_load_s": ("<=", 1),
    "open_stall_ms": ("<=", 100),
    "cli_open_stall_ms": ("<=", 100),
    "start_to_interactive_default_s": ("<=", 1.5),
}
BIG_SPEC = "random:128256x4096"
#: the scatter of issue 15: every row of a 256,000-token vocabulary, density map on
SCATTER_BIG_SPEC = "random:256000x64"
TICK_MS = 5

#: the tables whose opening must not stall the window (issue 23), from the picker and the command line
OPEN_SPECS = ("minilm", "smollm2", BIG_SPEC)

# the app started from the command line (``python -m explorer --model SPEC``): prints READY and
# the seconds since the process began once the model is drawn, then STALL and the longest gap
# between ticks of a 5 ms timer from the window's first show until the model is open, the
# background work done and the window left alone SETTLE s more. explorer.launch is imported by
# the command itself, after its first steps; the hook below records the Explorer it makes.
_LAUNCH_SCRIPT = r"""
import importlib.abc, importlib.util, os, sys, tempfile, time
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp()
made = []
def record(launch):
    global QTimer
    from PySide6.QtCore import QTimer
    class Recorded(launch.Explorer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
            self.load_finished.connect(self._ready)
            QTimer.singleShot(0, tick)
        def _ready(self, ok):
            from explorer.ui.common.paint_once import paint_now
            with paint_now():
                self.window.repaint()
            print(f"READY {time.time() - START:.6f}" if ok else "FAILED", flush=True)
    launch.Explorer = Recorded
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "explorer.launch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run_module = spec.loader.exec_module
        def exec_module(module):
            run_module(module)
            record(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())
gap = {"last": None, "longest": 0.0, "met": None}
def tick():
    now = time.perf_counter()
    ex = made[0] if made else None
    if ex is None or not ex.window.isVisible():
        QTimer.singleShot(1, tick)
        return
    if gap["last"] is not None:
        gap["longest"] = max(gap["longest"], now - gap["last"])
    gap["last"] = now
    if gap["met"] is None and ex.state.table is not None and not ex.busy():
        gap["met"] = now
    if gap["met"] is not None and now - gap["met"] >= SETTLE:
        print(f"STALL {gap['longest'] * 1000:.1f}", flush=True)
        ex.window.close()
        return
    QTimer.singleShot(TICK, tick)
from explorer.cli import main
os._exit(main(["--model", SPEC, "--size", "1280x800"]))
"""


# closes the real app (explorer.launch.run) while a model loads and says when
_QUIT_SCRIPT = r"""
import os, sys, time, tempfile
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp()
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from explorer import app as A, launch
qapp = A.make_app()
def close_when_loading():
    win = next((w for w in QApplication.topLevelWidgets() if w.inherits("QMainWindow")), None)
    if win is None or not win.isVisible() or not win.progress.isVisible() or win.progress.value() < 300:
        QTimer.singleShot(5, close_when_loading)
        return
    print(f"CLOSING {time.time():.6f}", flush=True)
    win.close()
QTimer.singleShot(5, close_when_loading)
code = launch.run(model=SPEC, size=(1280, 800))
os._exit(code)
"""


def _child_env() -> dict:
    """The parent's environment; offscreen only when there is no display to use."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM"):
        return dict(os.environ)
    return dict(os.environ, QT_QPA_PLATFORM="offscreen")


def launch_and_open(spec: str = "default", settle_s: float = 0.5) -> tuple[float, float]:
    """Start the real app on ``spec`` in a fresh process (as ``python -m explorer --model
    spec`` does). Returns the seconds from launching the process to the window drawn with the
    model loaded, and the longest stall in ms from the window's first show until the model is
    open, the background work is done and ``settle_s`` more have passed."""
    script = (_LAUNCH_SCRIPT.replace("SPEC", repr(spec)).replace("SETTLE", repr(settle_s))
              .replace("TICK", str(TICK_MS)))
    start = time.time()  # the child's clock is the same wall clock
    proc = subprocess.Popen([sys.executable, "-c", f"START = {start!r}\n" + script],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_child_env())
    try:
        out, _ = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise RuntimeError(f"the window did not come up on {spec} within 300 s") from None
    words = dict(line.split(maxsplit=1) for line in out.splitlines() if " " in line)
    if "READY" not in words or "STALL" not in words:
        raise RuntimeError(f"the window did not come up on {spec} (it said: {out.strip()[-200:] or 'nothing'})")
    return float(words["READY"]), float(words["STALL"])


def time_to_interactive(spec: str = "default") -> float:
    """Seconds from launching a fresh process to the window drawn with the model loaded."""
    return launch_and_open(spec)[0]


def quit_during_load(spec: str = BIG_SPEC) -> float:
    """Seconds from closing the window while ``spec`` loads to the end of the process."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", _QUIT_SCRIPT.replace("SPEC", repr(spec))],
                                stdout=subprocess.PIPE, stderr=err, text=True, env=_child_env())
        closing = None
        for line in proc.stdout:
            if line.startswith("CLOSING"):
                closing = float(line.split()[1])
        proc.wait(timeout=120)
        ended = time.time()
        if closing is None:
            err.seek(0)
            last = (err.read().strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"the window was not closed during the load of {spec} "
                               f"(the process ended with status {proc.returncode}: {last})")
    return ended - closing


class StallMeter:
    """Runs the event loop until a condition holds, measuring the longest gap
    between ticks of a 5 ms timer (a stall of the GUI thread)."""

    def __init__(self, app):
        from PySide6.QtCore import QEventLoop, QTimer

        self._app, self._loop = app, QEventLoop()
        self._timer = QTimer()
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._cond = lambda: True
        self._last = 0.0
        self.longest = 0.0
        #: the longest stall of any run_until so far, in ms, and what was happening
        self.worst_ms, self.worst_action = 0.0, ""

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self._last)
        self._last = now
        if self._cond():
            self._loop.quit()

    def run_until(self, cond, *, action: str, timeout_s: float = 120.0, settle_s: float = 0.3) -> float:
        """Run until ``cond()`` then ``settle_s`` more; returns the longest stall in ms
        (``action`` names what happened, for :attr:`worst_action`)."""
        deadline = time.perf_counter() + timeout_s
        state = {"met_at": None}

        def done() -> bool:
            now = time.perf_counter()
            if state["met_at"] is None and cond():
                state["met_at"] = now
            return (state["met_at"] is not None and now - state["met_at"] >= settle_s) or now > deadline

        self._cond = done
        self.longest = 0.0
        self._last = time.perf_counter()
        self._timer.start()
        self._loop.exec()
        self._timer.stop()
        if state["met_at"] is None:
            raise RuntimeError("timed out waiting for the window")
        if self.longest * 1000 > self.worst_ms:
            self.worst_ms, self.worst_action = self.longest * 1000, action
        return self.longest * 1000


def _select_times(app, ex, ids, reps: int = 3) -> list[float]:
    """Milliseconds to select a token and repaint every visible view, per click."""
    from explorer.ui.common.paint_once import paint_now

    times = []
    for rep in range(reps):
        for i in ids:
            t0 = time.perf_counter()
            ex.state.set_selected_token(i + rep)
            with paint_now():  # every visible view redrawn, synchronously
                ex.window.repaint()
            times.append((time.perf_counter() - t0) * 1000)
            app.processEvents()
    return times


def bench_gui() -> dict:
    """The GUI figures of issue 10 (see :data:`TARGETS`), on a 1280x800 window: a real one
    when a display is set (``xvfb-run`` counts), offscreen otherwise; ``platform`` says which,
    ``longest_stall_action`` what caused the longest stall."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QGuiApplication

    from explorer.app import Explorer, make_app
    from explorer.core.sources import package_path
    from explorer.warm_up import IDLE_MODULES

    app = make_app()
    ex = Explorer(settings=QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.IniFormat))
    ex.freeze_when_warm = True  # as explorer.launch.run does
    ex.window.resize(1280, 800)
    ex.window.show()
    meter = StallMeter(app)
    loaded = {}
    ex.load_finished.connect(lambda ok: loaded.__setitem__("ok", ok))

    def open_and_wait(spec: str) -> tuple[float, float]:
        loaded.clear()
        t0 = time.perf_counter()
        ex.open_spec(spec)
        stall = meter.run_until(lambda: "ok" in loaded and not ex.busy(), action=f"open {spec}")
        if not loaded.get("ok"):
            raise RuntimeError(f"could not open {spec}: {ex.last_error}")
        return time.perf_counter() - t0, stall

    out: dict = {}
    # every view subscribed, every tab visited once, then back to the matrix
    open_and_wait("random:50257x768")
    # the app's imports for its first idle moment (torch._dynamo, 1.3-1.5 s holding the GIL) before
    # anything is timed: the figures are the window's once it has settled, not while a job imports
    meter.run_until(lambda: all(m in sys.modules for m in IDLE_MODULES) and not ex.busy(), settle_s=0.2,
                    action="the imports of the first idle moment")
    ids = [42, 7, 50000, 1234, 31337, 5, 25000, 999, 40000, 12]
    ex.state.set_text(" ".join(str(i) for i in ids))
    for name in ex.window.view_names():
        ex.window.show_view(name)
        meter.run_until(lambda: not ex.busy(), settle_s=0.2, action=f"show the {name} view")
    ex.window.show_view("matrix")
    meter.run_until(lambda: not ex.busy(), settle_s=0.2, action="back to the matrix view")
    times = _select_times(app, ex, ids)
    out["select_token_ms_median"] = statistics.median(times)
    out["select_token_ms_max"] = max(times)
    out.update(_scatter_fps(app, ex, meter))
    out.update(scatter_big_fps(app, ex, meter))

    # the biggest table: opening it, then clicking in it
    _seconds, out["big_open_stall_ms"] = open_and_wait(BIG_SPEC)
    ex.state.set_text(" ".join(str(i) for i in (42, 7, 128000, 1234, 99999, 5, 64000, 999, 100000, 12)))
    meter.run_until(lambda: not ex.busy(), settle_s=0.1, action="ten ids typed for the biggest table")
    big = _select_times(app, ex, [42, 7, 128000, 1234, 99999, 5, 64000, 999, 100000, 12])
    out["select_token_big_ms_median"] = statistics.median(big)
    out["select_token_big_ms_max"] = max(big)

    # the pretrained tables, from the picker (the big one was opened above)
    out["open_stall_ms"] = {BIG_SPEC: out["big_open_stall_ms"]}
    for spec in OPEN_SPECS:
        if spec != BIG_SPEC and package_path(spec) is not None:
            seconds, out["open_stall_ms"][spec] = open_and_wait(spec)
            if spec == "minilm":
                out["open_minilm_to_drawn_s"] = seconds
    if package_path("minilm") is None:
        open_and_wait("default")

    # a pasted book into a real tokenizer: the clipboard's 1 MB into the text box, tokenized
    book = ("It was the best of times, it was the worst of times, it was the age of wisdom. " * 13_000)[:1_000_000]
    QGuiApplication.clipboard().setText(book)
    edit = ex.window.token_strip.edit
    edit.setFocus()
    edit.selectAll()
    edit.paste()
    out["paste_stall_ms"] = meter.run_until(
        lambda: ex.state.text == edit.text() and ex.state.tokenized.text == edit.text() and not ex.busy(),
        action="paste 1 MB of text")
    out["platform"] = app.platformName()
    out["longest_stall_ms"], out["longest_stall_action"] = meter.worst_ms, meter.worst_action
    out["paste_chars"] = len(ex.state.text)
    out["paste_tokens"] = len(ex.state.tokens)
    ex.shutdown()
    ex.window.close()
    out["quit_during_load_s"] = quit_during_load(BIG_SPEC)
    out["start_to_interactive_default_s"] = time_to_interactive("default")
    # the same tables from the command line: a fresh process each, the window's stalls from its first show
    out["cli_open_stall_ms"] = {spec: launch_and_open(spec)[1] for spec in OPEN_SPECS
                                if spec == BIG_SPEC or package_path(spec) is not None}
    out["targets"] = {k: f"{op} {v}" for k, (op, v) in TARGETS.items()}
    return out


def _scatter_fps(app, ex, meter, seconds: float = 3.0) -> dict:
    """Frames per second while panning and zooming the 50,257-point projection."""
    win = ex.window
    win.show_view("projection")
    meter.run_until(lambda: not ex.busy() and ex.projection_view.result is not None, settle_s=0.5,
                    action="the projection of 50,257 rows")
    view = ex.projection_view
    fps = _pan_zoom_fps(view, seconds)
    points = int(len(view.result.ids)) if view.result is not None else 0
    clicks = _chart_click_times(app, view)
    win.show_view("matrix")
    return {"scatter_points": points, "scatter_fps": fps, "chart_click_ms_median": statistics.median(clicks),
            "chart_click_ms_max": max(clicks)}


def _chart_click_times(app, view, reps: int = 3) -> list[float]:
    """Milliseconds from a click on a bar of a linked chart (the id range's) to the map, every
    chart and the table redrawn, per click: each bar chosen, then no longer."""
    from explorer.ui.common.paint_once import paint_now

    times = []
    for _ in range(reps):
        for bar in (2, 5, 2, 5):
            t0 = time.perf_counter()
            view.points.toggle_bar("id_range", bar)
            with paint_now():
                view.window().repaint()
            times.append((time.perf_counter() - t0) * 1000)
            app.processEvents()
    return times


def scatter_big_fps(app, ex, meter, seconds: float = 3.0) -> dict:
    """Frames per second while panning and zooming the PCA of every row of
    :data:`SCATTER_BIG_SPEC` (256,000 points), its density map drawn."""
    win = ex.window
    ex.open_spec(SCATTER_BIG_SPEC)
    meter.run_until(lambda: ex.state.table is not None and ex.state.table.spec == SCATTER_BIG_SPEC
                    and not ex.busy(), timeout_s=300, action=f"open {SCATTER_BIG_SPEC}")
    win.show_view("projection")
    view = ex.projection_view
    view.set_fit_mode("all")
    density = view.plot.density

    def drawn() -> bool:
        res = view.result
        return (not ex.busy() and res is not None and res.spec == SCATTER_BIG_SPEC and res.mode == "all"
                and (not density.shown or density.value is not None))

    meter.run_until(drawn, timeout_s=300, settle_s=0.5, action="the projection of 256,000 rows")
    fps = _pan_zoom_fps(view, seconds)
    out = {"scatter_big_points": int(len(view.result.ids)), "scatter_big_fps": fps,
           "scatter_big_density": bool(density.shown)}
    win.show_view("matrix")
    return out


def _pan_zoom_fps(view, seconds: float) -> float:
    """Frames per second of the projection's plot panned and zoomed, from the whole cloud.

    It pans back and forth: panning one way only carried the points off
    screen, so the faster the frames, the fewer points the later ones drew.
    """
    from explorer.ui.common.paint_once import paint_now

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
        with paint_now():
            port.repaint()
        n += 1
    return n / (time.perf_counter() - t0)


def _verdict(key: str, value: float) -> str:
    op, target = TARGETS[key]
    ok = value <= target if op == "<=" else value >= target
    return f"(target {op} {target:g}: {'met' if ok else 'NOT met'})"


def format_gui(results: dict) -> str:
    r = results
    lines = [f"GUI ({r.get('platform', 'offscreen')}, 1280x800; a stall is the longest gap between ticks of a "
             "5 ms timer)"]
    lines.append(f"  select a token, 50,257 x 768, every tab visited: median {r['select_token_ms_median']:.1f} ms "
                 f"{_verdict('select_token_ms_median', r['select_token_ms_median'])}, "
                 f"max {r['select_token_ms_max']:.1f} ms {_verdict('select_token_ms_max', r['select_token_ms_max'])}")
    lines.append(f"  select a token, 128,256 x 4,096: median {r['select_token_big_ms_median']:.1f} ms "
                 f"{_verdict('select_token_big_ms_median', r['select_token_big_ms_median'])}")
    lines.append(f"  pan/zoom the projection of {r['scatter_points']:,} points: {r['scatter_fps']:.1f} frames/s "
                 f"{_verdict('scatter_fps', r['scatter_fps'])}")
    if "chart_click_ms_median" in r:
        click = r["chart_click_ms_median"]
        lines.append(f"  click a bar of a linked chart, {r['scatter_points']:,} points: median {click:.1f} ms "
                     f"{_verdict('chart_click_ms_median', click)}, max {r['chart_click_ms_max']:.1f} ms")
    if "scatter_big_fps" in r:
        lines.append(f"  pan/zoom the projection of {r['scatter_big_points']:,} points"
                     f"{' over its density map' if r.get('scatter_big_density') else ''}: "
                     f"{r['scatter_big_fps']:.1f} frames/s {_verdict('scatter_big_fps', r['scatter_big_fps'])}")
    lines.append(f"  paste 1 MB of text ({r.get('paste_chars', 0):,} characters kept, "
                 f"{r.get('paste_tokens', 0):,} tokens): longest stall {r['paste_stall_ms']:.0f} ms "
                 f"{_verdict('paste_stall_ms', r['paste_stall_ms'])}")
    lines.append(f"  open {BIG_SPEC}: longest stall {r['big_open_stall_ms']:.0f} ms "
                 f"{_verdict('big_open_stall_ms', r['big_open_stall_ms'])}")
    lines.append(f"  quit while it loads: {r['quit_during_load_s']:.2f} s "
                 f"{_verdict('quit_during_load_s', r['quit_during_load_s'])}")
    for key, where in (("open_stall_ms", "from the picker"), ("cli_open_stall_ms", "from the command line")):
        for spec, ms in r.get(key, {}).items():
            lines.append(f"  open {spec} {where}: longest stall {ms:.0f} ms {_verdict(key, ms)}")
    if "open_minilm_to_drawn_s" in r:
        lines.append(f"  open MiniLM to a drawn matrix: {r['open_minilm_to_drawn_s']:.2f} s")
    if r.get("longest_stall_action"):
        lines.append(f"  longest stall: {r['longest_stall_ms']:.0f} ms, during: {r['longest_stall_action']}")
    lines.append(f"  start to interactive window, default model: {r['start_to_interactive_default_s']:.2f} s "
                 f"{_verdict('start_to_interactive_default_s', r['start_to_interactive_default_s'])}")
    return "\n".join(lines)
