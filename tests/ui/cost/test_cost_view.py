"""The Cost view on a standalone view: the cost card, famous models, why
vectors and the context-free lookup, each page working only while shown."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QApplication, QStyledItemDelegate

from explorer.core.cost.why import DEFAULT_WORDS
from explorer.core.sources import open_table, package_path
from explorer.ui.cost import CostView
from explorer.ui.style import blend, contrast_ratio, dark_palette
from tests.support.ui_helpers import standalone_view

RUN_TIMEOUT = 120_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, CostView)


@pytest.fixture(scope="module")
def minilm():
    if package_path("minilm") is None:
        pytest.skip("MiniLM is not installed")
    return open_table("minilm")


def _digits(text: str) -> int:
    return int("".join(ch for ch in text if ch.isdigit()))


def _first_layer_shown(qtbot, view, minilm):
    """MiniLM in the view, the context page shown and its first-layer run landed."""
    v, state, _ = view
    state.set_table(minilm)
    with qtbot.waitSignal(state.context.finished, timeout=RUN_TIMEOUT):
        v.show_page("context")
    return v, state, v.context_page


def _column(table, col: int) -> list[str]:
    return [table.item(r, col).text() for r in range(table.rowCount())]


def test_card_on_a_gpt2_shaped_table(view):
    v, state, _ = view
    state.set_table(open_table("random:50257x768"))
    t = v.card_page.tiles
    assert _digits(t["params"].value.text()) == 50_257 * 768 == 38_597_376
    assert t["float32"].value.text() == "154.39 MB"
    assert "147.24 MiB" in t["float32"].sub.text() and "154,389,504 bytes" in t["float32"].sub.text()
    assert "77,194,752 bytes" in t["float16"].sub.text() and "73.62 MiB" in t["float16"].sub.text()
    assert "77,194,752 bytes" in t["bfloat16"].sub.text()
    assert f"{50_257 * 768:,} bytes" in t["int8"].sub.text()
    assert _digits(t["row"].value.text()) == 768 * 4 == torch.empty(768).nbytes
    assert "i × 3,072" in t["row"].formula.text()
    adam = 4 * torch.empty(50_257, 768).nbytes
    assert t["adam"].value.text() == f"{adam / 1e6:,.2f} MB"
    assert t["share"].value.text() == "unknown"
    assert t["tying"].value.text() == "unknown"  # a random table has no output projection to tell
    assert t["scale"].value.text() == f"× {np.sqrt(768):.1f}"
    # FACTS: σ = 1/√768 = 0.0361, |cos| ≤ 0.108, 99.956 % of the volume in the outer 1 % shell
    assert t["random"].value.text() == "σ = 0.0361" and "0.108" in t["random"].sub.text()
    assert "99.96 %" in t["random"].formula.text()
    # the factorised alternative follows the slider; GPT-2's break-even is 756.4, so 756 still saves
    v.card_page.k_slider.setValue(64)
    assert _digits(t["factor"].value.text()) == 50_257 * 64 + 64 * 768
    assert "k ≤ 756" in t["factor"].formula.text()


@pytest.fixture
def narrow_view(qtbot):
    yield from standalone_view(qtbot, CostView, size=(560, 700))


def test_tiles_and_panels_reflow_in_a_narrow_window(narrow_view):
    v, state, _ = narrow_view
    state.set_table(open_table("random:50257x768"))
    card = v.card_page
    assert card.columns < 4 and card.minimumSizeHint().width() <= v.width()
    v.show_page("why")
    state.set_text("0 1 2")
    assert v.why_page.minimumSizeHint().width() <= v.width()
    cells = v.why_page.cos_table
    for c in range(cells.columnCount()):  # no value is elided
        text = cells.item(0, c).text()
        assert cells.fontMetrics().horizontalAdvance(text) <= cells.columnWidth(c), text


def test_famous_models_compared(view):
    v, state, _ = view
    state.set_table(open_table("random:50257x768"))
    page = v.compare_page
    assert page.table.rowCount() == 0  # hidden: nothing drawn yet
    v.show_page("compare")
    names = _column(page.table, 0)
    row = names.index("GPT-2 small")
    cells = [page.table.item(row, c).text() for c in range(page.table.columnCount())]
    assert cells[3] == "38,597,376" and cells[4] == "31.0 %"
    assert cells[5] == "154,389,504" and cells[6] == "154.39 MB" and cells[7] == "77,194,752"
    shares = dict(zip(names, _column(page.table, 4)))
    assert shares["Llama 3 8B"] == "6.5 %" and shares["Llama 3 70B"] == "1.5 %"


class _CountingDelegate(QStyledItemDelegate):
    """Qt's own delegate, counting how often a cell is asked for its size."""

    def __init__(self, parent):
        super().__init__(parent)
        self.asked = 0

    def sizeHint(self, option, index):
        self.asked += 1
        return super().sizeHint(option, index)


