"""The monkey: a seeded random walk of user actions through the real window's public widgets
(``python -m explorer bench --monkey N``; issue 23).

Kept out of ``core`` because it drives the real window. Every action is something a user can do:
click a chip, type or paste a strange text, switch tabs and pages, open models (a corrupt file and a
folder that is not a model among them), press any visible button (training start, pause, stop, reset;
t-SNE and its cancel; 3D, density, clusters; the tour's steps), set a combo box or a spin box to any
of its values, resize the window between 1024x700 and 1920x1080, press Escape or Enter wherever the
focus is. The walk does not wait for background work, as a user does not.

After every action it counts exceptions that reached ``sys.excepthook`` and Qt warnings, and measures
the GUI stall (the longest gap between ticks of a 5 ms timer) with the action that caused it. At the
end, once the window is idle, every visible readout must agree with AppState (model, text, selected
token); the RSS growth over the walk is reported.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from explorer.benchmarks.listeners import (
    EXCEPTIONS_SEEN,
    QT_SEEN,
    WARNINGS_SEEN,
    CollectionLog,
    Landings,
    StackSampler,
    ThreadClocks,
    collect_exception,
    collect_qt_message,
    collect_warning,
    reference_loop_ms,
    rss_mb,
    thread_places,
)
from explorer.benchmarks.monkey_report import MonkeyReport, format_monkey

__all__ = ["MonkeyReport", "Monkey", "bench_monkey", "format_monkey", "FUZZ_TEXTS"]

TICK_MS = 5
#: strange texts a user pastes or types (emoji, CJK, combining marks, lone surrogates, controls)
FUZZ_TEXTS = ["the cat sat on the mat", "🙂🙃 emoji 👩‍👩‍👧", "日本語のテキスト", "e\u0301\u0302 a\u0308",
              "\udcff\udcfe lone", "\x00\x01 control", "  ", "", "1 2 3 42 50256", "unhappiness bank river",
              "\u202eright to left", "ℌ𝔢𝔩𝔩𝔬", "x" * 2000, "-- --json", "<s> [CLS] <unk>"]
#: a megabyte, pasted now and then
BOOK = ("It was the best of times, it was the worst of times. " * 20_000)[:1_000_000]
LIGHT_MODELS = ["default", "toy:robot", "toy:cat-sat", "random:300x16", "random:5000x64"]
HEAVY_MODELS = ["random:50257x768", "minilm", "smollm2", "random:128256x4096"]
#: buttons the walk never presses: they open modal file dialogs or leave the app
_SKIP_TEXT = ("…", "...", "Quit", "Save", "Export")


def _run_events(ms: int) -> None:
    """Let the event loop run for ``ms`` milliseconds (its own loop, woken by a timer: no
    busy wait, and the walk's 5 ms stall timer keeps ticking)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


class Monkey:
    """Walks ``ex`` (an :class:`explorer.app.Explorer` with its window shown)."""

    def __init__(self, app, ex, seed: int = 0, heavy: bool = False, settle_ms: int = 20, stacks: bool = False):
        self.app, self.ex, self.rng = app, ex, random.Random(seed)
        # where the window's thread was during each stall (a sampler of its stack; off by default: it
        # takes the GIL 100 times a second)
        self._sampler = StackSampler() if stacks else None
        self._landings = Landings()  # what the jobs brought to the window's thread, and when
        self._gc_log = CollectionLog()  # the collections, in any thread: every thread waits for a full one
        self._began = self._last_began = 0.0  # when the walk began, and the action under way
        self._gaps: list[float] = []  # each action's longest gap (ms)
        ex.state.model_changed.connect(self._landings.model_installed)
        self.heavy, self.settle_ms = heavy, settle_ms
        self.report = MonkeyReport(seed=seed, platform=app.platformName())
        self._dir = Path(tempfile.mkdtemp(prefix="monkey-"))
        (self._dir / "notamodel").mkdir()
        (self._dir / "notamodel" / "readme.txt").write_text("not a model")
        corrupt = self._dir / "corrupt" / "model.safetensors"
        corrupt.parent.mkdir()
        corrupt.write_bytes(b"\x40\x00\x00\x00\x00\x00\x00\x00{\"bad\": " + b"\xff" * 200)
        self.models = LIGHT_MODELS + (HEAVY_MODELS if heavy else []) + [str(self._dir / "notamodel"),
                                                                        str(corrupt.parent), str(corrupt)]
        self._clocks = ThreadClocks()  # made here, in the window's thread: its own clocks
        self._last = self._clocks()
        self._gap = (self._last, self._last)  # the longest gap of the action: the clocks at its start and end
        self._longest = 0.0
        # the codec type_text splits texts with, looked up now: its first lookup imports a module, and
        # an import on this thread waits for the warm-up's (2.8 s once, charged to a keystroke the
        # window never had: a keyboard sends characters, no codec is imported)
        "".encode("utf-16-le", "surrogatepass")
        self.actions: list[tuple[str, Callable[[], str]]] = [
            ("chip", self.click_chip), ("chip", self.click_chip), ("type", self.type_text),
            ("paste", self.paste_text), ("tab", self.switch_tab), ("tab", self.switch_tab),
            ("open", self.open_model), ("button", self.press_button), ("button", self.press_button),
            ("button", self.press_button), ("combo", self.set_combo), ("spin", self.set_spin),
            ("check", self.toggle_check), ("resize", self.resize), ("key", self.press_key),
            ("tour", self.tour_step), ("picker", self.picker),
        ]

    # -- watching ------------------------------------------------------------------------------
    def _tick(self) -> None:
        now = self._clocks()
        if now.wall - self._last.wall > self._longest:
            self._longest, self._gap = now.wall - self._last.wall, (self._last, now)
        self._last = now

    def _restart_clock(self) -> None:
        """The next gap is counted from now (:class:`ThreadClocks`)."""
        self._last = self._clocks()

    def _record_exception(self, text: str) -> None:
        self.report.exceptions += 1
        if len(self.report.messages) < 20:
            self.report.messages.append(text[-2000:])

    def _take_exceptions(self) -> None:
        for text in EXCEPTIONS_SEEN:
            self._record_exception(text)
        EXCEPTIONS_SEEN.clear()

    def _take_warnings(self, action: str) -> None:
        action += f" (model {getattr(self.ex.state.table, 'spec', 'none')})" if WARNINGS_SEEN else ""  # often why
        for text, place in WARNINGS_SEEN:
            self.report.runtime_warnings += 1
            seen = self.report.warning_places.setdefault(f"{text} from {place}", [0, action])
            seen[0] += 1
            if len(self.report.messages) < 20:
                self.report.messages.append(f"{text} in {action}")
        WARNINGS_SEEN.clear()

    def _take_qt_messages(self) -> None:
        for message in QT_SEEN:
            self.report.qt_warnings += 1
            if len(self.report.messages) < 20:
                self.report.messages.append(f"Qt: {message}")
        QT_SEEN.clear()

    def _settle(self, ms: int) -> None:
        _run_events(ms)

    # -- the walk ---------------------------------------------------------------------------------
    def run(self, n: int, idle_timeout_s: float = 120.0) -> MonkeyReport:
        from PySide6.QtCore import QTimer, qInstallMessageHandler

        from explorer.pacing import PACER

        timer = QTimer()
        timer.setInterval(TICK_MS)
        timer.timeout.connect(self._tick)
        old_hook = sys.excepthook
        EXCEPTIONS_SEEN.clear()
        sys.excepthook = collect_exception
        QT_SEEN.clear()
        old_handler = qInstallMessageHandler(collect_qt_message)
        WARNINGS_SEEN.clear()
        self.report.machine_ms = [round(reference_loop_ms(), 1)]
        self._began = t0 = time.perf_counter()
        rss0 = rss_mb()
        waited0 = PACER.deferred
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", RuntimeWarning)  # every one, not the first per place
                warnings.showwarning = collect_warning
                timer.start()
                self._gc_log.start()
                if self._sampler is not None:
                    self._sampler.start()
                self._walk(n)
                self._wait_idle(idle_timeout_s)
                self._check_readouts()
                self._take_qt_messages()
                self._take_exceptions()
                self._take_warnings("the end of the walk")
        finally:
            timer.stop()
            self._gc_log.stop()
            if self._sampler is not None:
                self._sampler.stop()
            qInstallMessageHandler(old_handler)
            sys.excepthook = old_hook
        self.report.machine_ms.append(round(reference_loop_ms(), 1))
        self.report.rss_growth_mb = rss_mb() - rss0
        self.report.landings_waited = PACER.deferred - waited0
        if self._gaps:
            gaps = sorted(self._gaps)
            self.report.stall_percentiles_ms = {f"p{q}": round(gaps[min(len(gaps) - 1, len(gaps) * q // 100)], 1)
                                                for q in (50, 90, 99)}
        self.report.seconds = time.perf_counter() - t0
        return self.report

    def _walk(self, n: int) -> None:
        for k in range(n):
            name, act = self.rng.choice(self.actions)
            names = self.ex.running_jobs()
            scene = self._scene()
            self._landings.watch(self.ex)
            jobs = len(names)
            self._longest = 0.0
            self._restart_clock()
            self._last_began = self._last.wall
            try:
                what = act()
            except Exception as exc:  # a failure of the walk itself is a finding too
                collect_exception(type(exc), exc, exc.__traceback__)
                what = f"{name} (failed)"
            self._settle(self.settle_ms)
            self._take_qt_messages()
            self._take_exceptions()
            self._take_warnings(f"#{k} {what}")
            stall = self._longest * 1000
            self._gaps.append(stall)
            kind = self.report.stalls_by_action.setdefault(name, [0, 0, 0.0])
            kind[0] += 1
            kind[2] = max(kind[2], round(stall, 1))
            busy = self.report.stalls_by_jobs.setdefault(str(jobs) if jobs < 2 else "2+", [0, 0])
            busy[0] += 1
            running = [self.report.stalls_by_job.setdefault(name, [0, 0]) for name in set(names)]
            running += [self.report.stalls_by_landing.setdefault(landed, [0, 0])
                        for landed in self._landings.kinds(self._last_began, time.perf_counter())]
            for seen in running:
                seen[0] += 1
            if stall > 100:
                self.report.stalls_over_100ms += 1
                self.report.stalls.append([round(stall), f"#{k} {what}", jobs])
                start, end = self._gap
                spent = end.since(start)
                self.report.stall_landings.append(self._landings.between(start.wall, end.wall))
                self.report.stall_times_s.append([round(at.wall - self._began, 3) for at in self._gap])
                self.report.stall_cpu_ms.append(round(spent.cpu * 1000))
                self.report.stall_ready_ms.append(round(spent.ready * 1000))
                self.report.stall_disk.append(list(spent[3:]))
                self.report.stall_collections.append(self._gc_log.between(start.wall, end.wall))
                self.report.stall_jobs.append(names)
                self.report.stall_scenes.append(scene)
                if self._sampler is not None:
                    self.report.stall_places.append(self._sampler.place(start.wall, end.wall))
                kind[1] += 1
                busy[1] += 1
                for seen in running:
                    seen[1] += 1
            if stall > self.report.max_stall_ms:
                self.report.max_stall_ms, self.report.max_stall_action = stall, f"#{k} {what}"
            self.report.actions = k + 1

    def _scene(self) -> str:
        """What the window shows: its tab (with the Projection's 3D), the model and the text's length."""
        window, state = self.ex.window, self.ex.state
        tab = window.tabs.tabText(window.tabs.currentIndex())
        if tab == "Projection" and self.ex.view_built("projection") and self.ex.projection_view.plot_pages.showing_3d:
            tab += " (3D)"
        spec = state.table.spec if state.table is not None else "no model"
        return f"tab {tab!r}, {spec}, {len(state.text):,} chars"

    def _wait_idle(self, timeout_s: float) -> None:
        """Close what the walk left open, stop training, and let the background work end."""
        from PySide6.QtWidgets import QApplication, QDialog

        for w in QApplication.topLevelWidgets():
            if isinstance(w, QDialog) and w.isVisible():
                w.reject()
        if self.ex.state.training.job_running:
            self.ex.state.training.stop()
        end = time.perf_counter() + timeout_s
        # and for the text box to send what was typed last (200 ms after the last key; a coarse timer on a
        # loaded machine can fire after a 200 ms settle, and the readouts then differed for that moment)
        edit = self.ex.window.token_strip.edit
        while (self.ex.busy() or self.ex.state.tokenizing or edit.text() != self.ex.state.text) \
                and time.perf_counter() < end:
            self._settle(50)
        self._settle(200)

    def _check_readouts(self) -> None:
        ex, state, win = self.ex, self.ex.state, self.ex.window
        bad = self.report.disagreements
        if state.table is not None and win.model_button.text() != state.table.name:
            bad.append(f"model button {win.model_button.text()!r} != {state.table.name!r}")
        if win.token_strip.edit.text() != state.text:
            bad.append(f"text box ({len(win.token_strip.edit.text())} chars) != state text ({len(state.text)})")
        chips = win.token_strip.chips
        if len(chips.tokens()) != len(state.tokens):
            bad.append(f"{len(chips.tokens())} chips != {len(state.tokens)} tokens")
        inspector = ex.window.inspector
        if state.selected_id >= 0 and inspector.isVisible():
            shown = inspector.facts["id"].text()
            if shown != f"{state.selected_id:,}":
                bad.append(f"inspector shows id {shown!r}, selected {state.selected_id:,}")
        self.report.readouts_agree = not bad

    # -- actions: each returns what it did ------------------------------------------------------------
    def _aimed(self, widget=None, pos=None) -> None:
        """The walk has picked what it will touch: the time it took to look (a search of every
        widget in the window, 2-10 ms) is the harness's, not a stall the user would see. Called
        before any event is processed in the action, so no tick is lost. The pointer goes onto
        ``widget`` (at ``pos``, else its middle), as a user's hand takes it there: the app takes a
        still pointer for a user who reads, and builds views meanwhile."""
        if widget is not None:
            from PySide6.QtGui import QCursor

            QCursor.setPos(widget.mapToGlobal(pos if pos is not None else widget.rect().center()))
        self._restart_clock()

    def _visible(self, kind):
        from PySide6.QtWidgets import QApplication

        found = []
        for top in QApplication.topLevelWidgets():
            if top.isVisible():
                found += [w for w in top.findChildren(kind) if w.isVisible() and w.isEnabled()]
        return found

    def click_chip(self) -> str:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        chips = self.ex.window.token_strip.chips
        n = len(chips.tokens())
        if not n or not chips.isVisible():
            return "chip (none)"
        i = self.rng.randrange(min(n, 200))
        at = chips.chip_rect(i).center().toPoint()
        self._aimed(chips, at)
        QTest.mouseClick(chips, Qt.LeftButton, pos=at)
        return f"click chip {i}"

    def _text(self) -> str:
        return BOOK if self.rng.random() < 0.03 else self.rng.choice(FUZZ_TEXTS)

    def type_text(self) -> str:
        from PySide6.QtCore import QEvent, Qt
        from PySide6.QtGui import QKeyEvent
        from PySide6.QtWidgets import QApplication

        edit = self.ex.window.token_strip.edit
        if not edit.isVisible():
            return "type (no box)"
        text = self.rng.choice(FUZZ_TEXTS)[:40]
        edit.setFocus()
        if self.rng.random() < 0.5:
            edit.selectAll()
        # one key event per character, as a keyboard or an input method sends them (QTest.keyClicks
        # splits characters outside the BMP into halves); a lone surrogate arrives as U+FFFD
        for ch in text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace"):
            for kind in (QEvent.KeyPress, QEvent.KeyRelease):
                QApplication.sendEvent(edit, QKeyEvent(kind, Qt.Key_unknown, Qt.NoModifier, ch))
        return f"type {text!r}"

    def paste_text(self) -> str:
        from PySide6.QtGui import QGuiApplication

        edit = self.ex.window.token_strip.edit
        text = self._text()
        QGuiApplication.clipboard().setText(text)
        edit.setFocus()
        edit.selectAll()
        edit.paste()
        return f"paste {len(text):,} chars"

    def switch_tab(self) -> str:
        from PySide6.QtWidgets import QTabWidget

        tabs = self._visible(QTabWidget)
        if not tabs:
            return "tab (none)"
        t = self.rng.choice(tabs)
        i = self.rng.randrange(t.count())
        bar = t.tabBar()
        self._aimed(bar, bar.tabRect(i).center())
        t.setCurrentIndex(i)
        return f"tab {t.tabText(i)!r}"

    def open_model(self) -> str:
        spec = self.rng.choice(self.models)
        if spec.startswith("random:") and self.rng.random() < 0.3:
            v_max, dims = (70_000, [1, 2, 3, 8, 64, 300]) if self.heavy else (5_000, [1, 2, 3, 8, 64])
            spec = f"random:{self.rng.randint(1, v_max)}x{self.rng.choice(dims)}"
        self.ex.open_spec(spec, keep_text=self.rng.random() < 0.5)
        return f"open {spec}"

    def press_button(self) -> str:
        from PySide6.QtWidgets import QAbstractButton, QCheckBox

        buttons = [b for b in self._visible(QAbstractButton)
                   if not isinstance(b, QCheckBox) and b.text() and not any(s in b.text() for s in _SKIP_TEXT)
                   and not (hasattr(b, "menu") and b.menu() is not None)]
        if not buttons:
            return "button (none)"
        b = self.rng.choice(buttons)
        text = b.text()
        self._aimed(b)
        b.click()
        return f"press {text!r}"

    def toggle_check(self) -> str:
        from PySide6.QtWidgets import QCheckBox

        boxes = self._visible(QCheckBox)
        if not boxes:
            return "check (none)"
        b = self.rng.choice(boxes)
        self._aimed(b)
        b.click()
        return f"toggle {b.text()!r}"

    def set_combo(self) -> str:
        from PySide6.QtWidgets import QComboBox

        combos = [c for c in self._visible(QComboBox) if c.count()]
        if not combos:
            return "combo (none)"
        c = self.rng.choice(combos)
        i = self.rng.randrange(c.count())
        self._aimed(c)
        c.setCurrentIndex(i)
        c.activated.emit(i)  # what a user's choice emits besides the index change
        return f"combo {c.itemText(i)!r}"

    def set_spin(self) -> str:
        from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox

        spins = self._visible(QSpinBox) + self._visible(QDoubleSpinBox)
        if not spins:
            return "spin (none)"
        s = self.rng.choice(spins)
        lo, hi = s.minimum(), s.maximum()
        pick = self.rng.choice([lo, hi, (lo + hi) / 2, lo + (hi - lo) * self.rng.random() ** 4])
        self._aimed(s)
        s.setValue(int(pick) if isinstance(s, QSpinBox) else pick)
        s.editingFinished.emit()
        return f"spin {s.objectName() or s.toolTip()[:30]!r} = {pick:g}"

    def resize(self) -> str:
        w, h = self.rng.randint(1024, 1920), self.rng.randint(700, 1080)
        self.ex.window.resize(w, h)
        return f"resize {w}x{h}"

    def press_key(self) -> str:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QApplication

        target = QApplication.focusWidget() or QApplication.activeWindow() or self.ex.window
        key = self.rng.choice([Qt.Key_Escape, Qt.Key_Return, Qt.Key_Enter, Qt.Key_Left, Qt.Key_Right])
        handle = target.window().windowHandle()
        # through the native window to its focus widget, as a keyboard's keys come (the app sees them)
        QTest.keyClick(handle if handle is not None and target.window().isActiveWindow() else target, key)
        return f"key {int(key):#x} in {type(target).__name__}"

    def tour_step(self) -> str:
        tour = self.ex.tour
        roll = self.rng.random()
        if tour.step is None or roll < 0.15:
            tour.start(self.rng.randint(1, 3))
            return "tour start"
        if roll < 0.25:
            tour.close()
            return "tour close"
        tour.next()
        return "tour next"

    def picker(self) -> str:
        self.ex.show_picker()
        return "open the picker"


def bench_monkey(n: int, seed: int = 0, heavy: bool = True, settle_ms: int = 30, stacks: bool = False) -> MonkeyReport:
    """A walk of ``n`` actions in a fresh window (real with a display, else offscreen); ``stacks``: stalls placed."""
    from PySide6.QtCore import QSettings

    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from explorer.app import Explorer, make_app

    app = make_app()
    ex = Explorer(settings=QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.IniFormat))
    ex.freeze_when_warm = True  # as explorer.launch.run does
    ex.window.resize(1280, 800)
    ex.window.show()
    ex.start(model="default")
    end = time.perf_counter() + 60
    while ex.state.table is None and time.perf_counter() < end:
        _run_events(10)
    report = None
    try:
        report = Monkey(app, ex, seed=seed, heavy=heavy, settle_ms=settle_ms, stacks=stacks).run(n)
        return report
    finally:
        running, stopped = ex.running_jobs(), ex.shutdown(wait_ms=60_000)
        ex.window.close()
        if report is not None:  # the jobs running at the end, and where every other thread is when one did not stop
            report.jobs_stopped, report.jobs_at_close = stopped, running + ([] if stopped else thread_places())
