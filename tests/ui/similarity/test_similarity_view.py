"""The Similarity view on a standalone view (pytest-qt, offscreen): matrices
against numpy and FACTS.md, clicks, the random-vector check only while its
page is shown, model switches, export and contrast in both palettes."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
import torch
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QFontMetrics, QFontMetricsF
from PySide6.QtWidgets import QApplication
from safetensors.torch import save_file

from explorer.core.sources import open_table, package_path
from explorer.ui.similarity import SimilarityView
from explorer.ui.style import contrast_ratio, dark_palette
from tests.support.ui_helpers import SceneClick, standalone_view

CHECK_TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, SimilarityView)


def _robot(state):
    t = open_table("toy:robot")
    state.set_table(t)
    state.set_text("robot arm box tool")
    return t, [t.tokenizer.id_of(w) for w in ("robot", "arm", "box", "tool")]


def test_empty_state(view):
    v, state, _ = view
    page = v.regimes_page
    assert "Open a model" in page.empty.text()
    state.set_table(open_table("toy:robot"))
    assert "Type some text" in page.empty.text() and page.matrices is None


def test_robot_values_from_facts(view):
    v, state, _ = view
    page = v.regimes_page
    t, (robot, arm, box, tool) = _robot(state)
    m = page.matrices
    assert m.ids == (robot, arm, box, tool)
    # FACTS.md: cos(robot, arm) = 0.995, cos(robot, box) = 0, cos(robot, tool) = -0.316
    assert page.value_text(robot, arm) == "+0.995"
    assert float(page.value_text(robot, box)) == 0.0
    assert page.value_text(robot, tool) == "-0.316"
    texts = page.main.cell_texts()
    assert len(texts) == 16 and "+0.995" in texts and "-0.316" in texts
    x = t.rows(list(m.ids)).astype(np.float64)
    n = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(m.learned, x @ x.T / np.outer(n, n), atol=1e-12)
    # dot products: 1.7, 0, -0.5, every cell at the same precision
    page.set_metric("dot")
    np.testing.assert_allclose(page.matrices.learned, x @ x.T, atol=1e-12)
    assert float(page.value_text(robot, arm)) == 1.7 and float(page.value_text(robot, tool)) == -0.5
    assert len({len(s.split(".")[1]) for s in page.main.cell_texts()}) == 1
    page.set_metric("euclidean")
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    np.testing.assert_allclose(page.matrices.learned, d, atol=1e-9)
    assert not page.matrices.signed and page.main.colorbar.levels() == pytest.approx((0, d.max()))


def test_three_regimes_side_by_side(view):
    if package_path("minilm") is None:
        pytest.skip("MiniLM is not installed")
    v, state, _ = view
    state.set_table(open_table("minilm"))
    state.set_text("cat dog airplane")
    m = v.regimes_page.matrices
    assert m.n == 3  # [CLS] and [SEP] are left out
    a = np.array(m.ids, dtype=np.float64)
    np.testing.assert_array_equal(m.id_distance, np.abs(a[:, None] - a[None]))
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(m.one_hot[off], math.sqrt(2))
    np.testing.assert_array_equal(np.diag(m.one_hot), 0)
    assert m.learned[0, 1] > m.learned[0, 2]  # cat is closer to dog than to airplane
    # big id distances are written short enough for the small cells
    texts = v.regimes_page.ids_map.cell_texts()
    assert len(texts) == 9 and all(len(s) <= 5 for s in texts), texts
    # every map has its colour bar
    assert all(h.colorbar is not None and h.colorbar.isVisible() for h in v.regimes_page.maps)


def test_click_a_cell_selects_the_pair(qtbot, view):
    v, state, _ = view
    page = v.regimes_page
    _robot(state)
    vb = page.main.plot.getViewBox()
    with qtbot.waitSignal(v.pair_selected) as pair, qtbot.waitSignal(v.token_selected) as sel:
        page._on_scene_clicked(SceneClick(vb.mapViewToScene(QPointF(3.5, 2.5))))  # row 2 = box, column 3 = tool
    assert pair.args == [2, 3] and sel.args == [2]
    assert state.selected_id == 2
    assert page.main.cell_rect.isVisible()
    assert "box" in page.info.text() and "tool" in page.info.text()
    # the selected token's row and column are outlined in all three maps
    assert all(m.row_rect.isVisible() for m in page.maps)


def test_pieces_with_angle_brackets_are_shown_as_text(view):
    v, state, _ = view
    page = v.regimes_page
    t = open_table("toy:cat-sat")  # has a <pad> row
    state.set_table(t)
    pad = t.tokenizer.id_of("<pad>")
    state.set_text("cat sat")
    state.add_extra_token(pad)
    m = page.matrices
    page.select_cell(m.index(pad), 0)
    assert "&lt;pad&gt;" in page.info.text()  # written as text, not swallowed as a tag


def test_model_switch_clears_the_hover_text(view):
    v, state, _ = view
    page = v.regimes_page
    _robot(state)
    vb = page.main.plot.getViewBox()
    page._on_scene_mouse_moved(vb.mapViewToScene(QPointF(1.5, 0.5)))
    assert "robot" in page.info.text() and "arm" in page.glw.toolTip()
    state.set_table(open_table("toy:five-rows"))
    assert "robot" not in page.info.text() and page.glw.toolTip() == ""
    assert page.matrices is None or all("robot" not in lab for lab in page.matrices.labels)


def _chips(bar) -> list[str]:
    return [c.text() for c in bar.chips if c.isVisibleTo(bar)]


def test_added_tokens_are_listed_under_one_rule(qtbot, view):
    """Search, Find and neighbour clicks add a token, visibly; a selection alone
    (a matrix row) does not, but Add offers it; × and Clear take tokens out."""
    v, state, _ = view
    page = v.regimes_page
    bar = page.added
    t = open_table("default")
    state.set_table(t)
    state.set_text("the cat")
    the, cat, dog, fox, park = (t.tokenizer.id_of(w) for w in ("the", "cat", "dog", "fox", "park"))
    # nothing added yet: the rule is on screen
    assert bar.rule.isVisibleTo(bar) and "does not" in bar.rule.text() and "Find" in bar.rule.text()
    assert "only selects" in bar.caption.toolTip() and _chips(bar) == []
    assert not bar.add_button.isVisibleTo(bar) and not bar.clear_button.isVisibleTo(bar)  # nothing to act on
    # a search adds: a chip, the matrix, the count
    page.search.setText("dog")
    page.search.returnPressed.emit()
    assert _chips(bar) == ["dog ×"]
    assert "a selection alone does not" in bar.rule.text()  # the rule stays beside them
    assert page.matrices.ids == (the, cat, dog) and page.count_label.text() == "3 tokens (1 added)"
    # a neighbour clicked in the inspector (the app adds it, then selects it) shows the same way
    state.add_extra_token(fox)
    state.set_selected_token(fox)
    assert _chips(bar) == ["fox ×", "dog ×"] and page.matrices.ids[-1] == fox  # the newest first
    assert not bar.add_button.isEnabled()  # the selection is compared already
    # a matrix row selects without adding; Add offers it
    state.set_selected_token(park)
    assert park not in state.extra_ids and park not in page.matrices.ids
    assert bar.add_button.isVisibleTo(bar) and bar.add_button.isEnabled() and bar.add_button.text() == "Add “park”"
    qtbot.mouseClick(bar.add_button, Qt.LeftButton)
    assert state.extra_ids == [dog, fox, park] and page.matrices.ids == (the, cat, dog, fox, park)
    assert not bar.add_button.isEnabled() and page.main.row_rect.isVisible()  # now outlined in the matrix
    # × takes one out of the matrix and of the state
    chip = next(c for c in bar.chips if c.text() == "dog ×")
    qtbot.mouseClick(chip, Qt.LeftButton)
    assert state.extra_ids == [fox, park] and page.matrices.ids == (the, cat, fox, park)
    assert _chips(bar) == ["park ×", "fox ×"]
    # many: the newest as buttons, the older ones in a menu that removes them too
    for i in range(40, 48):
        state.add_extra_token(i)
    assert len(_chips(bar)) == 6 and bar.more_button.isVisibleTo(bar) and bar.more_button.text() == "+4 more"
    bar.more_button.menu().aboutToShow.emit()  # as opening the menu does
    oldest = bar.more_button.menu().actions()[-1]
    assert "fox" in oldest.text()
    oldest.trigger()
    assert fox not in state.extra_ids and fox not in page.matrices.ids
    # a narrow page keeps the line: fewer buttons, the rest in the menu
    v.resize(560, 700)
    qtbot.waitUntil(lambda: len(_chips(bar)) < 6)
    assert bar.sizeHint().width() <= page.width() or bar.minimumSizeHint().width() <= page.width()
    assert bar.more_button.text() == f"+{len(state.extra_ids) - len(_chips(bar))} more"
    # Clear: back to the text's tokens and the rule
    qtbot.mouseClick(bar.clear_button, Qt.LeftButton)
    assert state.extra_ids == [] and page.matrices.ids == (the, cat)
    assert _chips(bar) == [] and "none yet" in bar.rule.text() and page.count_label.text() == "2 tokens"


def test_added_tokens_cap(view):
    v, state, _ = view
    page = v.regimes_page
    state.set_table(open_table("default"))
    state.set_text("the cat")
    for i in range(3, 193):
        state.add_extra_token(i)
    m = page.matrices
    assert m.n <= 200 and m.learned.shape == (m.n, m.n)
    assert page.main.cell_texts() == []  # too many cells to write values in
    state.set_table(open_table("toy:robot"))  # a new model starts with nothing added
    assert _chips(page.added) == [] and "none yet" in page.added.rule.text()


@pytest.fixture(params=[(1800, 1000), (1000, 700), (560, 700)])
def sized_view(qtbot, request):
    yield from standalone_view(qtbot, SimilarityView, size=request.param)


def _assert_apart(rects, along: bool, gap: float):
    """Label boxes in axis order: none overlaps the next, ``gap`` pixels apart at least."""
    for (a, ta), (b, tb) in zip(rects, rects[1:]):
        assert not a.intersects(b), (ta, tb, a, b)
        apart = b.left() - a.right() if along else b.top() - a.bottom()
        assert apart >= gap - 0.01, (ta, tb, apart)


def test_labels_and_values_never_run_into_each_other(qtbot, sized_view):
    from explorer.ui.similarity.token_axis import GAP_ALONG, GAP_STACKED

    v, state, _ = sized_view
    page = v.regimes_page
    state.set_table(open_table("default"))
    # the "chasessleepy": long pieces side by side
    state.set_text("the quick fox chases the sleepy cat while the young dog bought twenty apples")
    qtbot.waitUntil(lambda: page.main.bottom_axis.label_rects() != [])
    QApplication.processEvents()
    n = page.matrices.n
    assert n >= 10
    for h in page.maps:
        for axis, along in ((h.left_axis, False), (h.bottom_axis, True)):
            rects = axis.label_rects()
            if h is not page.main and along:
                assert rects == []  # the small maps share the main map's columns
                continue
            assert rects, (h, along)
            _assert_apart(rects, along, GAP_ALONG if along else GAP_STACKED)
            bounds = axis.boundingRect()
            for r, text in rects:  # nothing is cut off by the axis' edges
                assert bounds.contains(r), (text, r, bounds)
            if axis.plan.step == 1:
                assert len(rects) == n
        # values are written only in a font that fits the cell, never over a neighbour
        if h.cell_texts_shown:
            px_w, px_h = h.layer.cell_px()
            font = h.layer.font()
            font.setPointSize(h.cell_point_size)
            fm = QFontMetricsF(font)
            for text in h.cell_texts()[: n * n]:
                assert fm.horizontalAdvance(text) + 4 <= px_w and fm.height() <= px_h
    main = page.main.bottom_axis
    if v.width() >= 1000:
        # wide enough for one line per column: every column labelled, long pieces in full (across or upwards)
        assert main.plan.step == 1 and "chases" in main.labels and "sleepy" in main.labels
    else:
        assert main.plan.step > 1 or any(lab.endswith("…") for lab in main.labels) or main.plan.rotated


def test_values_too_big_for_their_cells_are_hidden_and_read_in_the_tooltip(qtbot, view):
    if package_path("minilm") is None:
        pytest.skip("MiniLM is not installed")
    v, state, _ = view
    page = v.regimes_page
    table = open_table("minilm")
    state.set_table(table)
    # ids far apart: |i - j| runs into the tens of thousands (the "11,52713,586")
    state.set_text("the zoo quantum ##ness")
    m = page.matrices
    assert m.id_distance.max() > 10_000
    texts = page.ids_map.cell_texts()
    assert all(len(t) <= 5 for t in texts) and any(t.endswith("k") for t in texts)
    v.resize(420, 380)  # the small maps shrink below the values' width
    qtbot.waitUntil(lambda: not page.ids_map.cell_texts_shown)
    assert page.ids_map.cell_point_size == 0
    vb = page.ids_map.plot.getViewBox()
    page._on_scene_mouse_moved(vb.mapViewToScene(QPointF(1.5, 0.5)))
    assert f"|i − j| = {abs(m.ids[0] - m.ids[1]):,}" in page.glw.toolTip()


def test_every_map_has_a_colour_bar(view):
    v, state, _ = view
    _robot(state)
    page = v.regimes_page
    bars = [h.colorbar for h in page.maps]
    assert all(b is not None and b.isVisible() for b in bars)
    assert bars[1].levels() == pytest.approx(page.matrices.id_levels)
    assert bars[2].levels() == pytest.approx((0.0, 2.0))
    # small dot products ("-0.04") leave room for the bar's title beside them
    state.set_table(open_table("random:1000x64"))
    state.set_text("1 5 17 200 999 42 43 44 512")
    page.set_metric("dot")
    QApplication.processEvents()
    ax = page.main.colorbar.axis
    lo, hi = page.main.colorbar.levels()
    strings = [s for sp, vals in ax.tickValues(lo, hi, ax.height()) for s in ax.tickStrings(vals, 1.0, sp)]
    assert "-0.04" in strings or "−0.04" in strings
    widest = max(QFontMetrics(QApplication.font()).horizontalAdvance(s) for s in strings)
    title = ax.label.mapRectToParent(ax.label.boundingRect())
    assert title.width() > 0 and title.left() >= ax.style["tickTextOffset"][0] + widest, (title, widest)


def test_hidden_pages_compute_nothing(qtbot, view):
    v, state, _ = view
    v.show_page("random")
    state.set_table(open_table("toy:robot"))
    state.set_text("robot arm box tool")
    assert v.regimes_page.matrices is None  # hidden: nothing computed
    assert state.similarity.value is None and not state.similarity.running and not state.similarity.pending
    qtbot.waitUntil(lambda: v.random_page.check is not None, timeout=CHECK_TIMEOUT)
    v.show_page("regimes")
    assert v.regimes_page.matrices.n == 4  # drawn from the state once shown


def test_the_random_page_builds_its_plots_when_first_shown(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("toy:robot"))
    v.show_page("regimes")
    qtbot.wait(10)
    assert not v.random_page.glw.ci.items  # the view opens on the other page: nothing built yet
    v.show_page("random")
    qtbot.waitUntil(lambda: v.random_page.check is not None and v.random_page.plots_built, timeout=CHECK_TIMEOUT)
    assert len(v.random_page.glw.ci.items) == 2
    x, _ = v.random_page.rand_curve.getData()
    assert x is not None and len(x) > 0


def test_many_tokens_of_a_wide_table_are_compared_in_a_worker(qtbot, view):
    v, state, _ = view
    table = open_table("random:3000x4096")
    state.set_table(table)
    text = " ".join(str(i) for i in range(0, 3000, 20))  # 150 tokens: 92 M multiply-adds
    with qtbot.waitSignal(state.similarity.finished, timeout=CHECK_TIMEOUT):
        state.set_text(text)
        assert state.similarity.running and v.regimes_page.matrices is None  # not on the GUI thread
        assert "Comparing" in v.regimes_page.empty.text() and v.regimes_page.empty.isVisible()
    m = v.regimes_page.matrices
    assert m is state.similarity.value and m.n == 150 and m.ids[:3] == (0, 20, 40)
    x = table.rows(list(m.ids[:20])).astype(np.float64)
    n = np.linalg.norm(x, axis=1)
    np.testing.assert_allclose(m.learned[:20, :20], x @ x.T / np.outer(n, n), atol=1e-9)
    # a few tokens of the same table are compared on the spot
    state.set_text("1 2 3")
    assert not state.similarity.running and v.regimes_page.matrices.ids == (1, 2, 3)
    # the measure goes to the state with the page's request
    v.regimes_page.set_metric("dot")
    assert state.similarity.value.metric == "dot" and v.regimes_page.matrices.metric == "dot"


def test_random_check_runs_only_while_its_page_is_shown(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("random:3000x768"))
    assert state.random_check.pending and not state.random_check.running
    assert v.random_page.check is None
    with qtbot.waitSignal(state.random_check.finished, timeout=CHECK_TIMEOUT):
        v.show_page("random")
    page = v.random_page
    qtbot.waitUntil(lambda: page.plots_built)  # a part a turn
    chk = page.check
    assert chk is state.random_check.value and chk.dim == 768
    assert chk.theory_std == pytest.approx(0.0361, abs=5e-5)
    assert chk.random_std == pytest.approx(1 / math.sqrt(768), rel=0.05)
    assert "0.0361" in page.facts.text() and "0.108" in page.facts.text()
    # (0.99)^768 = 0.000444: 99.956 % of the volume in the outer shell
    assert f"{0.99 ** 768:.5g}" in page.facts.text() and "99.956 %" in page.facts.text()
    x, y = page.rand_curve.getData()
    np.testing.assert_allclose(y, np.exp(-x * x * 768 / 2) / math.sqrt(2 * math.pi / 768))
    # the random histogram against numpy's
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5000, 768)), rng.standard_normal((5000, 768))
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert chk.random_std == pytest.approx(cos.std(), rel=1e-6)


def test_model_change_drops_a_running_check(qtbot, view):
    """A check running for the old table never lands for the new one; hidden,
    the new table's check waits until the page is shown."""
    v, state, _ = view
    state.set_table(open_table("random:3000x768"))
    v.show_page("random")
    assert state.random_check.running
    v.show_page("regimes")
    new = open_table("random:2000x768")
    state.set_table(new)
    assert not state.random_check.running and state.random_check.pending
    assert state.random_check.value is None and v.random_page.check is None
    with qtbot.waitSignal(state.random_check.finished, timeout=CHECK_TIMEOUT):
        v.show_page("random")
    assert state.random_check.key == id(new) and v.random_page.check.dim == 768