def test_comparison_written_again_asks_each_cell_its_size_once(view):
    """A model switch writes the comparison again: each cell is measured once, not once per
    cell written (Qt's ResizeToContents asked 4,608 times for 72 cells), and every value fits."""
    v, state, _ = view
    state.set_table(open_table("toy:robot"))
    v.show_page("compare")
    t = v.compare_page.table
    counting = _CountingDelegate(t)
    t.setItemDelegate(counting)
    state.set_table(open_table("default"))
    QApplication.processEvents()
    cells = t.rowCount() * t.columnCount()
    assert cells == 72 and counting.asked <= 2 * cells, counting.asked
    assert any("(loaded)" in t.item(r, 0).text() for r in range(t.rowCount()))
    for r in range(t.rowCount()):
        for c in range(t.columnCount() - 1):  # the last column stretches
            item = t.item(r, c)
            assert QFontMetrics(item.font()).horizontalAdvance(item.text()) <= t.columnWidth(c), item.text()


def test_comparison_chart_has_the_loaded_model(view):
    v, state, _ = view
    state.set_table(open_table("toy:robot"))
    v.show_page("compare")
    rows = v.compare_page.rows
    assert sum(r.loaded for r in rows) == 1 and len(rows) == 8
    bars = v.compare_page.param_bars.opts
    ends = np.asarray(bars["x0"]) + np.asarray(bars["width"])
    assert np.allclose(ends, np.log10([r.cost.params for r in rows]))
    assert v.card_page.tiles["params"].value.text() == "12"  # FACTS: toy C has 12 parameters
    assert v.card_page.k_slider.maximum() == 3
    csv = v.comparison_csv().splitlines()
    assert csv[0].startswith("model,V,d") and len(csv) == 9
    assert any(line.startswith('"GPT-2 small",50257,768,38597376,') for line in csv)


def test_small_sizes_keep_their_ratio(view):
    """float16 and int8 of a tiny table must not both read "0.01 MB"."""
    v, state, _ = view
    state.set_table(open_table("default"))
    t = v.card_page.tiles
    sizes = {dt: t[dt].value.text() for dt in ("float32", "float16", "int8")}
    assert len(set(sizes.values())) == 3, sizes
    table = state.table
    assert sizes["int8"] == f"{table.params / 1000:,.2f} kB" if table.params >= 1000 else f"{table.params} bytes"


def test_break_even_rank_on_minilm(view, minilm):
    """Issue 12, item 5: V·d/(V+d) = 379.2 for MiniLM, so k = 379 still saves."""
    v, state, _ = view
    state.set_table(minilm)
    assert v.card_page.tiles["tying"].value.text() == "no output layer"  # an encoder: nothing to tie
    page, tile = v.card_page, v.card_page.tiles["factor"]
    assert "k ≤ 379" in tile.formula.text() and "379.2" in tile.formula.text()
    page.k_slider.setValue(379)
    assert _digits(tile.value.text()) == 30_522 * 379 + 379 * 384 < 30_522 * 384
    assert "% of V·d" in tile.sub.text()
    page.k_slider.setValue(380)
    assert _digits(tile.value.text()) == 30_522 * 380 + 380 * 384 >= 30_522 * 384
    assert "no saving" in tile.sub.text()


