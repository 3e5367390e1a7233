"""The lookup view's backward step on the user's text (pytest-qt, offscreen).

The gradient shown is checked against torch autograd of L = Σ_t ⟨G_t, E[x_t]⟩
with the G the state used; counts against the text's distinct ids.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.core.sources import open_table

TIMEOUT = 30_000


@pytest.fixture
def setup(manual_view):
    return manual_view


def _autograd(table, ids, upstream) -> np.ndarray:
    e = torch.tensor(table.matrix(), dtype=torch.float64, requires_grad=True)
    (torch.nn.functional.embedding(torch.tensor(ids), e) * torch.tensor(upstream, dtype=torch.float64)).sum().backward()
    return e.grad.numpy()


def _open_backward(qtbot, state, view, spec, text):
    table = open_table(spec)
    state.set_table(table)
    state.set_text(text)
    qtbot.mouseClick(view.direction_button, Qt.LeftButton)
    assert view.showing_backward and view.direction_button.text() == "◂ Forward"
    assert not view.controls.isVisible() and view.backward.bar.isVisible()
    qtbot.waitUntil(lambda: view.backward.result is not None and view.backward.plots_built, timeout=TIMEOUT)
    qtbot.wait(10)  # the layout the last part asked for (the row-label axes' width) runs
    return table, view.backward


def test_forward_walk_ends_with_a_cue_to_the_backward_step(qtbot, setup):
    state, view = setup
    state.set_table(open_table("toy:gradient"))
    state.set_text("3 1 3")
    assert view.direction_button.text() == "Backward ▸" and not view.direction_button.property("cue")
    view.seek(1.0)
    assert view.frame.finished
    assert view.direction_button.text() == "Next: backward ▸" and view.direction_button.property("cue")


def test_batch_3_1_3_lights_rows_1_and_3_and_sums_row_3(qtbot, setup):
    """FACTS.md's toy table B: a loss on [3, 1, 3] reaches rows 1 and 3 only; row 3 sums two contributions."""
    state, view = setup
    table, panel = _open_backward(qtbot, state, view, "toy:gradient", "3 1 3")
    back = panel.result
    g = back.upstream
    assert back.ids.tolist() == [3, 1, 3]
    ref = _autograd(table, [3, 1, 3], g)
    panel.pause()
    assert panel.positions_done == 0 and not panel.grad_img.image.any()  # nothing sent back yet
    # issue 25: the strip's counts say they are of the walk so far (the page's counts line
    # already gives the whole batch's "2 non-zero rows")
    assert "0 non-zero, 6 exactly 0 so far (0 of 3 positions)" in panel.strip_plot.titleLabel.text.replace(
        "</span>", "")
    panel.step()
    assert panel.positions_done == 1
    np.testing.assert_allclose(panel.grad_img.image, [np.zeros(table.dim), g[0]], atol=1e-6)  # rows 1, 3
    assert "row <b" in panel.now_label.text() and ">3</b>" in panel.now_label.text()
    panel.seek_end()
    assert panel.positions_done == 3
    # the rows drawn are the non-zero rows of dL/dE, in id order, equal to autograd's
    assert np.flatnonzero(ref.any(axis=1)).tolist() == [1, 3] == back.rows.tolist()
    np.testing.assert_allclose(panel.grad_img.image, ref[[1, 3]], atol=1e-6)
    assert not np.delete(ref, [1, 3], axis=0).any()  # every other row exactly zero
    assert panel.grad_plot.getAxis("left")._labels[1][2].endswith("×2")
    # the repeated row: its two contributions side by side and their sum
    assert panel.focus_row == 3
    np.testing.assert_allclose(panel.sum_img.image, [g[0], g[2], ref[3]], atol=1e-6)
    assert "appears 2 times" in panel.sum_title.text
    assert "2 non-zero, 4 exactly 0" in panel.strip_plot.titleLabel.text.replace("</span>", "")
    counts = panel.counts.text()
    assert ">2</b> non-zero rows = 2 distinct ids" in counts and "4 of 6 rows exactly 0" in counts
    assert "4 rows of tokens absent from the text get nothing this step" in panel.lesson.text()


def test_default_model_sentence_matches_autograd(qtbot, setup):
    state, view = setup
    text = "the king and the queen sat on the mat"
    table, panel = _open_backward(qtbot, state, view, "default", text)
    panel.seek_end()
    back = panel.result
    ids = [t.id for t in table.tokenizer.encode(text)]
    assert back.ids.tolist() == ids
    ref = _autograd(table, ids, back.upstream)
    hit = np.flatnonzero(ref.any(axis=1))
    assert back.rows.tolist() == hit.tolist() == sorted(set(ids))
    assert len(hit) == len(set(ids)) < len(ids)  # "the" three times
    np.testing.assert_allclose(panel.grad_img.image, ref[hit], atol=1e-5)
    the = table.tokenizer.id_of("the")
    assert panel.focus_row == the and panel.sum_img.image.shape == (4, table.dim)
    np.testing.assert_allclose(panel.sum_img.image[-1], ref[the], atol=1e-5)


