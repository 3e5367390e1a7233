"""The window opens folders the tests save with transformers and a GGUF the
tests write with the gguf package, through the same code a user runs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import model_factory as mf  # noqa: E402
from tests.support.ui_helpers import load


@pytest.mark.parametrize("arch,dtype,tied,sharded", [
    ("gpt2", "float32", True, False),
    ("llama", "bfloat16", False, True),
    ("bert", "float16", True, False),
])
def test_saved_hf_folder_opens_and_selects(qtbot, explorer, tmp_path, arch, dtype, tied, sharded):
    tok = mf.train_bpe(120) if arch != "bert" else mf.train_wordlevel()
    built = mf.build_model(tmp_path / "m", arch, dtype, tied=tied, sharded=sharded, tokenizer=tok)
    table = load(qtbot, explorer, str(built.folder))
    assert (table.vocab_size, table.dim) == built.embedding.shape
    assert table.dtype == dtype and table.tied is tied
    explorer.state.set_text("the cat sat")
    tokens = explorer.state.tokens
    assert tokens, "the model's own tokenizer produced no tokens"
    t = next(t for t in tokens if not t.special)
    explorer.state.select_position(t.position)
    insp = explorer.window.inspector
    np.testing.assert_array_equal(insp.values_model._values, built.embedding[t.id])
    assert insp.facts["offset"].text().startswith(f"{t.id * built.itemsize * table.dim:,} B")
    assert explorer.window.matrix_view.highlighted_row() == t.id
    assert f"{built.n_params:,}" in explorer.window.status_model.text()


def test_written_gguf_opens(qtbot, explorer, tmp_path):
    g = mf.build_gguf(tmp_path / "t.gguf", "Q8_0", tied=True, vocab=64, dim=64)
    table = load(qtbot, explorer, str(tmp_path / "t.gguf"))
    assert table.dtype == "Q8_0" and table.tied is True
    explorer.state.set_text("5 63")
    explorer.state.select_position(1)
    import gguf

    raw = gguf.GGUFReader(str(tmp_path / "t.gguf")).get_tensor(0)
    want = gguf.quants.dequantize(raw.data, raw.tensor_type)[63]
    np.testing.assert_array_equal(explorer.window.inspector.values_model._values, want)
    assert explorer.window.inspector.facts["offset"].text().startswith(f"{63 * g.row_bytes:,} B")