def test_one_row_of_a_quantised_table_leads_with_the_stored_layout(view):
    """Issue 12, item 6: SmolLM2's rows are stored Q8_0, 612 bytes = 18 blocks of 34 bytes."""
    if package_path("smollm2") is None:
        pytest.skip("SmolLM2 is not installed")
    v, state, _ = view
    table = open_table("smollm2")
    state.set_table(table)
    row = v.card_page.tiles["row"]
    assert row.value.text() == "612 bytes" == f"{table.row_bytes} bytes"
    assert row.sub.text() == "18 Q8_0 blocks of 32 values, 34 bytes each"
    assert 18 * 34 == 612 and 18 * 32 == table.dim
    assert "i × 612" in row.formula.text() and "2,304" in row.formula.text()
    assert row.formula.text().index("612") < row.formula.text().index("2,304")
    assert v.card_page.tiles["tying"].value.text() == "tied"
    assert "k ≤ 569" in v.card_page.tiles["factor"].formula.text()


def test_hidden_pages_compute_nothing(qtbot, view, minilm):
    v, state, _ = view
    state.set_table(minilm)
    state.set_text("the cat sat")
    assert v.why_page.why is None and v.context_page.same is None
    assert v.compare_page.rows == []
    assert state.context.value is None and not state.context.running
    v.show_page("why")
    assert v.why_page.why is not None and v.context_page.same is None
    assert state.context.value is None and not state.context.running


def test_why_vectors_on_minilm(view, minilm):
    v, state, _ = view
    state.set_table(minilm)
    state.set_text("the cat sat")
    v.show_page("why")
    page = v.why_page
    why = page.why
    assert why.labels == DEFAULT_WORDS
    ids = [minilm.tokenizer.id_of(w) for w in why.labels]
    assert page.id_table.item(0, 1).data(Qt.UserRole) == abs(ids[0] - ids[1])
    assert page.onehot_table.item(0, 2).data(Qt.UserRole) == pytest.approx(np.sqrt(2))
    assert page.onehot_table.item(0, 2).data(Qt.UserRole + 1) == 0
    rows = minilm.rows(ids).astype(np.float64)
    cos01 = rows[0] @ rows[1] / np.linalg.norm(rows[0]) / np.linalg.norm(rows[1])
    assert page.cos_table.item(0, 1).data(Qt.UserRole) == pytest.approx(cos01)
    # editing the words re-computes the panels
    page.words_edit.setText("dog, cat")
    page.words_edit.editingFinished.emit()
    assert page.why.labels == ("dog", "cat")


def test_bank_after_the_first_layer_on_minilm(qtbot, view, minilm):
    v, state, page = _first_layer_shown(qtbot, view, minilm)
    bank = minilm.tokenizer.id_of("bank")
    same = page.same
    assert same.same_id and same.rows_equal
    assert _column(page.occ_table, 3) == [f"{bank:,}"] * 2
    assert "identical" in page.verdict.text()
    ctx = page.context
    assert ctx is not None
    # the first stage is the table row itself, read by the lookup
    np.testing.assert_allclose(ctx.vectors["table row"], minilm.rows([bank, bank]), atol=1e-6)
    assert page.ctx_table.item(0, 1).data(Qt.UserRole) == pytest.approx(1.0)
    c = page.ctx_table.item(2, 1).data(Qt.UserRole)
    after = ctx.vectors["after transformer layer 1"].astype(np.float64)
    cos = after[0] @ after[1] / np.linalg.norm(after[0]) / np.linalg.norm(after[1])
    assert c == pytest.approx(cos) and c < 0.999
    assert "differ" in page.context_message
    assert "√384 = 19.6" in page.scale_note.text() and "22.6" in page.scale_note.text()


