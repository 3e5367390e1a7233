"""A window's process that dies of a fatal fault leaves where its threads were, and the next window
says so once (explorer/crash_log.py, explorer/launch.py)."""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys
import textwrap

import pytest

from explorer.crash_log import CrashLog, crash_folder, first_line
from tests.support.paths import REPO

#: a process that arms a CrashLog in the folder given, then faults reading address 0 (ctypes)
CRASHING = textwrap.dedent("""
    import ctypes, sys
    from explorer.crash_log import CrashLog
    log = CrashLog(sys.argv[1])
    assert log.arm()
    print(log.path, flush=True)

    def a_step_that_faults():
        ctypes.string_at(0)

    a_step_that_faults()
""")


@pytest.fixture
def no_faulthandler():
    """faulthandler off for the test (pytest's own plugin turns it on), on again after it."""
    was_on = faulthandler.is_enabled()
    faulthandler.disable()
    yield
    faulthandler.disable()
    if was_on:
        faulthandler.enable(sys.__stderr__, all_threads=True)


def _crash_in(folder) -> str:
    out = subprocess.run([sys.executable, "-c", CRASHING, str(folder)], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert out.returncode != 0 and out.stderr == ""  # the report went to the file, not the terminal
    return out.stdout.strip()


def test_a_crashed_process_leaves_its_threads_places_and_is_reported_once(tmp_path):
    armed = _crash_in(tmp_path)
    text = open(armed).read()
    assert "Fatal Python error: Segmentation fault" in text and "in a_step_that_faults" in text
    log = CrashLog(tmp_path)
    reports = log.left_behind()
    assert len(reports) == 1 and reports[0].name.startswith("crashed-") and reports[0].read_text() == text
    assert first_line(reports[0]) == "Fatal Python error: Segmentation fault"
    assert log.left_behind() == []  # reported: not again


def test_a_clean_end_leaves_nothing_and_the_newest_crash_comes_first(tmp_path, no_faulthandler):
    _crash_in(tmp_path)
    first = CrashLog(tmp_path).left_behind()
    _crash_in(tmp_path)
    log = CrashLog(tmp_path)
    assert log.arm() and log.path.exists() and faulthandler.is_enabled()
    # the running process's own file is not a crash; the second crash is the only new one
    newer = log.left_behind()
    assert len(newer) == 1 and newer[0] != first[0] and log.path.exists()
    log.disarm()
    assert not faulthandler.is_enabled() and not log.path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first[0].name, newer[0].name])


def test_an_empty_file_of_a_process_gone_is_removed_and_faulthandler_set_by_the_user_stays(tmp_path, no_faulthandler):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, timeout=60)
    empty = tmp_path / f"crash-{int(gone.stdout)}.log"
    empty.write_text("")  # a window killed outright: its file armed, never written
    assert CrashLog(tmp_path).left_behind() == [] and not empty.exists()
    faulthandler.enable(sys.stderr)  # python -X faulthandler: the user's own choice
    log = CrashLog(tmp_path)
    assert not log.arm() and not log.path.exists()
    log.disarm()
    assert faulthandler.is_enabled()


def test_an_unwritable_folder_arms_nothing(tmp_path, no_faulthandler):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    log = CrashLog(blocker / "log")
    assert not log.arm() and not faulthandler.is_enabled() and log.left_behind() == []


def test_the_reports_go_to_the_log_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("EXPLORER_LOG_DIR", str(tmp_path))
    assert crash_folder() == tmp_path
    monkeypatch.delenv("EXPLORER_LOG_DIR")
    assert crash_folder().name == "log" and "embedding-explorer" in str(crash_folder())


@pytest.mark.parametrize("count", [1, 3])
def test_the_window_says_it_crashed_with_what_and_where(qtbot, tmp_path, count):
    from explorer.app import Explorer, make_app
    from explorer.launch import say_it_crashed

    for _ in range(count):
        _crash_in(tmp_path)
    reports = CrashLog(tmp_path).left_behind()
    make_app()
    ex = Explorer()
    ex.build_when_idle = False
    qtbot.addWidget(ex.window)
    box = say_it_crashed(ex.window, reports)
    try:
        assert box.isVisible() and box.windowTitle() == "The explorer stopped unexpectedly"
        text = box.text()
        assert "Fatal Python error: Segmentation fault" in text and str(reports[0]) in text
        assert ("older report" in text) == (count > 1)
    finally:
        box.close()
        ex.shutdown()


#: the window from the command line (explorer.launch.run), which faults once the model is in
WINDOW_THAT_CRASHES = textwrap.dedent("""
    import ctypes, sys
    from PySide6.QtCore import QTimer
    from explorer.app import Explorer
    from explorer.launch import run

    def a_click_that_faults():
        ctypes.string_at(0)

    Explorer.load_finished_hook = lambda ok: QTimer.singleShot(200, a_click_that_faults)
    _init = Explorer.__init__
    def __init__(self, *args, **kwargs):
        _init(self, *args, **kwargs)
        self.load_finished.connect(Explorer.load_finished_hook)
    Explorer.__init__ = __init__
    sys.exit(run(model="toy:cat-sat"))
""")
#: the next window: what it shows a moment after it is up
NEXT_WINDOW = textwrap.dedent("""
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox
    from explorer.app import Explorer
    from explorer.launch import run

    def look():
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QMessageBox) and w.isVisible():
                print("BOX", w.windowTitle(), "|", w.text().replace(chr(10), " "))
        QApplication.instance().quit()

    _init = Explorer.__init__
    def __init__(self, *args, **kwargs):  # (a timer needs the application run() makes)
        _init(self, *args, **kwargs)
        QTimer.singleShot(3000, look)
    Explorer.__init__ = __init__
    sys.exit(run(model="toy:cat-sat"))
""")


def test_a_window_that_crashed_is_reported_by_the_next_one(tmp_path):
    env = {**os.environ, "EXPLORER_LOG_DIR": str(tmp_path)}
    crashed = subprocess.run([sys.executable, "-c", WINDOW_THAT_CRASHES], capture_output=True, text=True,
                             timeout=120, cwd=REPO, env=env)
    assert crashed.returncode != 0, crashed.stderr[-2000:]
    (armed,) = tmp_path.glob("crash-*.log")
    text = armed.read_text()
    assert "Fatal Python error: Segmentation fault" in text and "in a_click_that_faults" in text
    nxt = subprocess.run([sys.executable, "-c", NEXT_WINDOW], capture_output=True, text=True, timeout=120,
                         cwd=REPO, env=env)
    assert nxt.returncode == 0, nxt.stderr[-2000:]
    (reported,) = tmp_path.glob("crashed-*.log")
    boxes = [line for line in nxt.stdout.splitlines() if line.startswith("BOX ")]
    assert len(boxes) == 1 and boxes[0].startswith("BOX The explorer stopped unexpectedly | ")
    assert "Segmentation fault" in boxes[0] and str(reported) in boxes[0]
    # the second window ended cleanly: its own file is gone, nothing else is left
    assert sorted(p.name for p in tmp_path.iterdir()) == [reported.name]