def test_nonfinite_rows_do_not_crash(view, tmp_path):
    v, state, _ = view
    page = v.regimes_page
    w = torch.tensor([[1.0, 0.0, 1.0], [0.9, 0.1, 0.8], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.5]])
    w[1, 0] = float("nan")  # a broken weight in row 1
    save_file({"embed_tokens.weight": w}, str(tmp_path / "broken.safetensors"))
    state.set_table(open_table(str(tmp_path / "broken.safetensors")))
    state.set_text("0 1 2")
    m = page.matrices
    assert np.isfinite(m.learned).all() and m.zeroed == (1,)
    assert "NaN" in page.info.text()
    p = tmp_path / "m.csv"
    assert v.export_matrix_csv(str(p)) == 3
    rows = list(csv.reader(open(p, encoding="utf-8")))
    assert rows[0][0] == "cosine" and len(rows) == 4
    for what in ("matrix", "random"):
        for suffix in ("png", "svg"):
            out = tmp_path / f"{what}.{suffix}"
            v.export_plot(str(out), what)
            assert out.stat().st_size > 1000


def test_export_from_a_hidden_page_leaves_nothing_wanted(view, tmp_path):
    v, state, _ = view
    v.show_page("random")
    _robot(state)
    assert not state.similarity.wanted
    v.export_plot(str(tmp_path / "m.png"))
    assert (tmp_path / "m.png").stat().st_size > 1000
    assert v.regimes_page.matrices.n == 4  # drawn for the export
    assert not state.similarity.wanted  # but the hidden page still asks for nothing
    state.set_text("robot arm")
    assert state.similarity.value is None and not state.similarity.running