def test_typing_runs_the_first_layer_once_typing_pauses(qtbot, view, minilm):
    v, state, page = _first_layer_shown(qtbot, view, minilm)
    first = state.context.key
    requests = []
    state.context.reset.connect(lambda: requests.append(state.context.key))
    edit = page.sentence_edits[1]
    edit.setFocus()
    edit.end(False)
    qtbot.keyClicks(edit, " today")
    assert requests == [] and state.context.key == first  # nothing per keystroke
    assert page.same.ok  # the rows follow at once
    with qtbot.waitSignal(state.context.finished, timeout=RUN_TIMEOUT):
        pass
    assert len(requests) == 1 and state.context.key != first
    assert page.context is state.context.value
    assert page.same.sequences[1] == state.context.key[1][1]


def test_model_switch_clears_everything(qtbot, view, minilm):
    v, state, page = _first_layer_shown(qtbot, view, minilm)
    assert page.ctx_table.rowCount() == 3
    state.set_table(open_table("toy:robot"))
    assert page.ctx_table.rowCount() == 0 and page.context is None
    assert state.context.value is None and not state.context.running
    assert "not available" in page.context_message
    v.show_page("card")
    assert v.card_page.tiles["params"].value.text() == "12"


def test_a_first_layer_run_never_lands_after_a_switch_or_a_cancel(qtbot, view, minilm):
    from explorer.workers import await_all_workers

    v, state, _ = view
    page = v.context_page
    state.set_table(minilm)
    v.show_page("context")
    assert state.context.running  # the run started when the page was shown
    state.set_table(open_table("toy:robot"))  # mid-run
    assert not state.context.running and state.context.value is None
    await_all_workers()
    QApplication.processEvents()  # deliver anything the old worker emitted
    assert state.context.value is None and page.ctx_table.rowCount() == 0
    assert "not available" in page.context_message
    # back on MiniLM, the user cancels the run
    state.set_table(minilm)
    assert state.context.running and page.ctx_cancel.isVisibleTo(page)
    page.ctx_cancel.click()
    assert not state.context.running and not page.ctx_cancel.isVisibleTo(page)
    await_all_workers()
    QApplication.processEvents()
    assert state.context.value is None and page.ctx_table.rowCount() == 0
    assert "Cancelled" in page.context_message


def test_words_given_to_a_hidden_why_page_are_compared_when_it_is_shown(view):
    """The tour's Close gives the Why page its words back while another page is on screen:
    they wait for the page to be shown instead of drawing three panels nobody sees."""
    v, state, _ = view
    state.set_table(open_table("default"))
    v.show_page("why")
    first = v.why_page.why.labels
    v.show_page("card")
    v.why_page.set_words(["fox", "sleepy"])
    assert v.why_page.words() == ["fox", "sleepy"] and v.why_page.why.labels == first
    v.show_page("why")
    assert v.why_page.why.labels[:2] == ("fox", "sleepy")


