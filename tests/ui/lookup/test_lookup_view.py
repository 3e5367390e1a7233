"""The lookup view: one-hot product versus pointer offset (pytest-qt, offscreen).

A standalone view on its own AppState, with a clock the tests move by hand.
Truth comes from FACTS.md's figures and independent numpy / torch
computations, never from numbers the view produced.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.core.lookup import animation
from explorer.core.sources import open_table, package_path
from explorer.ui.lookup import LookupView
from tests.support.ui_helpers import standalone_view

V_GPT2, D_GPT2 = 50_257, 768
TIMEOUT = 30_000


@pytest.fixture
def clock():
    """Seconds that move only when the test says so."""
    return animation.ManualClock(1000.0)


@pytest.fixture
def setup(qtbot, clock):
    gen = standalone_view(qtbot, LookupView, clock=clock)
    view, state, _runner = next(gen)
    yield state, view
    next(gen, None)


@pytest.fixture(scope="module")
def gpt2_table():
    t = open_table("random:50257x768")
    t.matrix()  # read once, as the app's loader does (workers reading it at once would each make a copy)
    return t


def _select(state, spec_or_table, token_id, text=None):
    table = open_table(spec_or_table) if isinstance(spec_or_table, str) else spec_or_table
    state.set_table(table)
    if text is not None:
        state.set_text(text)
    state.set_selected_token(token_id)
    return table


def _measure(qtbot, state, view):
    with qtbot.waitSignal(state.measurement.finished, timeout=TIMEOUT):
        qtbot.mouseClick(view.measure_panel.measure_button, Qt.LeftButton)
    return view.measurement


def test_empty_states_say_what_to_do(setup):
    state, view = setup
    assert view.empty.isVisible() and "Open a model" in view.empty.text()
    state.set_table(open_table("toy:robot"))
    state.set_text("")
    assert view.empty.isVisible() and "Click a token" in view.empty.text()
    assert view.frame is None


def test_gpt2_token_42_stride_offset_and_flops(qtbot, setup, gpt2_table):
    state, view = setup
    _select(state, gpt2_table, 42)
    lay = view.layout_info
    assert (lay.stride, lay.offset) == (3_072, 129_024)
    text = view.pointer.formula.text()
    assert "3,072" in text and "129,024" in text and "0x1F800" in text
    assert "base + 0x1F800" in text  # until the real base is known
    # the base is the real data pointer of the loaded tensor, found in a worker
    qtbot.waitUntil(lambda: state.stored_base.value is not None, timeout=TIMEOUT)
    base = gpt2_table.torch_table().data_ptr()
    assert state.stored_base.value.address == base
    assert f"0x{base:X}" in view.pointer.formula.text()
    assert f"0x{base + 0x1F800:X}" in view.pointer.formula.text()
    view.pause()
    view.seek(1.0)
    f = view.frame
    assert f.finished and f.flops == 77_194_752 == 2 * V_GPT2 * D_GPT2
    assert f.zero_multiply_adds == 38_596_608
    assert "77,194,752" in view.onehot.counters.text()
    assert "38,596,608" in view.onehot.counters.text()
    assert "FLOPs" in view.pointer.counters.text() and "3,072 of 3,072" in view.pointer.counters.text()


@pytest.mark.parametrize("dtype,size", [("float16", 2), ("bfloat16", 2), ("int8", 1), ("float32", 4)])
def test_dtype_changes_stride_offset_and_bytes(setup, dtype, size):
    state, view = setup
    table = _select(state, "toy:cat-sat", 4, "the cat sat on the mat")
    combo = view.stored_as.combo
    idx = combo.findData(dtype)
    if dtype == table.dtype:
        assert idx == -1  # already "as stored"
        idx = 0
    combo.setCurrentIndex(idx)
    lay = view.layout_info
    d = table.dim
    t = torch.zeros((table.vocab_size, d), dtype=getattr(torch, dtype))
    assert lay.stride == t.stride(0) * t.element_size() == d * size
    assert lay.offset == t[4].data_ptr() - t.data_ptr()
    view.pause()
    view.seek(1.0)
    assert f"0x{lay.offset:X}" in view.pointer.formula.text()
    assert f"{lay.stride:,} B" in view.pointer.formula.text()
    assert f"{d * size:,} of {d * size:,}" in view.pointer.counters.text()
    # the one-hot path reads every row: V x stride bytes
    assert f"{table.vocab_size * d * size:,}" in view.onehot.counters.text()


def test_a_quantised_table_shows_its_block_layout(qtbot, setup):
    if package_path("smollm2") is None:
        pytest.skip("the smollm2 package is not installed")
    state, view = setup
    table = _select(state, "smollm2", 42)
    assert table.dtype == "Q8_0" and table.row_bytes == table.dim // 32 * 34  # 32 values in 34 bytes
    lay = view.layout_info
    assert (lay.stride, lay.offset) == (table.row_bytes, 42 * table.row_bytes)
    text = view.pointer.formula.text()
    assert f"{table.dim // 32:,} × 34 B = <b>{table.row_bytes:,} B</b>" in text
    assert f"0x{42 * table.row_bytes:X}" in text
    # a float16 copy would have a plain stride of d x 2 bytes
    view.stored_as.combo.setCurrentIndex(view.stored_as.combo.findData("float16"))
    assert view.layout_info.stride == table.dim * 2
    assert f"{table.dim:,} × 2 B = <b>{table.dim * 2:,} B</b>" in view.pointer.formula.text()


def test_both_outputs_end_identical_and_the_view_says_so(qtbot, setup):
    state, view = setup
    table = _select(state, "toy:five-rows", 2)
    view.pause()
    view.seek(1.0)
    e = torch.from_numpy(table.matrix().copy())
    onehot = torch.nn.functional.one_hot(torch.tensor([2]), table.vocab_size).float() @ e
    assert torch.equal(onehot[0], e[2])
    np.testing.assert_array_equal(e[2].numpy(), np.float32([-0.78, 0.22, 0.05]))  # FACTS.md
    qtbot.waitUntil(lambda: "identical" in view.verdict.text().lower(), timeout=TIMEOUT)
    # both outputs hold the row at the end
    np.testing.assert_array_equal(view.onehot.output.image.image[0], e[2].numpy())
    np.testing.assert_array_equal(view.pointer.output.image.image[0], e[2].numpy())
    assert view.onehot.output.texts.shown()[:3] == ["-0.78", "+0.22", "+0.05"]


def test_an_inf_in_e_is_explained(qtbot, setup, tmp_path):
    from safetensors.numpy import save_file

    state, view = setup
    e = np.random.default_rng(0).standard_normal((20, 5)).astype(np.float32)
    e[7, 2] = np.inf
    path = tmp_path / "e.safetensors"
    save_file({"embed_tokens.weight": e}, str(path))
    _select(state, str(path), 3)
    with np.errstate(invalid="ignore"):
        assert np.isnan((np.eye(20, dtype=np.float32)[3] @ e)[2])  # independently: 0 x inf = NaN
    qtbot.waitUntil(lambda: "differ" in view.verdict.text(), timeout=TIMEOUT)
    assert "NaN" in view.verdict.text()


def test_controls_drive_the_animation(qtbot, setup, clock):
    state, view = setup
    table = _select(state, "toy:cat-sat", 2, "the cat sat on the mat")
    controls = view.controls
    assert view.playing  # a new token starts the walk
    qtbot.mouseClick(controls.step_button, Qt.LeftButton)
    assert not view.playing
    assert view.frame.rows_done == 1 and view.frame.multiply_adds == table.dim
    qtbot.mouseClick(controls.step_button, Qt.LeftButton)
    qtbot.mouseClick(controls.step_button, Qt.LeftButton)
    f = view.frame
    assert f.rows_done == 3 and f.output_filled == table.dim  # row 2 (the 1) is in
    assert f.zero_multiply_adds == 2 * table.dim
    qtbot.mouseClick(controls.restart_button, Qt.LeftButton)
    assert view.playing and view.frame.rows_done == 0
    qtbot.mouseClick(controls.play_button, Qt.LeftButton)
    assert not view.playing and controls.play_button.text() == "Play"
    # at the fastest speed the whole walk passes in a twentieth of its length
    controls.speed_combo.setCurrentIndex(controls.speed_combo.count() - 1)
    with qtbot.waitSignal(view.animation_finished, timeout=1000):
        qtbot.mouseClick(controls.play_button, Qt.LeftButton)
        clock.advance(view.schedule.total_s / 20 + 1e-6)
        view.advance()
    f = view.frame
    v, d = table.vocab_size, table.dim
    assert f.finished and f.flops == 2 * v * d and f.zero_multiply_adds == (v - 1) * d and f.work_left == 0
    assert not view.playing


def test_frames_come_from_elapsed_time(setup, clock):
    state, view = setup
    _select(state, "random:2000x16", 1500)
    s = view.schedule
    clock.advance(1.25)
    view.advance()
    assert view.frame.t == pytest.approx(1.25)
    assert view.frame == s.frame(1.25)  # the same frame a seek to that time shows
    view.pause()
    clock.advance(100.0)
    view.advance()
    assert view.frame.t == pytest.approx(1.25)  # paused: time stands still
    view.seek(0.5)
    assert view.frame.t == pytest.approx(s.total_s / 2)
    view.play()
    view.set_speed(2.0)
    clock.advance(1.0)
    view.advance()
    assert view.frame.t == pytest.approx(s.total_s / 2 + 2.0)


def test_follows_the_selected_token(setup):
    state, view = setup
    table = _select(state, "toy:robot", 0, "robot arm box tool")
    assert view.schedule.hot == 0
    state.set_selected_token(3)
    assert view.schedule.hot == 3
    assert view.layout_info.offset == 3 * table.dim * 4
    assert "tool" in view.onehot.title.text()
    # the accent rectangle sits on row 3 of the zoomed window
    assert view.onehot.zoom_hot.rect().top() == pytest.approx(3)


def test_far_rows_are_shown_after_the_first_two_and_a_gap(setup, gpt2_table):
    state, view = setup
    _select(state, gpt2_table, 30_000)
    w = animation.row_window(V_GPT2, 30_000)
    assert w.gap == (2, 29_997)
    assert "2 … 29,997" in view.onehot.zoom_gap.textItem.toPlainText() and view.onehot.zoom_gap.isVisible()
    hot_at = int(w.positions[list(w.ids).index(30_000)])
    assert view.onehot.zoom_hot.rect().top() == pytest.approx(hot_at)


def test_measure_draws_the_results_and_holds_the_animation(qtbot, setup):
    state, view = setup
    _select(state, "toy:robot", 1, "robot arm box tool")
    panel = view.measure_panel
    assert view.playing and not panel.results.isVisible()
    with qtbot.waitSignal(state.measurement.finished, timeout=TIMEOUT):
        qtbot.mouseClick(panel.measure_button, Qt.LeftButton)
        # the animation waits, so it does not distort the timings
        assert not view.playing and not view.controls.play_button.isEnabled()
    assert view.playing and view.controls.play_button.isEnabled()  # and resumes afterwards
    m = view.measurement
    assert m is state.measurement.value
    assert [b.batch for b in m.batches] == [1, 64] and m.agree
    assert "identical" in panel.status.text()
    assert panel.results.isVisible() and panel.table.isVisible()
    lines = panel.table.text()
    for b in m.batches:
        assert f"{b.ratio:,.0f}×" in lines
    # six bars: three paths for each of the two batch sizes
    assert len(panel.chart_bars.opts["y"]) == 6
    assert "best" in panel.table.toolTip().lower() and "median" not in panel.table.toolTip().lower()
    assert "E as stored (float32)" in panel.caption
    # the three paths agree, independently checked
    e = torch.from_numpy(open_table("toy:robot").matrix().copy())
    ids = torch.tensor([1, 3, 1])
    lin = torch.nn.Linear(4, 3, bias=False)
    with torch.no_grad():
        lin.weight.copy_(e.T)
    oh = torch.nn.functional.one_hot(ids, 4).float()
    assert torch.equal(torch.nn.functional.embedding(ids, e), oh @ e)
    assert torch.equal(oh @ e, lin(oh).detach())


def test_measure_results_say_which_layout_they_were_measured_on(qtbot, setup):
    """Issue 12, item 7: after "Stored as" changes, the timings are not passed off as the new layout's."""
    state, view = setup
    _select(state, "toy:robot", 1)
    _measure(qtbot, state, view)
    panel = view.measure_panel
    assert "float32" in panel.caption and "Not measured" not in panel.caption
    view.stored_as.combo.setCurrentIndex(view.stored_as.combo.findData("int8"))
    assert "Not measured on the int8 layout" in panel.caption
    assert panel.caption in panel.chart.titleLabel.text  # on screen, as the chart's title
    view.stored_as.combo.setCurrentIndex(0)
    assert "Not measured" not in panel.caption and panel.caption in panel.chart.titleLabel.text


