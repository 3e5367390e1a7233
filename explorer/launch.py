"""Launching the window from the command line: the initial model, text,
view and tour, and the --screenshot mode that saves the window once every
view has finished its work, then exits."""

from __future__ import annotations

import gc
import os
import sys

from PySide6.QtCore import QTimer

from explorer.app import CLOSE_WAIT_MS, Explorer, make_app

__all__ = ["run"]


def run(model=None, text=None, token=None, view=None, screenshot=None, size=None, train_steps=0, tour=None,
        watch=None) -> int:
    """Launch the GUI. With ``screenshot`` save the window once loaded and exit; with
    ``watch`` (a log directory of explorer.record) the Training tab follows that run
    and the latest snapshot is the table unless ``model`` is given."""
    app = make_app()
    ex = Explorer()
    ex.first_run_hint = not screenshot
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
    win.show_view(view or ("matrix" if size else win.tabs.tabText(win.tabs.currentIndex()).lower()))
    if size:
        win.resize(*size)
    result = {"code": 0}

    if screenshot:
        def _on_loaded(ok: bool) -> None:
            if not ok:
                print(f"error: {ex.last_error or 'loading was cancelled'}", file=sys.stderr)
                result["code"] = 2
                app.quit()
                return
            if view and ":" in view:  # a choice that needs the model (matrix:w_out) is made once it is open
                win.show_view(view)
            if train_steps and (view or "").partition(":")[0] == "training":
                ex.training_view.run_steps_then(train_steps, lambda: QTimer.singleShot(300, _wait_idle))
            else:
                QTimer.singleShot(300, _wait_idle)

        waited = {"ms": 0}

        def _wait_idle() -> None:
            # views compute in workers (PCA, first-layer runs): shoot when all are done
            if ex.busy() and waited["ms"] < 60000:
                waited["ms"] += 200
                QTimer.singleShot(200, _wait_idle)
                return
            QTimer.singleShot(300, _shoot)

        def _shoot() -> None:
            app.processEvents()
            pix = win.grab()
            if not pix.save(screenshot):
                print(f"error: cannot write {screenshot}", file=sys.stderr)
                result["code"] = 2
            ex.shutdown()
            app.quit()

        if tour:  # shoot the tour's step once it is on screen with its words
            ex.tour.start(tour)
            ex.tour.step_ready.connect(lambda _n: _on_loaded(True))
        else:
            ex.load_finished.connect(_on_loaded)
    # torch, the tokenizers and the views make hundreds of thousands of long-lived
    # objects that every full garbage collection would walk again (60-180 ms, a
    # stall in whatever handler it lands): once they exist, park them
    ex.warmed_up.connect(gc.freeze)
    win.show()
    QTimer.singleShot(0, lambda: ex.start(model=model, text=text, token=token))
    if tour and not screenshot:
        QTimer.singleShot(0, lambda: ex.tour.start(tour))
    code = app.exec()
    code = result["code"] or code
    if not ex.shutdown(wait_ms=CLOSE_WAIT_MS):
        # a job inside one long library call (building a GGUF tokenizer takes
        # seconds) cannot be stopped; jobs only read, and the settings are
        # saved: end the process rather than make the user wait
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