def test_the_bundled_model_shows_its_own_first_layer(qtbot, view):
    """One word in two sentences: one row from the table, two different outputs
    of the bundled model's layer, as torch computes them from its weights."""
    from safetensors.torch import load_file

    v, state, _ = view
    table = open_table("default")
    state.set_table(table)
    state.set_text("the quick fox chases the sleepy cat")
    v.show_page("why")
    assert v.why_page.why.labels[:2] == ("cat", "dog")
    with qtbot.waitSignal(state.context.finished, timeout=RUN_TIMEOUT):
        v.show_page("context")
    page = v.context_page
    same = page.same
    assert same.ok and same.same_id and same.rows_equal
    assert len(set(_column(page.occ_table, 3))) == 1 and "identical" in page.verdict.text()
    ctx = page.context
    assert ctx is not None and page.ctx_table.rowCount() == len(ctx.stages) == 2
    assert page.ctx_table.isVisibleTo(page) and page.ctx_table.item(0, 1).data(Qt.UserRole) == pytest.approx(1.0)
    assert page.ctx_table.item(0, 2).data(Qt.UserRole) == 0.0  # the same row, to the bit
    weights = load_file(str(table.path / "model.safetensors"))
    emb, w, b = weights["model.embed_tokens.weight"], weights["mixer.weight"], weights["mixer.bias"]
    outs = torch.stack([torch.tanh(w @ emb[list(win)].reshape(-1) + b) for win in ctx.windows]).double()
    assert [win[-1] for win in ctx.windows] == [o.id for o in same.occurrences]
    cos = torch.nn.functional.cosine_similarity(outs[0], outs[1], dim=0).item()
    assert page.ctx_table.item(1, 1).data(Qt.UserRole) == pytest.approx(cos, abs=1e-5) and cos < 0.99
    assert page.ctx_table.item(1, 2).data(Qt.UserRole) == pytest.approx((outs[0] - outs[1]).abs().max().item(),
                                                                         abs=1e-5)
    assert "differ" in page.context_message and "not available" not in page.context_message
    # the words each occurrence's layer read are named
    assert all(table.shown_piece(i).text in page.context_message for i in ctx.windows[0])


def test_tables_without_a_model_say_so(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("random:4x3"))
    state.set_text("0 1 2 1")
    v.show_page("why")
    assert v.why_page.why.from_text and v.why_page.why.n == 3
    v.show_page("context")
    page = v.context_page
    assert page.same.ok and page.same.rows_equal  # a repeated word of the text
    assert "not available" in page.context_message and not state.context.running
    assert not page.ctx_table.isVisibleTo(page)  # no empty first-layer table
    state.set_text("")
    v.show_page("card")
    assert v.card_page.tiles["params"].value.text() == "12"


def test_cosine_cells_are_readable_in_both_palettes(view):
    v, state, _ = view
    app = QApplication.instance()
    light = app.palette()
    try:
        for palette in (light, dark_palette()):
            app.setPalette(palette)
            state.set_table(open_table("toy:robot"))
            state.set_text("robot arm box tool")
            v.show_page("why")
            cells = v.why_page.cos_table
            base = palette.color(palette.ColorRole.Base)
            assert cells.rowCount() == 4
            for r in range(4):
                for c in range(4):
                    item = cells.item(r, c)
                    cell = item.background().color()
                    bg = blend(QColor(cell.red(), cell.green(), cell.blue()), base, cell.alphaF())
                    fg = item.foreground().color()
                    # the better of dark and light text on any cell reaches at least 4.1:1
                    assert contrast_ratio(bg, fg) >= 4.0, (r, c, bg.name(), fg.name())
            v.show_page("card")
    finally:
        app.setPalette(light)


def test_text_color_on_picks_the_readable_one():
    import pyqtgraph as pg

    from explorer.ui.style import DARK_TEXT, DIVERGING, LIGHT_TEXT, SEQUENTIAL, text_color_on, text_colors_on

    assert text_color_on(QColor("#ffffff")).name() == QColor(DARK_TEXT).name()
    assert text_color_on(QColor("#000000")).name() == QColor(LIGHT_TEXT).name()
    # a faint tint reads like what is under it
    faint = QColor(255, 0, 0, 20)
    assert text_color_on(faint, QColor("#1e1f22")).name() == QColor(LIGHT_TEXT).name()
    assert text_color_on(faint, QColor("#ffffff")).name() == QColor(DARK_TEXT).name()
    # the vectorised form agrees with the single one on both colour maps
    for name in (DIVERGING, SEQUENTIAL):
        cmap = pg.colormap.get(name)
        x = np.linspace(0, 1, 101)
        many = text_colors_on(cmap.map(x, mode="float"))
        one = [text_color_on(cmap.map(v, mode="qcolor")) for v in x]
        assert [c.name() for c in many] == [c.name() for c in one]
        assert {c.name() for c in many} == {QColor(DARK_TEXT).name(), QColor(LIGHT_TEXT).name()}