def test_measure_can_be_cancelled(qtbot, setup, gpt2_table):
    state, view = setup
    _select(state, gpt2_table, 42)
    view.pause()
    panel = view.measure_panel
    with qtbot.waitSignal(state.measurement.cancelled, timeout=5000):
        view.measure()
        assert state.measurement.running and panel.cancel_button.isVisible()
        assert not panel.measure_button.isEnabled()
        qtbot.mouseClick(panel.cancel_button, Qt.LeftButton)
    assert not state.measurement.running
    assert view.measurement is None
    assert "cancelled" in panel.status.text().lower()
    assert panel.measure_button.isEnabled() and not panel.cancel_button.isVisible()


def test_a_model_switch_clears_the_results(qtbot, setup):
    state, view = setup
    _select(state, "toy:robot", 1, "robot arm box tool")
    _measure(qtbot, state, view)
    qtbot.waitUntil(lambda: "identical" in view.verdict.text().lower(), timeout=TIMEOUT)
    assert view.measure_panel.results.isVisible()
    view.stored_as.combo.setCurrentIndex(view.stored_as.combo.findData("int8"))
    state.set_table(open_table("toy:cat-sat"))
    panel = view.measure_panel
    assert view.measurement is None and not panel.results.isVisible() and panel.caption == ""
    assert "Press Measure" in panel.status.text() and panel.status.toolTip() == ""
    assert view.stored_as.dtype == "stored" and "as stored (float32)" in view.stored_as.combo.currentText()
    assert view.empty.isVisible() or "arm" not in view.onehot.title.text()
    assert view.schedule is None or view.schedule.vocab_size == 6


