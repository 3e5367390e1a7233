"""explorer.show: real tensors, arrays, nn.Embedding and tiny transformers
models opened in the real window (offscreen), its rows checked against the
objects; one window updated by a second call; blocking until the window
closes from a script, returning at once inside a running event loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

import explorer
from explorer import viewer
from explorer.core.sources import SourceError
from tests.support import model_factory as mf
from tests.support.ui_helpers import LOAD_TIMEOUT

# a bare tensor without a tokenizer is told to type ids: expected here, checked once below
pytestmark = pytest.mark.filterwarnings("ignore:No tokenizer was given:explorer.viewer.ShowNote")


@pytest.fixture
def show(qtbot):
    """``viewer.show`` without blocking; waits for the load and registers the window."""
    opened = []

    def _show(obj, **kwargs):
        ex = viewer.show(obj, block=False, **kwargs)
        if not any(e is ex for e in opened):
            qtbot.addWidget(ex.window)
            opened.append(ex)
        qtbot.waitUntil(lambda: not ex.loading, timeout=LOAD_TIMEOUT)
        assert ex.last_error == ""
        return ex

    yield _show
    for ex in opened:
        ex.shutdown()


def _check_rows(qtbot, ex, reference: torch.Tensor, token: int) -> None:
    """The window's table is the object's rows; selecting a token shows its row."""
    want = reference.detach().float().numpy()
    table = ex.state.table
    assert (table.vocab_size, table.dim) == want.shape
    np.testing.assert_array_equal(table.matrix(), want)
    ex.state.set_selected_token(token)
    insp = ex.window.inspector
    qtbot.waitUntil(lambda: len(insp.values_model._values) == want.shape[1])
    np.testing.assert_array_equal(insp.values_model._values, want[token])
    assert ex.window.matrix_view.highlighted_row() == token
    assert insp.facts["offset"].text().startswith(f"{token * table.row_bytes:,} B")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_a_tensor_of_each_dtype_opens_in_the_window(qtbot, show, dtype):
    t = torch.randn(300, 24, generator=torch.Generator().manual_seed(0)).to(dtype)
    with pytest.warns(viewer.ShowNote, match="No tokenizer was given"):
        ex = show(t)
    name = f"tensor 300×24 {str(dtype).removeprefix('torch.')}"
    assert ex.state.table.name == name and name in ex.window.windowTitle()
    _check_rows(qtbot, ex, t, 42)
    if dtype == torch.float32:  # shown in place: the window reads the tensor's own memory
        assert np.shares_memory(ex.state.table.matrix(), t.numpy())
    assert ex.state.table.torch_table().data_ptr() == t.data_ptr()
    assert [tok.id for tok in ex.state.tokens] == [42, 7, 42]  # a table of ids gets ids to start with


def test_a_numpy_array_and_an_nn_embedding(qtbot, show):
    a = np.random.default_rng(1).standard_normal((120, 16)).astype(np.float32)
    ex = show(a, text="5 6 5")
    assert np.shares_memory(ex.state.table.matrix(), a)
    _check_rows(qtbot, ex, torch.from_numpy(a), 5)
    assert [tok.id for tok in ex.state.tokens] == [5, 6, 5]
    emb = torch.nn.Embedding(64, 8)
    ex2 = show(emb, text="3")
    assert ex2 is ex  # the same window, now showing the embedding
    _check_rows(qtbot, ex, emb.weight, 3)
    assert "tying unknown" in ex.window.status_model.text()


@pytest.mark.parametrize("tied", [True, False])
def test_a_transformers_model_with_its_tokenizer(qtbot, show, tied):
    from transformers import PreTrainedTokenizerFast

    tok = mf.train_bpe()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    model = mf.tiny_model("gpt2", tok.get_vocab_size(), tied=tied, seed=2)
    ex = show(model, tokenizer=fast, text=mf.SAMPLE_TEXT)
    table = ex.state.table
    assert table.name == "GPT2LMHeadModel"
    assert [t.id for t in ex.state.tokens] == tok.encode(mf.SAMPLE_TEXT).ids
    _check_rows(qtbot, ex, model.get_input_embeddings().weight, ex.state.tokens[2].id)
    status = ex.window.status_model.text()
    assert ("not tied" in status) != tied and ("tied" in status)
    if not tied:  # the matrix view's W_out is the model's lm_head
        assert ex.window.show_view("matrix:w_out")
        np.testing.assert_array_equal(table.output_table().matrix(), model.lm_head.weight.detach().numpy())


def test_a_spec_string_and_the_settings_kept_for_the_next_session(qtbot, show):
    ex = show("toy:robot")
    assert ex.state.table.spec == "toy:robot"
    t = torch.randn(40, 4)
    show(t)
    held = ex.state.table
    ex.save_settings()
    # a tensor of this process cannot be opened by the next one: the last spec stays
    assert ex.settings.value("model") == "toy:robot"
    # its spec opens it again here (the guided tour gives back the user's model this way)
    with qtbot.waitSignal(ex.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        ex.open_spec(held.spec)
    assert blocker.args == [True] and ex.state.table is held


def test_a_tokenizer_bigger_than_the_table_shows_what_it_can(qtbot, show):
    tok = mf.train_bpe()
    v = tok.get_vocab_size()
    rows = v - 30
    ids = tok.encode(mf.SAMPLE_TEXT).ids
    past = [i for i in range(rows, v) if i not in ids][:1]
    text = mf.SAMPLE_TEXT + " " + tok.id_to_token(past[0]) if past else mf.SAMPLE_TEXT
    with pytest.warns(viewer.ShowNote, match=f"knows {v:,} ids but the table has only {rows:,} rows"):
        ex = show(torch.randn(rows, 8), tokenizer=tok, text=text)
    flagged = [t for t in ex.state.tokens if t.id >= rows]
    assert flagged and all(t.problem is not None for t in flagged)
    assert all(t.problem is None for t in ex.state.tokens if 0 <= t.id < rows)
    assert "ids past the table are flagged" in ex.window.statusBar().currentMessage()


def test_a_tensor_with_nan_opens_with_its_note(qtbot, show):
    t = torch.randn(50, 6)
    t[7, 2] = float("nan")
    with pytest.warns(viewer.ShowNote, match="1 value is NaN or infinite, in row 7: it has no neighbours"):
        ex = show(t)
    ex.state.set_selected_token(7)
    insp = ex.window.inspector
    qtbot.waitUntil(lambda: len(insp.values_model._values) == 6)
    assert np.isnan(insp.values_model._values[2])
    assert "NaN or infinite" in ex.window.statusBar().currentMessage()


def test_what_cannot_be_shown_raises_before_any_window(qtbot):
    before = viewer.current()
    with pytest.raises(SourceError, match="1-D"):
        viewer.show(torch.zeros(10), block=False)
    with pytest.raises(SourceError, match="unknown model spec"):
        viewer.show("not a model at all", block=False)
    assert viewer.current() is before


def test_from_a_script_show_runs_the_window_until_it_is_closed(qtbot):
    t = torch.randn(80, 12)
    seen = {}

    def close_once_loaded():
        ex = viewer.current()
        if ex is None or ex.loading or ex.state.table is None:
            QTimer.singleShot(20, close_once_loaded)
            return
        seen["rows"] = ex.state.table.matrix().copy()
        ex.window.close()

    QTimer.singleShot(0, close_once_loaded)
    ex = explorer.show(t)  # no event loop runs here: show runs one until the window closes
    qtbot.addWidget(ex.window)
    assert ex.closed and viewer.current() is None
    np.testing.assert_array_equal(seen["rows"], t.numpy())


def test_inside_a_running_event_loop_show_returns_at_once(qtbot):
    t = torch.randn(30, 4)
    got = []
    loop = QEventLoop()

    def call_show():
        got.append(explorer.show(t))  # block=None: a running loop (as IPython's %gui qt) means no blocking
        loop.quit()

    QTimer.singleShot(0, call_show)
    QTimer.singleShot(30_000, loop.quit)  # never hang the suite if show did block
    loop.exec()
    assert got, "show did not return while the event loop ran"
    ex = got[0]
    qtbot.addWidget(ex.window)
    assert not ex.closed and ex.window.isVisible()
    qtbot.waitUntil(lambda: not ex.loading and ex.state.table is not None, timeout=LOAD_TIMEOUT)
    np.testing.assert_array_equal(ex.state.table.matrix(), t.numpy())
    # here, outside any loop and without IPython, show would block
    assert not viewer.qt_events_running(QApplication.instance())
