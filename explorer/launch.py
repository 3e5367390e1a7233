"""Launching the window from the command line: the initial model, text,
view and tour, and the --screenshot mode that saves the window once every
view has finished its work, then exits."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer

from explorer.app import CLOSE_WAIT_MS, Explorer, make_app
from explorer.crash_log import CrashLog, crash_folder, first_line
from explorer.screenshot import BACKSTOP_S, LIMIT_S, Screenshot, arm_backstop, show_page_or_say

__all__ = ["run"]


def run(model=None, text=None, token=None, view=None, screenshot=None, size=None, train_steps=0, tour=None,
        watch=None, screenshot_limit_s: float = LIMIT_S) -> int:
    """Launch the GUI. With ``screenshot`` save the window once loaded and exit (after
    ``screenshot_limit_s`` at the latest: see :class:`~explorer.screenshot.Screenshot`); with
    ``watch`` (a log directory of explorer.record) the Training tab follows that run
    and the latest snapshot is the table unless ``model`` is given."""
    app = make_app()
    ex = Explorer()
    ex.first_run_hint = not screenshot
    ex.build_when_idle = not screenshot
    win = ex.window
    if watch:
        from explorer.core.recording.reader import latest_snapshot

        ex.watch(watch)
        view = view or "training"
        latest = latest_snapshot(watch)
        model = model or (str(latest[1]) if latest else None)
    if view is not None and view.partition(":")[0] not in win.view_names():
        print(f"error: the {view} view is not available (available: {', '.join(win.view_names())})",
              file=sys.stderr)
        return 2
    if size:
        win.resize(*size)
    else:
        win.fit_to_screen()  # 1440 x 900, or less on a smaller screen
        ex.restore_settings()
    shown = win.show_view(view or ("matrix" if size else win.tabs.tabText(win.tabs.currentIndex()).lower()))
    if not shown and not screenshot:  # a page that needs the model (matrix:w_out): once it is in
        _show_page_once_loaded(ex, view)
    if size:
        win.resize(*size)
    result = {"code": 0}

    if screenshot:
        shot = Screenshot(ex, screenshot, view=view, train_steps=train_steps, tour=tour, limit_s=screenshot_limit_s)

        def _on_shot_finished(code: int) -> None:
            result["code"] = code
            ex.shutdown(wait_ms=15000 if code == 0 else CLOSE_WAIT_MS)  # a job stuck past the limit: not long
            app.quit()

        shot.finished.connect(_on_shot_finished)
        shot.start()
        # should the GUI thread itself stop, the limit's timer never fires: end the process anyway
        arm_backstop(screenshot_limit_s + BACKSTOP_S)
    # torch, the tokenizers and the views make hundreds of thousands of long-lived
    # objects that every full garbage collection would walk again (60-180 ms, a
    # stall in whatever handler it lands): once they exist, park them
    ex.freeze_when_warm = True
    crashes = CrashLog(crash_folder())
    # a screenshot shows no box: the reports wait for the next window a user sees
    left = [] if screenshot else crashes.left_behind()
    crashes.arm()
    win.show()
    QTimer.singleShot(0, lambda: ex.start(model=model, text=text, token=token))
    if left:
        QTimer.singleShot(0, lambda: say_it_crashed(win, left))
    if tour and not screenshot:
        QTimer.singleShot(0, lambda: ex.tour.start(tour))
    code = app.exec()
    code = result["code"] or code
    stopped = ex.shutdown(wait_ms=CLOSE_WAIT_MS)
    crashes.disarm()
    if not stopped:
        # a job inside one long library call (building a GGUF tokenizer takes
        # seconds) cannot be stopped; jobs only read, and the settings are
        # saved: end the process rather than make the user wait
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def say_it_crashed(win, reports: list[Path]):
    """Tell the user the window crashed last time, with what it was and where the report is."""
    newest = reports[0]
    what = first_line(newest) or "a fatal error"
    more = f" ({len(reports) - 1} older report(s) beside it)" if len(reports) > 1 else ""
    box = win.show_error(
        "The explorer stopped unexpectedly",
        f"The last time, the explorer ended in a crash: {what}. Where each of its threads was is saved "
        f"in {newest}{more}. If it happens again, please attach that file to a bug report.")
    box.setTextInteractionFlags(Qt.TextSelectableByMouse)  # the path can be copied
    return box


def _show_page_once_loaded(ex, view: str) -> None:
    """Pick ``view``'s page once the first model is in (or say that the view has no such page)."""

    def _on_load_finished(ok: bool) -> None:
        ex.load_finished.disconnect(_on_load_finished)
        if ok:
            show_page_or_say(ex.window, view)

    ex.load_finished.connect(_on_load_finished)
