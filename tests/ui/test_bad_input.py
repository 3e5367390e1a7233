"""Bad input in the window: NaN/inf weights, huge text, empty text."""

from __future__ import annotations

import json

import numpy as np

from explorer.core.tokens.tokenize import MAX_TEXT_CHARS
from tests.support.ui_helpers import load, wait_tokens


def test_nan_and_inf_weights_are_shown_not_crashed(qtbot, explorer, tmp_path):
    from safetensors.numpy import save_file

    e = np.random.default_rng(0).normal(0, 0.02, (50, 8)).astype(np.float32)
    e[3, 2] = np.nan
    e[4, :] = np.inf
    e[5, :] = 0.0
    folder = tmp_path / "nan"
    folder.mkdir()
    save_file({"model.embed_tokens.weight": e}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"vocab_size": 50, "hidden_size": 8}))
    load(qtbot, explorer, str(folder))
    explorer.state.set_text("3 4 5 6")
    insp = explorer.window.inspector
    explorer.state.select_position(0)
    assert "non-finite" in insp.facts["norm"].text()
    explorer.state.select_position(1)
    assert "non-finite" in insp.facts["norm"].text()
    explorer.state.select_position(3)
    # neighbours never include a NaN, inf or all-zero row
    assert not {3, 4, 5} & set(insp.neighbor_ids())
    for tab in range(explorer.window.tabs.count()):
        explorer.window.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
    explorer.window.grab()


def test_huge_and_empty_text(qtbot, explorer):
    table = load(qtbot, explorer, "default")
    text = "the cat " * 200_000  # 1.6 MB pasted
    tokens = wait_tokens(qtbot, explorer.state, text)
    tokenized = explorer.state.tokenized
    assert tokenized.truncated and tokenized.limit == MAX_TEXT_CHARS
    assert len(tokens) == len(table.tokenizer.encode(text[:MAX_TEXT_CHARS]))
    strip = explorer.window.token_strip
    assert len(strip.chips.tokens()) == len(tokens)  # every token has its chip
    assert f"only the first {MAX_TEXT_CHARS:,} of {len(text):,} characters" in strip.summary.text()
    explorer.window.grab()
    explorer.state.set_text("")
    assert explorer.state.tokens == []
    assert strip.empty.isVisibleTo(explorer.window)
    assert table is explorer.state.table
