"""Drive the real main window through AppState and by clicks (pytest-qt, offscreen)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from explorer.app import Explorer, make_app
from explorer.core.sources import open_table
from tests.support.fresh import fresh_process
from tests.support.ui_helpers import LOAD_TIMEOUT, assert_nearest, click_chip, load, wait_neighbors

ROOT = Path(__file__).resolve().parents[2]


def test_default_model_click_chip_shows_row(qtbot, explorer):
    table = load(qtbot, explorer, "default")
    assert table.spec == "default"
    assert explorer.state.text == table.example_text
    strip = explorer.window.token_strip
    expected = table.tokenizer.encode(explorer.state.text)
    assert [t.id for t in strip.chips.tokens()] == [t.id for t in expected]
    click_chip(qtbot, strip, 3)
    tid = expected[3].id
    assert explorer.state.selected_id == tid
    assert explorer.state.selected_position == 3
    assert explorer.window.matrix_view.highlighted_row() == tid
    insp = explorer.window.inspector
    assert insp.facts["offset"].text() == f"{tid * table.row_bytes:,} B = 0x{tid * table.row_bytes:X}"
    assert insp.facts["id"].text() == f"{tid:,}"
    assert float(insp.facts["norm"].text().split()[0]) == pytest.approx(np.linalg.norm(table.row(tid)), abs=1e-4)
    assert_nearest(table.matrix(), tid, insp.neighbor_ids())
    np.testing.assert_array_equal(insp.values_model._values, table.matrix()[tid])
    # the selected chip is styled, and only it
    flags = [strip.chips.flags(i)["selected"] for i in range(len(expected))]
    assert flags.count(True) == 1 and flags[3]


def test_repeated_tokens_share_one_row(qtbot, explorer):
    load(qtbot, explorer, "toy:cat-sat")
    explorer.state.set_text("the cat sat on the mat")
    strip = explorer.window.token_strip
    click_chip(qtbot, strip, 0)
    assert strip.chips.flags(4)["same_row"]  # the second "the" reads the same row
    assert not strip.chips.flags(1)["same_row"]
    assert "×2" in strip.chips.label(0)[1]


def test_clicking_a_neighbour_selects_it_and_adds_it(qtbot, explorer):
    table = load(qtbot, explorer, "default")
    insp = explorer.window.inspector
    first = insp.neighbor_ids()[0]
    rect = insp.neighbors.visualItemRect(insp.neighbors.item(0, 0))
    qtbot.mouseClick(insp.neighbors.viewport(), Qt.LeftButton, pos=rect.center())
    assert explorer.state.selected_id == first
    assert first in explorer.state.extra_ids
    assert explorer.window.matrix_view.highlighted_row() == first
    assert insp.title.text() == table.piece(first)


def test_arrow_keys_move_the_selection(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    explorer.state.select_position(0)
    area = explorer.window.token_strip.chips
    area.setFocus()
    qtbot.keyClick(area, Qt.Key_Right)
    assert explorer.state.selected_position == 1
    qtbot.keyClick(area, Qt.Key_Right)
    qtbot.keyClick(area, Qt.Key_Left)
    assert explorer.state.selected_position == 1
    assert explorer.state.selected_id == 1


def test_robot_neighbours_show_the_facts_cosines(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    explorer.state.set_text("robot arm box tool")
    explorer.state.select_position(0)
    insp = explorer.window.inspector
    got = {insp.neighbors.item(r, 0).text(): insp.neighbors.item(r, 2).text() for r in range(insp.neighbors.rowCount())}
    assert got == {"arm": "+0.995", "box": "+0.000", "tool": "-0.316"}


def test_random_table_offset_of_token_42(qtbot, explorer):
    table = load(qtbot, explorer, "random:50257x768")
    explorer.state.set_text("42")
    assert explorer.state.selected_id == 42
    # 38.6 M values: the neighbours are searched in a worker, and land in the inspector
    ids = wait_neighbors(qtbot, explorer.state)
    qtbot.waitUntil(lambda: explorer.window.inspector.neighbor_ids() == ids)
    assert_nearest(table.matrix(), 42, ids)
    assert explorer.window.inspector.facts["offset"].text() == "129,024 B = 0x1F800"
    assert explorer.window.inspector.facts["stride"].text().startswith("3,072 B")
    assert explorer.window.matrix_view.highlighted_row() == 42
    assert table.vocab_size == 50257


@pytest.mark.parametrize("spec", ["minilm", "smollm2"])
def test_real_models_open_and_select(qtbot, explorer, spec):
    table = load(qtbot, explorer, spec)
    explorer.state.set_text("The river bank")
    tokens = explorer.state.tokens
    bank = next(t for t in tokens if "bank" in t.piece)
    explorer.state.select_position(bank.position)
    insp = explorer.window.inspector
    assert explorer.window.matrix_view.highlighted_row() == bank.id
    ref = open_table(spec)
    np.testing.assert_array_equal(insp.values_model._values, ref.row(bank.id))
    assert insp.facts["offset"].text().startswith(f"{bank.id * ref.row_bytes:,} B")
    wait_neighbors(qtbot, explorer.state)
    qtbot.waitUntil(lambda: len(insp.neighbor_ids()) == 10)
    assert_nearest(ref.matrix(), bank.id, insp.neighbor_ids())
    status = explorer.window.status_model.text()
    assert f"{table.vocab_size:,} × {table.dim:,}" in status and table.dtype in status


def test_bad_path_shows_error_and_keeps_model(qtbot, explorer, tmp_path):
    load(qtbot, explorer, "toy:robot")
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"\x00garbage" * 10)
    load(qtbot, explorer, str(bad), ok=False)
    assert "safetensors" in explorer.last_error
    assert explorer.state.table.spec == "toy:robot"
    load(qtbot, explorer, str(tmp_path / "missing"), ok=False)
    assert "no such" in explorer.last_error
    assert explorer.state.table.spec == "toy:robot"
    # close the non-modal error boxes
    for w in QApplication.topLevelWidgets():
        if w.isVisible() and w is not explorer.window and w.inherits("QMessageBox"):
            w.close()


def test_unknown_word_is_shown_not_raised(qtbot, explorer):
    load(qtbot, explorer, "toy:cat-sat")
    explorer.state.set_text("the dog")
    strip = explorer.window.token_strip
    assert not strip.error.isHidden()
    assert strip.error.text() == "1 word is not in the vocabulary: 'dog'"
    assert [t.piece for t in explorer.state.tokens] == ["the", "dog"]  # "the" is not lost
    assert strip.chips.flags(1)["out_of_range"] and strip.chips.label(1) == ("dog", "unknown word")
    explorer.state.set_text("the cat")
    assert strip.error.isHidden()
    assert len(strip.chips.tokens()) == 2


def test_out_of_range_ids_are_flagged(qtbot, explorer):
    load(qtbot, explorer, "random:100x8")
    explorer.state.set_text("5 300")
    chips = explorer.window.token_strip.chips
    assert chips.flags(1)["out_of_range"]
    assert not chips.flags(0)["out_of_range"]
    explorer.state.select_position(1)  # no row to show for an id outside the table, only why
    assert explorer.state.selected_id == -1
    assert explorer.window.inspector.facts["offset"].text() == "–"
    assert "past the last row" in explorer.window.inspector.subtitle.text()


def test_typing_in_the_text_box_retokenizes(qtbot, explorer):
    load(qtbot, explorer, "default")
    edit = explorer.window.token_strip.edit
    edit.clear()
    qtbot.keyClicks(edit, "the red car")
    qtbot.waitUntil(lambda: explorer.state.text == "the red car", timeout=3000)
    assert [t.id for t in explorer.window.token_strip.chips.tokens()] == [
        explorer.state.table.tokenizer.id_of(w) for w in ("the", "red", "car")
    ]


def test_closing_during_a_load_is_clean(qtbot, settings):
    make_app()
    ex = Explorer(settings=settings)
    qtbot.addWidget(ex.window)
    ex.window.show()
    ex.open_spec("random:400000x512")  # the loader reads 200M values: still running at close
    qtbot.wait(50)
    assert ex.loading
    ex.window.close()
    assert not ex.loading
    from PySide6.QtCore import QThreadPool

    # every job was asked to stop and ends at its next yield; close waits CLOSE_WAIT_MS for that, but on a
    # loaded machine a job may be inside a step that cannot be cut (an import, one chunk of the table):
    # what must hold is that nothing runs on for long, not how fast the machine is
    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=30_000)
    assert ex.state.table is None  # the cancelled load was never installed


def test_cancel_keeps_the_previous_model(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        explorer.open_spec("random:400000x512")
        qtbot.wait(30)
        explorer.window.cancel_button.click()
    assert blocker.args == [False]
    assert explorer.state.table.spec == "toy:robot"
    assert explorer.window.progress.isHidden()


def test_settings_are_restored(qtbot, settings):
    make_app()
    ex = Explorer(settings=settings)
    qtbot.addWidget(ex.window)
    ex.window.show()
    ex.window.resize(760, 560)
    saved = ex.window.size()
    load(qtbot, ex, "toy:robot")
    ex.state.set_text("box tool")
    ex.window.show_view("similarity")
    ex.window.close()
    ex2 = Explorer(settings=QSettings(settings.fileName(), QSettings.IniFormat))
    qtbot.addWidget(ex2.window)
    ex2.restore_settings()
    with qtbot.waitSignal(ex2.load_finished, timeout=LOAD_TIMEOUT):
        ex2.start()
    assert ex2.state.table.spec == "toy:robot"
    assert ex2.state.text == "box tool"
    assert ex2.window.tabs.tabText(ex2.window.tabs.currentIndex()) == "Similarity"
    assert ex2.window.size().width() == saved.width()  # heights depend on the content's minimum
    ex2.window.close()


def test_the_model_opened_is_saved_without_the_windows_thread(qtbot, explorer):
    """The next start opens the last model even after a crash, and the window's thread does not
    write it: the file has it while that thread is still in the turn that installed the model
    (QSettings of the window's thread saves in a later turn)."""
    path = Path(explorer.settings.fileName())
    seen = []

    def look_in_the_file() -> None:  # in the installing turn: load_finished comes at its end
        deadline = time.monotonic() + 10
        while "model=toy:robot" not in (path.read_text() if path.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append("model=toy:robot" in path.read_text())

    load(qtbot, explorer, "toy:cat-sat")  # the first model opened also saves the first-run hint's flag
    explorer.load_finished.connect(look_in_the_file)
    load(qtbot, explorer, "toy:robot")
    explorer.load_finished.disconnect(look_in_the_file)
    assert seen == [True]
    load(qtbot, explorer, "toy:cat-sat")
    explorer.save_settings()  # the writes under way land first: the window's last state wins
    assert QSettings(str(path), QSettings.IniFormat).value("model") == "toy:cat-sat"
    assert "model=toy:cat-sat" in path.read_text()


def test_picker_lists_sources_and_opens_one(qtbot, explorer):
    load(qtbot, explorer, "toy:robot")
    explorer.show_picker()
    picker = explorer.picker
    qtbot.waitUntil(lambda: "default" in picker.specs(), timeout=LOAD_TIMEOUT)
    specs = picker.specs()
    assert {"default", "toy:cat-sat", "minilm", "smollm2"} <= set(specs)
    item = picker._items["minilm"]
    assert item.text(1) == "30,522" and item.text(2) == "384" and item.text(3) == "float32"
    assert picker._items["smollm2"].text(6) == "tied"
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT):
        picker.choose("toy:cat-sat")
    assert explorer.state.table.spec == "toy:cat-sat"
    picker.v_spin.setValue(1000)
    picker.d_spin.setValue(16)
    picker.seed_spin.setValue(3)
    with qtbot.waitSignal(explorer.load_finished, timeout=LOAD_TIMEOUT):
        picker.random_btn.click()
    assert explorer.state.table.spec == "random:1000x16:3"


def test_matrix_row_click_selects(qtbot, explorer):
    table = load(qtbot, explorer, "default")
    mv = explorer.window.matrix_view
    with qtbot.waitSignal(mv.row_clicked) as blocker:
        mv.row_clicked.emit(12)
    assert blocker.args == [12]
    assert explorer.state.selected_id == 12
    assert mv.highlighted_row() == 12
    assert explorer.state.selected_position == -1 or table.tokenizer.encode(explorer.state.text)[
        explorer.state.selected_position].id == 12


def test_copy_row_csv(qtbot, explorer):
    table = load(qtbot, explorer, "toy:five-rows")
    explorer.state.set_text("2")
    text = explorer.window.inspector.copy_row_csv()
    assert QApplication.clipboard().text() == text
    values = [float(x) for x in text.splitlines()[1].split(",")[2:]]
    np.testing.assert_allclose(values, table.row(2))
    np.testing.assert_allclose(values, [-0.78, 0.22, 0.05], atol=1e-6)


def _run_cli(*args, timeout=180):
    env = dict(__import__("os").environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def test_screenshot_command(tmp_path):
    out = tmp_path / "shot.png"
    r = _run_cli("--model", "toy:robot", "--text", "robot arm", "--token", "1", "--size", "1280x800",
                 "--screenshot", str(out))
    assert r.returncode == 0, r.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert (img.width(), img.height()) == (1280, 800)


def test_screenshot_with_bad_model_exits_2(tmp_path):
    r = _run_cli("--model", str(tmp_path / "nope"), "--screenshot", str(tmp_path / "x.png"))
    assert r.returncode == 2
    assert r.stderr.strip().startswith("error:") and "Traceback" not in r.stderr
    r = _run_cli("--view", "nonsense", "--screenshot", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "unknown view" in r.stderr


def test_hidden_views_defer_their_work_until_shown(qtbot, explorer):
    load(qtbot, explorer, "default")
    win = explorer.window
    assert win.tabs.currentIndex() == 0  # the matrix
    explorer.state.set_selected_token(30)
    # a tab never shown has not even built its view, so nothing is fitted or animated
    assert not explorer._pages["projection"].built and not explorer._pages["lookup"].built
    assert explorer.state.projection.value is None and not explorer.state.projection.running
    win.show_view("projection")
    qtbot.waitUntil(lambda: explorer.projection_view.result is not None, timeout=30000)
    win.show_view("lookup")
    assert explorer.lookup_view._hot == 30
    explorer.state.set_selected_token(31)
    assert explorer.lookup_view._hot == 31  # shown: follows at once


def test_a_selected_id_past_the_table_is_explained(qtbot, explorer):
    load(qtbot, explorer, "random:100x8")
    explorer.state.set_text("5 99 100 7")
    explorer.state.select_position(2)
    insp = explorer.window.inspector
    assert explorer.state.selected_id == -1
    assert insp.title.text() == "100"
    assert "rows 0 to 99" in insp.subtitle.text() and "index error" in insp.subtitle.text()
    assert explorer.state.tokenized.rows_read == 3  # 5, 99 and 7; 100 names no row
    assert "3 distinct rows read" in explorer.window.token_strip.summary.text()


def test_the_warm_up_imports_torch_and_the_views_code_after_the_first_model(qtbot, explorer):
    with qtbot.waitSignal(explorer.load_finished, timeout=60_000):
        explorer.start(model="default")
    with qtbot.waitSignal(explorer.warmed_up, timeout=60_000):
        pass
    import sys

    from explorer.warm_up import TORCH_MODULES, VIEW_MODULES

    assert all(name in sys.modules for name in VIEW_MODULES + TORCH_MODULES)
    for name in explorer.window.view_names()[1:]:  # every built-on-demand tab's code is among what is imported
        module = type(explorer.view(name)).__module__
        assert any(module == m or module.startswith(m + ".") for m in VIEW_MODULES), module


def test_the_warm_up_imports_the_views_code_before_torch():
    """Behind torch (1-2 s) the views' code came 3.4 s after the window, and a tab opened
    meanwhile imported it on the GUI thread while torch's import held the GIL. In a fresh
    process, the app's warm-up has every view's code and not yet torch when it turns to torch."""
    script = (
        "import sys\n"
        "from explorer.warm_up import VIEW_MODULES, WARM_UP_MODULES\n"
        "from explorer.workers import warm_up_job\n"
        "job = warm_up_job(WARM_UP_MODULES)\n"
        "for _, message in job:\n"
        "    if message == 'Preparing torch…':\n"
        "        break\n"
        "print(all(m in sys.modules for m in VIEW_MODULES), 'torch' in sys.modules)\n"
        "job.close()\n"
    )
    assert fresh_process(script) == ["True", "False"]


def test_torch_dynamo_and_the_layouts_code_wait_for_the_first_idle_moment_after_the_warm_up():
    """torch._dynamo (1.3-1.5 s of Python holding the GIL) made most of a real window's early
    stalls while the warm-up imported it; openTSNE (with scikit-learn and SciPy, 0.9 s) was imported
    by the first layout, in the middle of the user's clicks. In a fresh process none is
    imported when the warm-up ends, and all are, by a worker, once the user has been idle a moment."""
    script = (
        "import sys, threading, time\n"
        "from PySide6.QtCore import QCoreApplication\n"
        "from explorer.app import Explorer, make_app\n"
        "from explorer.warm_up import IDLE_MODULES\n"
        "app = make_app()\n"
        "ex = Explorer()\n"
        "ex.window.show()\n"
        "warm = []\n"
        "ex.warmed_up.connect(lambda: warm.append(any(m in sys.modules for m in IDLE_MODULES)))\n"
        "ex.start(model='toy:robot')\n"
        "end = time.monotonic() + 100\n"
        "while (not all(m in sys.modules for m in IDLE_MODULES) or ex.busy()) and time.monotonic() < end:\n"
        "    QCoreApplication.processEvents()\n"
        "    time.sleep(0.01)\n"
        "print(warm, all(m in sys.modules for m in IDLE_MODULES), ex.idle_builder.active)\n"
        "ex.shutdown(wait_ms=10_000)\n"
    )
    from explorer.warm_up import IDLE_MODULES

    assert {"torch._dynamo", "openTSNE"} <= set(IDLE_MODULES)
    assert fresh_process(script)[-3:] == ["[False]", "True", "True"]


def test_the_warm_up_imports_the_modules_it_is_given_off_the_gui_thread(tmp_path, monkeypatch):
    import sys
    import threading

    from explorer.core.jobs import run_to_end
    from explorer.workers import warm_up_job

    (tmp_path / "warm_probe_module.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe_module", raising=False)
    result = {}
    worker = threading.Thread(target=lambda: result.update(done=run_to_end(warm_up_job(["warm_probe_module"]))),
                              name="warm-up-test")
    worker.start()
    worker.join(60)
    assert result["done"] is True
    assert sys.modules["warm_probe_module"].THREAD == "warm-up-test"


def test_the_warm_up_imports_with_the_collector_off_and_skips_optional_modules_that_fail(tmp_path, monkeypatch):
    """A full collection in the middle of the imports held the GIL (and the window) for
    100-650 ms: the collector is off while they run and on again after; an optional module
    that cannot be imported (no PyOpenGL) does not end the warm-up."""
    import gc
    import sys

    from explorer.core.jobs import run_to_end
    from explorer.workers import warm_up_job

    (tmp_path / "warm_gc_probe.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    (tmp_path / "warm_broken_probe.py").write_text("raise ImportError('no OpenGL here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("warm_gc_probe", "warm_broken_probe"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert gc.isenabled()
    assert run_to_end(warm_up_job(["warm_gc_probe"], ["warm_broken_probe", "no_such_module_here"])) is True
    assert sys.modules["warm_gc_probe"].COLLECTING is False
    assert gc.isenabled()
    with pytest.raises(ImportError):  # a view's own code failing is a bug, not a missing feature
        run_to_end(warm_up_job(["warm_broken_probe"]))
    assert gc.isenabled()


def test_the_warm_up_calls_an_optional_module_s_function_in_its_worker_and_goes_on_if_it_fails(tmp_path, monkeypatch):
    """``module:function`` (the 3D view's OpenGL driver, loaded ahead): called in the warm-up's thread."""
    import sys
    import threading

    from explorer.core.jobs import run_to_end
    from explorer.warm_up import OPTIONAL_MODULES
    from explorer.workers import warm_up_job

    (tmp_path / "warm_call_probe.py").write_text(
        "import threading\nCALLED = []\ndef call():\n    CALLED.append(threading.current_thread().name)\n"
        "def fail():\n    raise OSError('no driver')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_call_probe", raising=False)
    result = {}
    job = warm_up_job([], ["warm_call_probe:fail", "warm_call_probe:call", "warm_call_probe:no_such_function"])
    worker = threading.Thread(target=lambda: result.update(done=run_to_end(job)), name="warm-up-test")
    worker.start()
    worker.join(60)
    assert result["done"] is True and sys.modules["warm_call_probe"].CALLED == ["warm-up-test"]
    assert OPTIONAL_MODULES[-1] == "explorer.ui.projection.opengl.driver:load_gl_driver"


def test_the_warm_up_parks_what_exists_before_the_collector_is_on_again(tmp_path, monkeypatch):
    """The first collection after torch's import walked everything (190 ms holding the GIL, in
    whichever thread allocated next) before the window's freeze came: the job freezes first."""
    import gc
    import sys

    from explorer.core.jobs import run_to_end
    from explorer.workers import warm_up_job

    (tmp_path / "warm_freeze_probe.py").write_text("HELD = [[] for _ in range(1000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_freeze_probe", raising=False)
    before = gc.get_freeze_count()  # the suite parks what exists before each test (tests/conftest.py)
    assert run_to_end(warm_up_job()) is True
    # not asked for: nothing parked (the objects this test made since would be). Not "equal": a parked
    # object an earlier test left to another thread can be freed meanwhile, and leaves the count
    assert gc.get_freeze_count() <= before
    assert run_to_end(warm_up_job(["warm_freeze_probe"], freeze=True)) is True
    assert gc.get_freeze_count() >= before + 1000  # the module's own lists among them
    assert gc.isenabled()