def test_the_context_page_shows_each_models_own_demonstration_and_keeps_the_users(qtbot, view, minilm):
    """The page's own sentences follow the model (the bundled model's "bank"
    sentences in its language, with no <unk>); sentences the user typed stay."""
    from explorer.core.cost.context import choose_demonstration

    v, state, _ = view
    page = v.context_page
    state.set_table(minilm)
    v.show_page("context")
    shown = lambda: (page.word_edit.text(), *(e.text() for e in page.sentence_edits))  # noqa: E731
    assert shown() == (choose_demonstration(minilm)[0], *choose_demonstration(minilm)[1])
    default = open_table("default")
    state.set_table(default)
    word, sentences = choose_demonstration(default)
    assert shown() == (word, *sentences) and word == "bank"
    assert all(t.ok and not t.special for s in sentences for t in default.tokenizer.encode(s))
    assert "<unk>" not in page.occ_table.item(0, 2).text()
    # the user's own sentences survive a switch when the new model reads the word in both
    page.sentence_edits[0].setText("the bank by the river")
    page.sentence_edits[1].setText("coins in the bank")
    state.set_table(minilm)
    assert shown()[1:] == ("the bank by the river", "coins in the bank")


def test_names_of_neighbouring_ids_do_not_cover_each_other(qtbot, view):
    """Issue 25, item 16: "cat" (49) and "dog" (50) were written on top of each other."""
    v, state, _ = view
    state.set_table(open_table("default"))
    v.show_page("why")
    page = v.why_page
    qtbot.waitUntil(lambda: page.why is not None)
    ids = list(page.why.ids)
    assert abs(ids[0] - ids[1]) == 1  # cat and dog are neighbours in the bundled vocabulary
    labels = [t for t in page._numberline_labels if t.isVisible()]
    assert [t.toPlainText() for t in labels] == list(DEFAULT_WORDS)
    for t in labels:
        t.updateTransform(force=True)  # what painting them does first
    cat, dog, plane = labels
    # one above its point, the other below: their rows of text do not meet
    assert cat.anchor.y() > 1 and dog.anchor.y() < 0 and plane.anchor.y() > 1
    a, b = cat.sceneBoundingRect(), dog.sceneBoundingRect()
    assert a.bottom() <= b.top() + 1
    points = page.numberline_points.data
    assert all(-0.6 < y < 1.0 for y in points["y"])


def test_the_view_made_in_steps_is_held_from_its_first_step_and_gets_one_page_a_step(qtbot):
    """The Cost tab's first show makes the view over turns (LazyPage): the view first, yielded
    so that the page holds it, then one page a step, each in the view as soon as it is made."""
    from explorer.state.app_state import AppState
    from explorer.ui.cost.view import PAGES

    state = AppState()
    steps, counts = CostView.built_in_steps(state), []
    while True:
        try:
            held = next(steps)
        except StopIteration as done:
            v = done.value
            break
        assert isinstance(held, CostView)  # the same view every step, for the page to hold
        counts.append(held.pages.count())
        assert all(held.pages.widget(k).parentWidget() is not None for k in range(held.pages.count()))
    qtbot.addWidget(v)
    assert v is held and counts == list(range(len(PAGES)))  # one page more at each step
    assert [v.pages.tabText(k) for k in range(v.pages.count())] == [title for _, title, _ in PAGES]
    assert all(v.pages.widget(k) is getattr(v, key) for k, (key, _, _) in enumerate(PAGES))
    assert v.token_selected == v.why_page.token_selected
    state.set_table(open_table("random:500x8"))  # the pages follow the state as when made at once
    v.resize(1000, 700)
    v.show()
    assert v.current_page() == "card"
    qtbot.waitUntil(lambda: v.card_page.tiles["params"].value.text() == "4,000", timeout=5000)  # 500 x 8
    state.deleteLater()