def test_a_model_switch_from_a_row_the_new_table_lacks(qtbot, setup):
    state, view = setup
    _select(state, "random:2000x16", 1500)
    qtbot.waitUntil(lambda: state.stored_base.value is not None, timeout=TIMEOUT)
    table = _select(state, "toy:robot", 2, "robot arm box tool")
    assert view.schedule.hot == 2 and view.layout_info.offset == 2 * table.row_bytes
    qtbot.waitUntil(lambda: state.stored_base.value is not None, timeout=TIMEOUT)
    assert f"0x{state.stored_base.value.address + 2 * table.row_bytes:X}" in view.pointer.formula.text()


def test_a_hidden_view_does_no_work_until_shown(qtbot, setup, gpt2_table):
    state, view = setup
    view.hide()
    _select(state, gpt2_table, 42)
    # nothing built, nothing computed while hidden
    assert view.schedule is None and view.frame is None
    assert state.lookup_check.pending and not state.lookup_check.running
    assert state.stored_base.pending and not state.stored_base.running
    view.show()
    assert view.schedule is not None and view.schedule.hot == 42 and view.frame is not None
    qtbot.waitUntil(lambda: "identical" in view.verdict.text().lower(), timeout=TIMEOUT)
    view.hide()
    state.set_selected_token(7)
    assert view.schedule.hot == 42  # still the old walk, not rebuilt while hidden
    view.show()
    assert view.schedule.hot == 7


