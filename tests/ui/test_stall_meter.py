"""bench --gui's stall meter names the action that caused its longest stall."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from explorer.benchmarks.gui import StallMeter, format_gui


def test_the_longest_stall_is_named_after_its_action(qtbot):
    meter = StallMeter(QApplication.instance())
    QTimer.singleShot(20, lambda: time.sleep(0.3))  # the GUI thread blocked for 300 ms at least
    stall = meter.run_until(lambda: True, settle_s=0.5, action="a blocking slot")
    assert stall >= 300 and meter.worst_ms == stall and meter.worst_action == "a blocking slot"


def test_the_report_says_which_platform_and_which_action():
    figures = dict(select_token_ms_median=8.0, select_token_ms_max=13.0, select_token_big_ms_median=9.0,
                   scatter_points=50257, scatter_fps=100.0, paste_stall_ms=40.0, big_open_stall_ms=150.0,
                   quit_during_load_s=0.3, start_to_interactive_default_s=0.6, platform="xcb",
                   longest_stall_ms=150.0, longest_stall_action="open random:128256x4096")
    text = format_gui(figures)
    assert text.startswith("GUI (xcb,") and "150 ms, during: open random:128256x4096" in text
    # the opens from the picker and the command line, each against the 100 ms target
    figures.update(open_stall_ms={"minilm": 80.0}, cli_open_stall_ms={"smollm2": 290.0})
    text = format_gui(figures)
    assert "open minilm from the picker: longest stall 80 ms (target <= 100: met)" in text
    assert "open smollm2 from the command line: longest stall 290 ms (target <= 100: NOT met)" in text
