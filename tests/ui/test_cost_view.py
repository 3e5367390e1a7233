"""The Cost view: cost card, famous models, why vectors and the context-free lookup."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt

from explorer.app import make_app
from explorer.core.sources import open_table, package_path
from explorer.state import AppState
from explorer.ui.cost_view import CostView
from explorer.workers import JobRunner, await_all_workers


@pytest.fixture
def view_and_state(qtbot):
    make_app()
    state = AppState()
    runner = JobRunner()
    view = CostView(state, runner=runner)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    yield view, state, runner
    runner.cancel(emit=False)
    await_all_workers()


def _digits(text: str) -> int:
    return int("".join(ch for ch in text if ch.isdigit()))


def test_card_on_a_gpt2_shaped_table(view_and_state):
    view, state, _ = view_and_state
    state.set_table(open_table("random:50257x768"))
    t = view.tiles
    assert _digits(t["params"].value.text()) == 50_257 * 768 == 38_597_376
    assert t["float32"].value.text() == "154.39 MB"
    assert "147.24 MiB" in t["float32"].sub.text() and "154,389,504 bytes" in t["float32"].sub.text()
    assert "77,194,752 bytes" in t["float16"].sub.text() and "73.62 MiB" in t["float16"].sub.text()
    assert "77,194,752 bytes" in t["bfloat16"].sub.text()
    assert f"{50_257 * 768:,} bytes" in t["int8"].sub.text()
    assert _digits(t["row"].value.text()) == 768 * 4
    adam = 4 * torch.empty(50_257, 768).nbytes
    assert t["adam"].value.text() == f"{adam / 1e6:,.2f} MB"
    assert t["share"].value.text() == "unknown"
    assert t["scale"].value.text() == f"× {np.sqrt(768):.1f}"
    # the factorised alternative follows the slider
    view.k_slider.setValue(64)
    assert _digits(t["factor"].value.text()) == 50_257 * 64 + 64 * 768
    # GPT-2 small among the famous models: 38,597,376 and about 31 %
    row = next(r for r in range(view.compare_table.rowCount()) if view.compare_table.item(r, 0).text() == "GPT-2 small")
    cells = [view.compare_table.item(row, c).text() for c in range(view.compare_table.columnCount())]
    assert cells[3] == "38,597,376" and cells[4] == "31.0 %"
    assert cells[5] == "154,389,504" and cells[6] == "154.39 MB" and cells[7] == "77,194,752"
    llama = {view.compare_table.item(r, 0).text(): view.compare_table.item(r, 4).text()
             for r in range(view.compare_table.rowCount())}
    assert llama["Llama 3 8B"] == "6.5 %" and llama["Llama 3 70B"] == "1.5 %"


def test_comparison_chart_has_the_loaded_model(view_and_state):
    view, state, _ = view_and_state
    state.set_table(open_table("toy:robot"))
    names = [r.name for r in view._comparison]
    assert any(r.loaded for r in view._comparison) and len(names) == 8
    widths = view.param_bars.opts["width"]
    x0 = view.param_bars.opts["x0"]
    ends = np.asarray(x0) + np.asarray(widths)
    assert np.allclose(ends, np.log10([r.cost.params for r in view._comparison]))
    assert view.tiles["params"].value.text() == "12"  # FACTS: toy C has 12 parameters
    assert view.k_slider.maximum() == 3
    csv = view.comparison_csv().splitlines()
    assert csv[0].startswith("model,V,d") and len(csv) == 9
    assert any(line.startswith('"GPT-2 small",50257,768,38597376,') for line in csv)


def test_why_vectors_and_bank_on_minilm(qtbot, view_and_state):
    if package_path("minilm") is None:
        pytest.skip("MiniLM is not installed")
    view, state, runner = view_and_state
    table = open_table("minilm")
    with qtbot.waitSignal(runner.succeeded, timeout=60_000):
        state.set_table(table)
        state.set_text("the cat sat")
    why = view.why
    assert why.labels == ["cat", "dog", "airplane"]
    ids = [table.tokenizer.id_of(w) for w in why.labels]
    assert view.id_table.item(0, 1).data(Qt.UserRole) == abs(ids[0] - ids[1])
    assert view.onehot_table.item(0, 2).data(Qt.UserRole) == pytest.approx(np.sqrt(2))
    assert view.onehot_table.item(0, 2).data(Qt.UserRole + 1) == 0
    rows = table.rows(ids).astype(np.float64)
    cos01 = rows[0] @ rows[1] / np.linalg.norm(rows[0]) / np.linalg.norm(rows[1])
    assert view.cos_table.item(0, 1).data(Qt.UserRole) == pytest.approx(cos01)
    # bank: same id, same row; different vectors after the first layer
    same = view.same
    assert same.same_id and same.rows_equal
    assert view.occ_table.item(0, 3).text() == view.occ_table.item(1, 3).text() == f"{table.tokenizer.id_of('bank'):,}"
    assert "identical" in view.same_verdict.text()
    ctx = view.context
    assert ctx is not None
    c = view.ctx_table.item(2, 1).data(Qt.UserRole)
    assert c < 1 and c == pytest.approx(ctx.cosine("after transformer layer 1"))
    assert view.ctx_table.item(0, 1).data(Qt.UserRole) == pytest.approx(1.0)
    assert "√384 = 19.6" in view.scale_note.text() and "22.6" in view.scale_note.text()
    # editing the words re-computes the panels
    view.words_edit.setText("dog, cat")
    view.words_edit.editingFinished.emit()
    assert view.why.labels == ["dog", "cat"]


def test_tables_without_a_model_say_so(qtbot, view_and_state):
    view, state, runner = view_and_state
    state.set_table(open_table("default"))
    state.set_text("the quick fox chases the sleepy cat")
    assert view.why.labels[:2] == ["cat", "dog"]
    assert view.same.ok and view.same.rows_equal  # a repeated word of the text
    assert "not available" in view.context_message
    assert not runner.running
    state.set_table(open_table("random:4x3"))
    state.set_text("0 1 2")
    assert view.why.from_text and view.why.n == 3
    assert "not available" in view.context_message
    state.set_text("")
    assert view.tiles["params"].value.text() == "12"
