"""--screenshot waits for what was asked (the model, the training's step, the tour's
words, the background jobs) and never forever: past its limit it saves what is shown,
says on stderr what never came, and ends with its own exit code."""

from __future__ import annotations

import subprocess
import sys
import time

from PySide6.QtGui import QImage

from explorer.app import Explorer
from explorer.screenshot import EXIT_ERROR, EXIT_GAVE_UP, Screenshot
from tests.support.paths import REPO

TIMEOUT = 60_000


def _shoot(qtbot, ex, path, model="toy:robot", **kw) -> Screenshot:
    shot = Screenshot(ex, str(path), **kw)
    shot.start()
    with qtbot.waitSignal(shot.finished, timeout=TIMEOUT):
        ex.start(model=model, text="robot arm")
    return shot


def test_the_window_is_saved_once_the_model_is_in_and_no_job_runs(qtbot, explorer, tmp_path, capsys):
    shot = _shoot(qtbot, explorer, tmp_path / "shot.png", view="matrix")
    assert shot.code == 0 and not explorer.busy()
    img = QImage(str(tmp_path / "shot.png"))
    assert (img.width(), img.height()) == (explorer.window.width(), explorer.window.height())
    assert capsys.readouterr().err == ""


def test_a_training_that_never_reaches_its_step_is_shot_at_the_limit(qtbot, explorer, tmp_path, capsys):
    t0 = time.monotonic()
    shot = _shoot(qtbot, explorer, tmp_path / "shot.png", view="training", train_steps=10**7, limit_s=2)
    assert 2 <= time.monotonic() - t0 < 30
    assert shot.code == EXIT_GAVE_UP
    assert not QImage(str(tmp_path / "shot.png")).isNull()  # what was shown, saved all the same
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: --screenshot gave up after 2 s")
    assert "waiting for the training to reach step 10000000" in err


def test_a_job_that_never_ends_is_named_in_the_warning(qtbot, explorer, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(Explorer, "running_jobs", lambda _self: ["endless_job"])
    shot = _shoot(qtbot, explorer, tmp_path / "shot.png", view="matrix", limit_s=1.5)
    assert shot.code == EXIT_GAVE_UP and not QImage(str(tmp_path / "shot.png")).isNull()
    err = capsys.readouterr().err
    assert "waiting for the background jobs to finish (endless_job still running)" in err


def test_a_model_that_cannot_be_opened_is_an_error_without_a_picture(qtbot, explorer, tmp_path, capsys):
    shot = _shoot(qtbot, explorer, tmp_path / "shot.png", model=str(tmp_path / "nope"), limit_s=30)
    assert shot.code == EXIT_ERROR and not (tmp_path / "shot.png").exists()
    assert capsys.readouterr().err.startswith("error: ")


def _run_cli(*args, timeout=90):
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_a_tour_whose_first_model_cannot_be_opened_exits_instead_of_waiting(tmp_path):
    # the tour waited for the user's own model, which never came, and the shot for the tour's step
    t0 = time.monotonic()
    r = _run_cli("--model", str(tmp_path / "nope"), "--tour", "3", "--screenshot", str(tmp_path / "x.png"))
    assert r.returncode == EXIT_ERROR and r.stderr.startswith("error: "), r.stderr
    assert time.monotonic() - t0 < 60


def test_the_backstop_ends_a_process_whose_main_thread_is_stuck():
    # a deadlock: no timer of the GUI thread can fire any more
    code = ("import threading\n"
            "from explorer.screenshot import arm_backstop\n"
            "arm_backstop(0.5)\n"
            "lock = threading.Lock(); lock.acquire(); lock.acquire()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.returncode == 1
    assert "Timeout" in r.stderr and "line 4" in r.stderr  # the stuck thread's stack


def test_a_page_the_view_does_not_have_is_named_with_the_pages_it_has(qtbot, explorer, tmp_path, capsys):
    shot = _shoot(qtbot, explorer, tmp_path / "shot.png", view="lookup:sideways")
    assert shot.code == 0 and not QImage(str(tmp_path / "shot.png")).isNull()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: the lookup view has no page 'sideways'")
    assert "(its pages: forward, backward;" in err
    assert "famous models" in explorer.window.page_names("cost")  # a view's tabs are pages too


def test_from_the_command_line_a_page_that_needs_the_model_is_picked_once_it_is_in(qtbot, explorer, capsys):
    from explorer.launch import _show_page_once_loaded

    explorer.window.show_view("lookup")
    assert not explorer.window.show_view("lookup:nowhere")
    capsys.readouterr()
    _show_page_once_loaded(explorer, "lookup:backward")
    _show_page_once_loaded(explorer, "lookup:nowhere")
    with qtbot.waitSignal(explorer.load_finished, timeout=TIMEOUT):
        explorer.start(model="toy:robot", text="robot arm")
    assert explorer.lookup_view.current_page() == "backward"
    assert capsys.readouterr().err.startswith("warning: the lookup view has no page 'nowhere'")
    explorer.start(model="toy:robot", text="robot")  # the first load only
    qtbot.waitUntil(lambda: not explorer.busy(), timeout=TIMEOUT)
    assert capsys.readouterr().err == ""