def test_cell_text_is_readable_in_both_palettes(view):
    v, state, _ = view
    app = QApplication.instance()
    light = app.palette()
    page = v.regimes_page
    try:
        for palette in (light, dark_palette()):
            app.setPalette(palette)
            _robot(state)
            cmap = page.main.image.getColorMap()
            lo, hi = page.matrices.levels
            cells = page.main.layer.cells()
            assert len(cells) == page.matrices.learned.size  # every value written, each checked below
            for (_, _, _, colour), value in zip(cells, page.matrices.learned.ravel()):
                cell = cmap.map((value - lo) / (hi - lo), mode="qcolor")
                assert contrast_ratio(cell, colour) >= 4.0, (value, cell.name())
    finally:
        app.setPalette(light)


def test_the_small_maps_titles_are_whole_at_1024(qtbot):
    """Issue 25: at 1024 x 700 (the tab is about 690 x 510) the small maps' titles were
    elided to "Scalar ids:…" and "One-hot: ‖…", over their narrow squares only; they may
    use the width of the token axis too, and fit in it."""
    for v, state, _ in standalone_view(qtbot, SimilarityView, size=(690, 510)):
        page = v.regimes_page
        state.set_table(open_table("default"))
        state.set_text("The king and the queen went to Paris.")
        qtbot.waitUntil(lambda page=page: page.matrices is not None)
        qtbot.wait(50)  # the maps lay out
        for h in (page.ids_map, page.onehot):
            assert h.title.shown == h.title.text
            assert h.plot.titleLabel.item.boundingRect().width() <= h.plot.width()


def test_the_add_button_coming_and_going_leaves_the_plots_in_place(qtbot, view):
    """Add is offered while the selection is not compared and goes when it is: the bar keeps a
    button's height throughout, so the maps under it are not resized twice."""
    from tests.support.ui_helpers import settle_layout

    v, state, _ = view
    page = v.regimes_page
    t = open_table("default")
    state.set_table(t)
    state.set_text("the cat")
    settle_layout()
    bar_height, plots = page.added.height(), page.glw.geometry()
    assert not page.added.add_button.isVisibleTo(page.added)
    page.added.set_candidate(t.tokenizer.id_of("dog"), t.shown_piece(t.tokenizer.id_of("dog")))
    settle_layout()
    assert page.added.add_button.isVisibleTo(page.added)
    assert page.added.height() == bar_height and page.glw.geometry() == plots
    page.added.set_candidate(-1, None)
    settle_layout()
    assert page.added.height() == bar_height and page.glw.geometry() == plots

