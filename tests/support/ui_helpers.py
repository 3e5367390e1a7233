"""Helpers shared by the UI tests (a uniquely named module: every test folder
has its own conftest.py, so "import conftest" would be ambiguous)."""

from __future__ import annotations

import time

import numpy as np

LOAD_TIMEOUT = 60_000


#: rows converted to float64 at a time (a whole float64 copy of a 50,257 x 768 table is 309 MB)
_CHUNK = 8192


def _cosines(matrix: np.ndarray, i: int) -> np.ndarray:
    q = matrix[i].astype(np.float64)
    nq = np.linalg.norm(q)
    cos = np.empty(len(matrix))
    for s in range(0, len(matrix), _CHUNK):
        m = matrix[s : s + _CHUNK].astype(np.float64)
        cos[s : s + len(m)] = m @ q / np.maximum(np.sqrt(np.einsum("ij,ij->i", m, m)) * nq, 1e-12)
    cos[i] = -np.inf
    return cos


def assert_nearest(matrix: np.ndarray, i: int, ids, tol: float = 1e-5) -> None:
    """``ids`` are the len(ids) nearest rows of row i by cosine, best first.

    Checked against float64 cosines with a tolerance, so that two rows whose
    cosines tie to within float32 rounding may come in either order (the
    order of float32 sums differs between CPUs).
    """
    cos = _cosines(matrix, i)
    got = cos[list(ids)]
    assert i not in ids and len(set(ids)) == len(ids)
    assert np.all(np.diff(got) <= tol), got  # best first
    kth = np.sort(cos)[::-1][len(ids) - 1]
    assert got.min() >= kth - tol, (got, kth)  # none better was left out


def load(qtbot, ex, spec: str, ok: bool = True):
    """Open ``spec`` and wait for the load to end; returns the state's table."""
    with qtbot.waitSignal(ex.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        ex.open_spec(spec)
    assert blocker.args == [ok], ex.last_error
    return ex.state.table


def standalone_view(qtbot, view_cls, size=(1000, 700), **kwargs):
    """A view on its own AppState (and a JobRunner for views that still take
    ``runner=``), wired like the app wires it; ``kwargs`` go to the view.

    A generator for fixtures: yields (view, state, runner), then stops the
    runner and the state's jobs. Views that follow the state's computations
    take no runner; they get only the state.
    """
    import inspect

    from explorer.app import make_app
    from explorer.state.app_state import AppState
    from explorer.workers import JobRunner, await_all_workers

    make_app()
    state = AppState()
    runner = JobRunner()
    if "runner" in inspect.signature(view_cls).parameters:
        kwargs.setdefault("runner", runner)
    v = view_cls(state, **kwargs)
    for name, slot in (("token_selected", state.set_selected_token), ("token_added", state.add_extra_token)):
        if hasattr(v, name):  # the Cost view adds no tokens
            getattr(v, name).connect(slot)
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    yield v, state, runner
    runner.cancel(emit=False)
    for job in state.findChildren(JobRunner):
        job.cancel(emit=False)
    await_all_workers()


def click_chip(qtbot, strip, position: int) -> None:
    """Click the chip at ``position`` of a TokenStrip, where it is drawn."""
    from PySide6.QtCore import Qt

    rect = strip.chips.chip_rect(position)
    strip.scroll.ensureVisible(int(rect.center().x()), int(rect.center().y()))
    qtbot.mouseClick(strip.chips, Qt.LeftButton, pos=rect.center().toPoint())


def wait_neighbors(qtbot, state, timeout: int = 30_000):
    """Wait until the state's neighbours of the selected token have landed; returns their ids."""
    qtbot.waitUntil(lambda: state.neighbors.value is not None
                    and state.neighbors.value.token_id == state.selected_id, timeout=timeout)
    return state.neighbors.value.ids()


def wait_tokens(qtbot, state, text: str, timeout: int = 30_000):
    """Set ``text`` and wait until its tokens are installed (long texts tokenize in a worker)."""
    state.set_text(text)
    qtbot.waitUntil(lambda: state.tokenized.text == text and not state.tokenizing, timeout=timeout)
    return state.tokens


class SceneClick:
    """A left click at a scene position, as pyqtgraph's scene reports it
    (for handlers of ``scene().sigMouseClicked``)."""

    def __init__(self, scene_pos):
        self._pos = scene_pos

    def button(self):
        from PySide6.QtCore import Qt

        return Qt.LeftButton

    def scenePos(self):
        return self._pos


def settle_layout(rounds: int = 5) -> None:
    """Run the posted events and layout requests ``rounds`` times over (a layout pass can
    post another): the layout a test records is the one the window settles in, whatever
    the machine's speed (a fixed wait could record it half done)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    app = QCoreApplication.instance()
    for _ in range(rounds):
        app.processEvents()
        app.sendPostedEvents(None, QEvent.LayoutRequest)


def layout_watch(*widgets, shows: bool = False):
    """A recorder of the height changes of ``widgets`` (and, with ``shows``, of their show and
    hide events): its ``seen`` lists them as (name, old height, new height) and (name, "shown" /
    "hidden"). For tests that a result arriving leaves the layout where it is."""
    from PySide6.QtCore import QEvent, QObject

    class LayoutWatch(QObject):
        def __init__(self):
            super().__init__()
            self.seen = []

        def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
            kind, name = event.type(), obj.objectName() or type(obj).__name__
            if shows and kind in (QEvent.Show, QEvent.Hide):
                self.seen.append((name, "shown" if kind == QEvent.Show else "hidden"))
            elif kind == QEvent.Resize and event.oldSize().height() not in (-1, event.size().height()):
                self.seen.append((name, event.oldSize().height(), event.size().height()))
            return False

    watch = LayoutWatch()
    for w in widgets:
        w.installEventFilter(watch)
    return watch


def python_calls_during(action) -> list[str]:
    """The Python functions called (on this thread) while ``action()`` runs, by name: Qt
    calling into Python from C++ (a paint asking a Python model, a style's method) shows here.
    Each such call waits for the GIL while a worker runs Python."""
    import sys

    calls: list[str] = []

    def profile(frame, event, _arg):
        if event == "call":
            calls.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


def ticker_in_reported_turns(monkeypatch, order: list):
    """The window's turns reported (as make_app does), a rest only past 250 ms (a busy machine may pause
    this thread between turns for more than the 1 ms that counts as one), and a single-shot timer of the
    window, not started, that appends "tick" to ``order``."""
    from PySide6.QtCore import QCoreApplication, Qt, QTimer

    from explorer.core import runtime
    from explorer.ui.application import report_turns

    report_turns(QCoreApplication.instance())
    monkeypatch.setattr(runtime, "REST_S", 0.25)
    ticker = QTimer()
    ticker.setTimerType(Qt.PreciseTimer)
    ticker.setSingleShot(True)
    ticker.timeout.connect(lambda: order.append("tick"))
    return ticker


def click_then_timer(qtbot, monkeypatch, start_work) -> list:
    """A click (30 ms of work in a turn of the event loop) that calls ``start_work(order)`` (which puts off
    something that appends "work" to ``order``, by a timer of 1 ms), then starts a timer of the window
    (1 ms, so due after the work's). Returns the order of "click", the timer's "tick" and "work"."""
    from PySide6.QtCore import QTimer

    order = []
    ticker = ticker_in_reported_turns(monkeypatch, order)

    def click():
        start_work(order)
        ticker.start(1)
        time.sleep(0.03)  # longer than a pass's budget
        order.append("click")

    QTimer.singleShot(20, click)
    qtbot.waitUntil(lambda: "work" in order and "tick" in order, timeout=5000)
    return order