def test_new_g_and_the_training_link(qtbot, setup):
    state, view = setup
    _table, panel = _open_backward(qtbot, state, view, "toy:gradient", "3 1 3")
    first = panel.result.upstream.copy()
    qtbot.mouseClick(panel.new_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: panel.result is not None and state.backward_seed == 1, timeout=TIMEOUT)
    assert not np.array_equal(panel.result.upstream, first)
    with qtbot.waitSignal(view.training_requested, timeout=1000):
        qtbot.mouseClick(panel.training_button, Qt.LeftButton)
    qtbot.mouseClick(view.direction_button, Qt.LeftButton)
    assert not view.showing_backward and view.controls.isVisible() and not view.backward.bar.isVisible()


def test_a_new_text_or_model_never_shows_the_old_gradient(qtbot, setup):
    state, view = setup
    _table, panel = _open_backward(qtbot, state, view, "toy:gradient", "3 1 3")
    state.set_text("0 5")
    assert panel.result is None or panel.result.ids.tolist() == [0, 5]
    qtbot.waitUntil(lambda: panel.result is not None, timeout=TIMEOUT)
    assert panel.result.ids.tolist() == [0, 5]
    state.set_table(open_table("random:40x4"))
    assert panel.result is None or panel.result.vocab_size == 40
    state.set_text("")
    qtbot.waitUntil(lambda: panel.result is None and "Type some text" in panel.now_label.text(), timeout=TIMEOUT)


def test_shares_of_zero_rows_never_round_to_all_or_none():
    from explorer.ui.lookup.backward_panel import _percent

    assert _percent(30_511, 30_522) == "99.96" and _percent(279, 286) == "97.6"
    assert _percent(6, 6) == "100.0" and _percent(0, 6) == "0.0" and float(_percent(1, 128_256)) > 0


def test_a_wide_table_draws_its_first_columns_and_says_so(qtbot, setup):
    state, view = setup
    table, panel = _open_backward(qtbot, state, view, "random:50x300", "1 2 1")
    panel.seek_end()
    ref = _autograd(table, [1, 2, 1], panel.result.upstream)
    assert panel.grad_img.image.shape == (2, 256)
    np.testing.assert_allclose(panel.grad_img.image, ref[[1, 2], :256], atol=1e-6)
    assert "columns 0–255 of 300" in panel.g_plot.getAxis("bottom").labelText


def test_the_backward_step_waits_while_the_view_is_hidden(qtbot, setup):
    state, view = setup
    view.hide()
    state.set_table(open_table("toy:gradient"))
    state.set_text("3 1 3")
    assert state.backward.pending and state.backward.value is None  # nobody shows it: not computed
    view.show()
    qtbot.waitUntil(lambda: view.backward.result is not None, timeout=TIMEOUT)
    assert view.backward.result.ids.tolist() == [3, 1, 3]


def test_only_the_first_positions_go_back(qtbot, setup):
    from explorer.core.lookup.backward import BACKWARD_MAX_POSITIONS

    state, view = setup
    state.set_table(open_table("toy:gradient"))
    state.set_text(" ".join(["3 1"] * BACKWARD_MAX_POSITIONS) + " 99999")  # and one id past the table
    qtbot.waitUntil(lambda: view.backward.result is not None, timeout=TIMEOUT)
    assert view.backward.result.ids.size == BACKWARD_MAX_POSITIONS
    assert state.tokenized.n_bad == 1  # not one of the text's tokens with a row
    assert f"the first {BACKWARD_MAX_POSITIONS} of the text's {2 * BACKWARD_MAX_POSITIONS} tokens" \
        in view.backward.counts.text()


def test_row_labels_are_drawn_whole(qtbot, setup):
    """Issue 25, item 16: "␣q…15,731" on SmolLM2: the label axes now take the width their labels want."""
    from explorer.core.sources import package_path

    if package_path("smollm2") is None:
        pytest.skip("SmolLM2 is not installed")
    state, view = setup
    table, panel = _open_backward(qtbot, state, view, "smollm2", "the king and the queen")
    panel.seek_end()
    panel.glw.grab()  # paint: the axes shorten what does not fit as they draw
    drawn = panel.grad_plot.getAxis("left").drawn
    queen = table.tokenizer.id_of("Ġqueen")
    assert any(f"{queen:,}" in text for text in drawn)
    assert drawn and not any("…" in text for text in drawn), drawn
    widths = {int(p.getAxis("left").width()) for p in (panel.g_plot, panel.grad_plot, panel.sum_plot)}
    assert len(widths) == 1  # the three images still line up


def test_the_running_commentary_is_never_cut(qtbot, setup):
    """Issue 25: at 1024 x 700 (the tab is about 660 px wide) "Press Play: each position's
    G_t goes back into its own row" was cut at the Forward button ("into its ov")."""
    from PySide6.QtGui import QTextDocument

    state, view = setup
    view.resize(660, 560)
    _, panel = _open_backward(qtbot, state, view, "toy:gradient", "3 1 3")
    panel.pause()
    label = panel.now_label
    qtbot.waitUntil(lambda: label.text().startswith("Press Play"))
    qtbot.wait(50)  # the top row lays out
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setHtml(label.text())
    doc.setDocumentMargin(0)
    assert doc.idealWidth() > label.width()  # this narrow, one line does not fit ...
    assert label.wordWrap() and label.height() >= label.heightForWidth(label.width())  # ... so it wraps, whole

