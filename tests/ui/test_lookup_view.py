"""The lookup view: one-hot product versus pointer offset (pytest-qt, offscreen).

Truth comes from FACTS.md's figures and independent numpy / torch
computations, never from numbers the view produced.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.app import make_app
from explorer.core.sources import open_table
from explorer.state import AppState
from explorer.ui.lookup_view import LookupView
from explorer.workers import JobRunner, await_all_workers

V_GPT2, D_GPT2 = 50_257, 768


@pytest.fixture
def setup(qtbot):
    make_app()
    state = AppState()
    runner = JobRunner()
    view = LookupView(state, runner=runner)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    yield state, view, runner
    runner.cancel(emit=False)
    await_all_workers()


@pytest.fixture(scope="module")
def gpt2_table():
    return open_table("random:50257x768")


def _select(state, spec_or_table, token_id, text=None):
    table = open_table(spec_or_table) if isinstance(spec_or_table, str) else spec_or_table
    state.set_table(table)
    if text is not None:
        state.set_text(text)
    state.set_selected_token(token_id)
    return table


def test_empty_states_say_what_to_do(setup):
    state, view, _runner = setup
    assert view.empty.isVisible() and "Open a model" in view.empty.text()
    state.set_table(open_table("toy:robot"))
    state.set_text("")
    assert view.empty.isVisible() and "Click a token" in view.empty.text()
    assert view.frame is None


def test_gpt2_token_42_stride_offset_and_flops(setup, gpt2_table):
    state, view, _runner = setup
    _select(state, gpt2_table, 42)
    lay = view.layout_info
    assert (lay.stride, lay.offset) == (3_072, 129_024)
    text = view.formula.text()
    assert "3,072" in text and "129,024" in text and "0x1F800" in text
    # the base is the real data pointer of the loaded tensor
    base = gpt2_table.torch_table().data_ptr()
    assert f"0x{base:X}" in text and f"0x{base + 0x1F800:X}" in text
    view.pause()
    view.seek(1.0)
    f = view.frame
    assert f.finished and f.flops == 77_194_752 == 2 * V_GPT2 * D_GPT2
    assert f.zero_multiply_adds == 38_596_608
    assert "77,194,752" in view.left_counters.text()
    assert "38,596,608" in view.left_counters.text()
    assert "FLOPs" in view.right_counters.text() and "3,072 of 3,072" in view.right_counters.text()


@pytest.mark.parametrize("dtype,size", [("float16", 2), ("bfloat16", 2), ("int8", 1), ("float32", 4)])
def test_dtype_changes_stride_offset_and_bytes(setup, dtype, size):
    state, view, _runner = setup
    table = _select(state, "toy:cat-sat", 4, "the cat sat on the mat")
    idx = view.dtype_combo.findData(dtype)
    if dtype == table.dtype:
        assert idx == -1  # already "as stored"
        idx = 0
    view.dtype_combo.setCurrentIndex(idx)
    lay = view.layout_info
    d = table.dim
    t = torch.zeros((table.vocab_size, d), dtype=getattr(torch, dtype))
    assert lay.stride == t.stride(0) * t.element_size() == d * size
    assert lay.offset == t[4].data_ptr() - t.data_ptr()
    assert f"0x{lay.offset:X}" in view.formula.text()
    assert f"{lay.stride:,} B" in view.formula.text()
    view.pause()
    view.seek(1.0)
    assert f"{d * size:,} of {d * size:,}" in view.right_counters.text()
    # the one-hot path reads every row: V x stride bytes
    assert f"{table.vocab_size * d * size:,}" in view.left_counters.text()


def test_both_outputs_end_identical_and_the_view_says_so(setup):
    state, view, _runner = setup
    table = _select(state, "toy:five-rows", 2)
    view.pause()
    view.seek(1.0)
    e = torch.from_numpy(table.matrix().copy())
    onehot = torch.nn.functional.one_hot(torch.tensor([2]), table.vocab_size).float() @ e
    assert torch.equal(onehot[0], e[2])
    np.testing.assert_array_equal(e[2].numpy(), np.float32([-0.78, 0.22, 0.05]))  # FACTS.md
    assert "identical" in view.verdict.text()
    # the output curves/images both hold the row at the end
    left = view.left_out_img.image[0]
    right = view.right_out_img.image[0]
    np.testing.assert_array_equal(left, e[2].numpy())
    np.testing.assert_array_equal(right, e[2].numpy())
    assert [t.toPlainText() for t in view.left_out_texts[:3]] == ["-0.78", "+0.22", "+0.05"]


def test_an_inf_in_e_is_explained(setup, tmp_path):
    from safetensors.numpy import save_file

    state, view, _runner = setup
    e = np.random.default_rng(0).standard_normal((20, 5)).astype(np.float32)
    e[7, 2] = np.inf
    path = tmp_path / "e.safetensors"
    save_file({"embed_tokens.weight": e}, str(path))
    _select(state, str(path), 3)
    with np.errstate(invalid="ignore"):
        assert np.isnan((np.eye(20, dtype=np.float32)[3] @ e)[2])  # independently: 0 x inf = NaN
    text = view.verdict.text()
    assert "differ" in text and "NaN" in text


def test_controls_drive_the_animation(setup, qtbot):
    state, view, _runner = setup
    table = _select(state, "toy:cat-sat", 2, "the cat sat on the mat")
    assert view.playing  # a new token starts the walk
    qtbot.mouseClick(view.step_button, Qt.LeftButton)
    assert not view.playing
    assert view.frame.rows_done == 1 and view.frame.multiply_adds == table.dim
    qtbot.mouseClick(view.step_button, Qt.LeftButton)
    qtbot.mouseClick(view.step_button, Qt.LeftButton)
    f = view.frame
    assert f.rows_done == 3 and f.output_filled == table.dim  # row 2 (the 1) is in
    assert f.zero_multiply_adds == 2 * table.dim
    qtbot.mouseClick(view.restart_button, Qt.LeftButton)
    assert view.playing and view.frame.rows_done == 0
    qtbot.mouseClick(view.play_button, Qt.LeftButton)
    assert not view.playing and view.play_button.text() == "Play"
    # play at the fastest speed until the end
    view.speed_combo.setCurrentIndex(view.speed_combo.count() - 1)
    with qtbot.waitSignal(view.animation_finished, timeout=5000):
        qtbot.mouseClick(view.play_button, Qt.LeftButton)
    f = view.frame
    v, d = table.vocab_size, table.dim
    assert f.finished and f.flops == 2 * v * d and f.zero_multiply_adds == (v - 1) * d and f.work_left == 0
    assert not view.playing


def test_playing_advances_from_elapsed_time(setup, qtbot):
    state, view, _runner = setup
    _select(state, "random:2000x16", 1500)
    qtbot.waitUntil(lambda: view.frame is not None and view.frame.multiply_adds > 0, timeout=3000)
    view.pause()
    before = view.frame.t
    qtbot.wait(100)
    assert view.frame.t == before  # paused: time stands still
    view.seek(0.5)
    assert view.frame.t == pytest.approx(view.schedule.total_s / 2)


def test_follows_the_selected_token(setup):
    state, view, _runner = setup
    table = _select(state, "toy:robot", 0, "robot arm box tool")
    assert view.schedule.hot == 0
    state.set_selected_token(3)
    assert view.schedule.hot == 3
    assert view.layout_info.offset == 3 * table.dim * 4
    assert "tool" in view.title.text()
    # the accent rectangle sits on row 3 of the zoomed window
    assert view.zoom_hot.rect().top() == pytest.approx(3)


def test_measure_agrees_with_torch_and_reports_fields(setup, qtbot):
    state, view, runner = setup
    _select(state, "toy:robot", 1, "robot arm box tool")
    assert view.playing
    with qtbot.waitSignal(runner.succeeded, timeout=20000):
        qtbot.mouseClick(view.measure_button, Qt.LeftButton)
        assert not view.playing  # the animation waits, so it does not distort the timings
    assert view.playing  # and resumes afterwards
    r = view.measurement
    assert [b["batch"] for b in r["batches"]] == [1, 64]
    for b in r["batches"]:
        assert b["agree"]
        assert b["ratio"] == pytest.approx(b["onehot_s"] / b["gather_s"])
        assert set(("gather_s", "onehot_s", "linear_s")) <= set(b)
    assert "identical" in view.measure_status.text()
    assert view.results.isVisible()
    # the three paths agree, independently checked
    e = torch.from_numpy(open_table("toy:robot").matrix().copy())
    ids = torch.tensor([1, 3, 1])
    lin = torch.nn.Linear(4, 3, bias=False)
    with torch.no_grad():
        lin.weight.copy_(e.T)
    oh = torch.nn.functional.one_hot(ids, 4).float()
    assert torch.equal(torch.nn.functional.embedding(ids, e), oh @ e)
    assert torch.equal(oh @ e, lin(oh).detach())


def test_measure_can_be_cancelled(setup, qtbot, gpt2_table):
    state, view, runner = setup
    _select(state, gpt2_table, 42)
    view.pause()
    with qtbot.waitSignal(runner.cancelled, timeout=5000):
        view.measure()
        assert runner.running and view.cancel_button.isEnabled()
        qtbot.mouseClick(view.cancel_button, Qt.LeftButton)
    assert not runner.running
    assert view.measurement is None
    assert "cancelled" in view.measure_status.text().lower()
    assert view.measure_button.isEnabled()