def test_a_table_too_big_to_hold_is_not_multiplied_and_says_so(setup):
    state, view = setup
    _select(state, "random:128256x4096", 5)
    assert not state.lookup_check.running and state.lookup_check.value is None
    assert "too big to hold (2.10 GB as float32)" in view.verdict.text()
    assert view.frame is not None and view.layout_info.offset == 5 * 4096 * 4


def _labels_drawn(view) -> list[str]:
    view.grab()  # paint: the axis lays its labels out while painting
    return view.onehot.row_axis.drawn


def _assert_every_row_labelled(view, table, token_id):
    w = animation.row_window(table.vocab_size, token_id)
    drawn = _labels_drawn(view)
    axis = view.onehot.row_axis
    assert len(drawn) == len(w.ids)
    for text, i in zip(drawn, w.ids):
        assert f"{i:,}  x={1 if i == token_id else 0} ×" in text, (text, i)
    # each label lies whole inside the axis (nothing cut off at its edges)
    bounds = axis.boundingRect().adjusted(-0.5, -0.5, 0.5, 0.5)
    assert all(bounds.contains(r) for r in axis.drawn_rects)
    # and where its row is: in order from top to bottom
    tops = [r.top() for r in axis.drawn_rects]
    assert tops == sorted(tops)


@pytest.mark.parametrize("size", [(880, 560), (640, 480)])
def test_every_row_label_is_drawn_for_long_pieces(qtbot, setup, size):
    """Issue 12, item 3: SmolLM2's "␣quick" and MiniLM's [CLS] rows kept their labels only in part."""
    state, view = setup
    view.resize(*size)
    for spec, text, piece in (("smollm2", "The quick brown fox", "quick"), ("minilm", "the quick fox", "[CLS]")):
        if package_path(spec) is None:
            continue
        table = open_table(spec)
        state.set_table(table)
        state.set_text(text)
        pos = next(k for k, t in enumerate(state.tokens) if piece in t.piece)
        state.select_position(pos)
        _assert_every_row_labelled(view, table, state.selected_id)
        drawn = _labels_drawn(view)
        hot_label = next(t for t in drawn if "x=1" in t)
        assert piece[:2] in hot_label or "…" in hot_label  # the piece itself, or shortened


def test_every_row_label_of_the_bundled_model_is_drawn(qtbot, setup):
    state, view = setup
    view.resize(880, 560)  # the tab's size in a 1280 x 800 window
    table = open_table("default")
    state.set_table(table)
    for token_id in (20, 198, 0, table.vocab_size - 1):
        state.set_selected_token(token_id)
        _assert_every_row_labelled(view, table, token_id)
