"""The Projection view (pytest-qt, offscreen), standalone on its own AppState:
it draws the state's PCA, interest, neighbours and analogies, and computes
none of them itself."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget

from explorer.core.geometry.nearest import Neighbor
from explorer.core.geometry.neighbors import NeighborList
from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from explorer.ui.projection.info_panel import HOVER_HINT
from tests.support.ui_helpers import standalone_view, wait_neighbors

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def load(qtbot, view, state, spec, text=None):
    table = open_table(spec)
    state.set_table(table)
    if text is not None:
        state.set_text(text)
    qtbot.waitUntil(lambda: view.result is not None and view.result.spec == table.spec, timeout=TIMEOUT)
    return table


def settle(qtbot, v):
    """Wait for a label placement after the last change (asked for here, so one
    always comes, however late the machine runs the debounced one)."""
    with qtbot.waitSignal(v.plot.settled, timeout=TIMEOUT):
        v.plot.settle_soon()


def _aligned(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    s = np.sign((got * ref).sum(0))
    s[s == 0] = 1
    return got * s


def test_empty_state_says_what_to_do(view):
    v, _state, _runner = view
    assert "Open a model" in v.empty.text()
    assert not v.retry_button.isVisible()


def test_bundled_model_coordinates_match_sklearn(qtbot, view):
    from sklearn.decomposition import PCA

    v, state, _ = view
    table = load(qtbot, v, state, "default", "the quick fox chases the sleepy cat")
    assert v.result is state.projection.value and v.result.mode == "all" and v.fit_mode == "all"
    e = table.matrix()[: table.trained_rows].astype(np.float64)
    ref = PCA(n_components=10, svd_solver="full").fit(e)
    ref_xy = ref.transform(e)
    np.testing.assert_allclose(v.result.explained, ref.explained_variance_ratio_, rtol=1e-3)
    got = v.plot.cloud.positions()
    tol = 1e-3 * np.abs(ref_xy).max()
    np.testing.assert_allclose(_aligned(got, ref_xy[:, :2]), ref_xy[:, :2], atol=tol)
    assert f"{ref.explained_variance_ratio_[0]:.1%}" in v.plot.plot_item.getAxis("bottom").labelText
    v.set_axes(1, 2)
    np.testing.assert_allclose(_aligned(v.plot.cloud.positions(), ref_xy[:, 1:3]), ref_xy[:, 1:3], atol=tol)
    # classes colour the cloud: as many colours as classes, plus the faint one
    assert len(v.plot.cloud._colors) == len(state.classes.names) + 1


def test_selection_lines_are_the_states_neighbours(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the quick fox chases the sleepy cat")
    fox = table.tokenizer.id_of("fox")
    state.set_selected_token(fox)
    want = wait_neighbors(qtbot, state)[:8]
    assert v.neighbor_line_ids() == want
    x, y = v.plot.neighbor_lines.getData()
    assert len(x) == 16
    ends = np.column_stack([x[1::2], y[1::2]])
    np.testing.assert_allclose(ends, [v.point_xy(i) for i in want], atol=1e-6)
    np.testing.assert_allclose([x[0], y[0]], v.point_xy(fox), atol=1e-6)
    sel = v.plot.selection.data  # its own small item, over the marks
    assert sel["data"].tolist() == [fox]
    np.testing.assert_allclose([sel["x"][0], sel["y"][0]], v.point_xy(fox), atol=1e-6)
    qtbot.waitUntil(lambda: state.interest.value is not None, timeout=TIMEOUT)
    assert set(state.interest.value.text) <= set(v.plot.marks.data["data"].tolist())
    # whatever the state publishes is what is drawn: the view does not search again
    state.neighbors.publish(NeighborList(fox, (Neighbor(5, 0.9), Neighbor(7, 0.8)), table.trained_rows),
                            key=state.neighbors.key)
    assert v.neighbor_line_ids() == [5, 7]
    assert len(v.plot.neighbor_lines.getData()[0]) == 4
    settle(qtbot, v)
    assert fox in [tid for tid, _ in v.labelled()]


def test_streamed_neighbours_reach_the_projection(qtbot, view):
    """A table past the inline size: the neighbours come from the state's worker."""
    v, state, _ = view
    load(qtbot, v, state, "random:30000x48", "12 345")
    assert state.table.params > 1_000_000
    state.set_selected_token(345)
    assert v.neighbor_line_ids() == []  # not searched here while the state's search runs
    want = wait_neighbors(qtbot, state)
    qtbot.waitUntil(lambda: v.neighbor_line_ids() == want[:8], timeout=TIMEOUT)


def test_clicking_a_point_selects_its_token(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the cat")
    dog = table.tokenizer.id_of("dog")
    v.plot.auto_range()
    pos = v.plot.plot_item.getViewBox().mapViewToScene(QPointF(*v.point_xy(dog)))
    target = v.plot.mapFromScene(pos)
    if v.plot.cloud.index_at(QPointF(*v.point_xy(dog))) != int(np.nonzero(v.result.ids == dog)[0][0]):
        pytest.skip("another point sits on top of this one")
    qtbot.mouseClick(v.plot.viewport(), Qt.LeftButton, pos=QPoint(target.x(), target.y()))
    qtbot.waitUntil(lambda: state.selected_id == dog, timeout=5_000)


def test_hover_text_goes_with_the_model(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the cat")
    harbour = table.tokenizer.id_of("harbour")
    # the pointer over the point, as the user moves it
    moves = []

    def hovering() -> bool:
        # pyqtgraph drops mouse moves closer than 10 ms apart, and Qt a move to where the
        # pointer already is: move again, a pixel to and fro, until one lands
        where = v.plot.mapFromScene(v.plot.plot_item.getViewBox().mapViewToScene(QPointF(*v.point_xy(harbour))))
        moves.append(len(moves) % 2)
        qtbot.mouseMove(v.plot.viewport(), QPoint(where.x() + moves[-1], where.y()))
        return "harbour" in v.info.hover_label.text()

    qtbot.waitUntil(hovering, timeout=5_000)
    assert f"id {harbour}" in v.info.hover_label.text()
    state.set_table(open_table("toy:robot"))
    # at once, before the new projection arrives
    assert v.info.hover_label.text() == HOVER_HINT
    assert v.result is None and len(v.plot.cloud) == 0
    fit = v.info.fit_label.text()  # nothing of the old model's fit: at most what is being computed now
    assert fit == "" or (fit.startswith("Computing") and "Toy table C" in fit and table.name not in fit)


def test_labels_never_overlap(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "minilm", "the king and the queen walked to the river bank")
    qtbot.waitUntil(lambda: state.interest.value is not None, timeout=TIMEOUT)
    settle(qtbot, v)
    shown = v.labelled()
    assert len(shown) >= 8
    rects = v.label_rects()
    view_rect = v.plot.plot_item.getViewBox().sceneBoundingRect()
    assert all(view_rect.contains(r) for r in rects)
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            assert not rects[i].intersects(rects[j]) or rects[i].intersected(rects[j]).isEmpty(), (i, j)
    # zoomed in far, the faint points get labels too, still without overlaps
    king = state.table.tokenizer.id_of("king")
    x, y = v.point_xy(king)
    v.plot.plot_item.getViewBox().setRange(xRange=(x - 0.05, x + 0.05), yRange=(y - 0.05, y + 0.05), padding=0)
    settle(qtbot, v)
    rects = v.label_rects()
    assert len(v.labelled()) > 0
    assert all(not a.intersected(b).isValid() or a.intersected(b).isEmpty()
               for i, a in enumerate(rects) for b in rects[i + 1:])


def test_analogy_on_the_bundled_model(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the cat")
    panel = v.analogy_panel
    words = [e.text() for e in panel.edits]
    assert all(words), "the boxes hold an example the vocabulary has"
    ids = [table.tokenizer.id_of(w) for w in words]
    panel.solve_button.click()
    qtbot.waitUntil(lambda: state.analogy.value is not None, timeout=TIMEOUT)
    e = table.matrix()[: table.trained_rows].astype(np.float64)
    en = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
    target = en[ids[0]] - en[ids[1]] + en[ids[2]]
    cos = en @ target / np.linalg.norm(target)
    cos[ids] = -np.inf
    want = [int(i) for i in np.argsort(-cos)[:5]]
    assert v.analogy_answers() == want and panel.table.rowCount() == 5
    assert table.piece(want[0]) in panel.status.text()
    x, _ = v.plot.analogy_lines.getData()
    assert len(x) == 4
    pa, pb, pc = (v.point_xy(i) for i in ids)
    marks = v.plot.marks.data
    target_xy = [(m["x"], m["y"]) for m in marks if m["data"] == -1]
    np.testing.assert_allclose(target_xy[0], pa - pb + pc, atol=1e-5)
    with qtbot.waitSignal(v.token_selected) as blocker:
        panel._on_table_cell_clicked(0, 0)
    assert blocker.args == [want[0]]


def test_analogy_panel_offers_the_plain_sum_and_says_which_it_computed(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the cat")
    panel = v.analogy_panel
    assert "â − b̂ + ĉ" in panel.title.text()  # the default: unit rows, and the title says so
    panel.set_form("plain")
    assert "a − b + c" in panel.title.text() and "â" not in panel.title.text()
    ids = [table.tokenizer.id_of(e.text()) for e in panel.edits]
    panel.solve()
    qtbot.waitUntil(lambda: state.analogy.value is not None, timeout=TIMEOUT)
    e = table.matrix()[: table.trained_rows].astype(np.float64)
    target = e[ids[0]] - e[ids[1]] + e[ids[2]]  # the rows as stored, no scaling
    cos = e @ target / (np.linalg.norm(e, axis=1) * np.linalg.norm(target))
    cos[ids] = -np.inf
    want = np.argsort(-cos)[:5]
    assert v.analogy_answers() == want.tolist() and state.analogy.value.form.value == "plain"
    assert [panel.table.item(r, 2).text() for r in range(5)] == [f"{c:+.3f}" for c in cos[want]]
    assert "rows as stored" in panel.status.text()


def test_analogy_on_a_table_too_big_to_hold(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("random:530000x128"))
    assert not state.table.fits_in_memory
    v.set_fit_mode("sample", sample_size=500)
    panel = v.analogy_panel
    for e, text in zip(panel.edits, ("#5", "#500000", "#77777")):
        e.setText(text)
    panel.solve_button.click()
    qtbot.waitUntil(lambda: "rows" in panel.status.text(), timeout=TIMEOUT)  # streamed, with progress
    assert panel.progress.isVisible() and panel.cancel_button.isVisible()
    panel.cancel_button.click()
    assert panel.status.text() == "Cancelled" and not panel.cancel_button.isVisible()
    assert state.analogy.value is None
    panel.solve_button.click()
    qtbot.waitUntil(lambda: state.analogy.value is not None, timeout=TIMEOUT)
    res = state.analogy.value
    assert (res.a, res.b, res.c) == (5, 500_000, 77_777) and len(res.answers) == 5
    assert res.rows_searched == 530_000
    assert v.analogy_answers() == res.ids() and panel.table.rowCount() == 5


def test_a_hidden_tab_computes_nothing(qtbot):
    from explorer.app import make_app
    from explorer.state.app_state import AppState
    from explorer.workers import JobRunner, await_all_workers

    make_app()
    state = AppState()
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QLabel("another view"), "Other")
    v = ProjectionView(state)
    tabs.addTab(v, "Projection")
    tabs.resize(1000, 700)
    tabs.show()
    try:
        table = open_table("default")
        state.set_table(table)
        state.set_text("the cat sat")
        state.set_selected_token(table.tokenizer.id_of("cat"))
        qtbot.wait(50)
        assert not state.projection.running and state.projection.value is None
        assert state.interest.pending and state.interest.value is None
        assert v.result is None and len(v.plot.cloud) == 0 and v.analogy_panel.edits[0].text() == ""
        tabs.setCurrentWidget(v)
        qtbot.waitUntil(lambda: v.result is not None, timeout=TIMEOUT)
        assert len(v.plot.cloud) == table.trained_rows
        qtbot.waitUntil(lambda: state.interest.value is not None, timeout=TIMEOUT)
    finally:
        for job in state.findChildren(JobRunner):
            job.cancel(emit=False)
        await_all_workers()


def test_the_axes_never_show_one_component_twice(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "default", "the cat")
    ax = v.axes_controls
    assert v.axes() == (0, 1)
    ax.y_combo.setCurrentIndex(0)  # PC1 on the vertical axis too: the axes swap
    assert v.axes() == (1, 0)
    assert (ax.x_combo.currentIndex(), ax.y_combo.currentIndex()) == (1, 0)
    ax.x_combo.setCurrentIndex(0)
    assert v.axes() == (0, 1)
    with pytest.raises(ValueError):
        v.set_axes(2, 2)
    ev = v.result.explained
    title = v.plot.plot_item.titleLabel.text
    assert f"{ev[0] + ev[1]:.1%} of the variance shown" in title
    # a table of width 3 offers only its three components
    load(qtbot, v, state, "toy:robot", "robot arm")
    assert v.result.coords.shape == (4, 3)
    assert [ax.x_combo.itemText(i) for i in range(ax.x_combo.count())] == ["PC1", "PC2", "PC3"]


def test_fit_modes_and_exports(qtbot, view, tmp_path):
    v, state, _ = view
    table = load(qtbot, v, state, "default", "the quick fox")
    qtbot.waitUntil(lambda: state.interest.value is not None, timeout=TIMEOUT)
    v.set_fit_mode("chosen")
    qtbot.waitUntil(lambda: v.result is not None and v.result.mode == "chosen", timeout=TIMEOUT)
    chosen = state.interest.value.all_ids()
    assert v.result.ids.tolist() == chosen
    assert "chosen" in v.info.fit_label.text()
    v.set_fit_mode("sample", sample_size=100)
    qtbot.waitUntil(lambda: v.result is not None and v.result.mode == "sample", timeout=TIMEOUT)
    assert 100 <= len(v.result.ids) <= 100 + len(chosen)
    assert v.fit.sample.isVisible() and state.projection_params == ("sample", 100)
    fox = table.tokenizer.id_of("fox")
    state.set_selected_token(fox)
    wait_neighbors(qtbot, state)
    p = tmp_path / "coords.csv"
    n = v.export_coordinates_csv(str(p))
    rows = list(csv.reader(open(p, encoding="utf-8")))
    assert rows[0][:4] == ["id", "piece", "fitted", "class"] and len(rows) == n + 1
    by_id = {int(r[0]): r for r in rows[1:]}
    assert fox in by_id and table.piece(fox) == by_id[fox][1]
    first = rows[0].index("PC1")  # the coordinates follow the metadata columns
    np.testing.assert_allclose([float(c) for c in by_id[fox][first:first + 2]], v.point_xy(fox), rtol=1e-5, atol=1e-6)
    nb = tmp_path / "nb.csv"
    assert v.export_neighbors_csv(str(nb)) > 0
    listed = [int(r[3]) for r in list(csv.reader(open(nb, encoding="utf-8")))[1:] if int(r[0]) == fox]
    assert listed == state.neighbors.value.ids()
    png, svg = tmp_path / "p.png", tmp_path / "p.svg"
    v.export_plot(str(png))
    v.export_plot(str(svg))
    assert png.stat().st_size > 1000 and svg.stat().st_size > 1000
    assert "<svg" in svg.read_text(errors="replace")


def test_cancelling_the_fit_offers_to_fit_again(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("random:60000x256"))
    qtbot.waitUntil(lambda: state.projection.running, timeout=TIMEOUT)
    assert v.cancel_button.isVisible()
    v.cancel_button.click()
    qtbot.waitUntil(lambda: v.retry_button.isVisible(), timeout=TIMEOUT)
    assert "cancelled" in v.empty.text()
    v.retry_button.click()  # the same fit set again
    assert state.projection_params[0] == "all" and v.fit_mode == "all"
    qtbot.waitUntil(lambda: state.projection.running, timeout=TIMEOUT)
    v.set_fit_mode("sample", sample_size=300)
    qtbot.waitUntil(lambda: v.result is not None, timeout=TIMEOUT)


def test_class_colours_stay_visible_on_a_dark_palette(qtbot):
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from explorer.app import make_app
    from explorer.ui.style import CLASS_COLORS, class_color, dark_palette

    make_app()
    black = CLASS_COLORS.index("#000000")
    app = QApplication.instance()
    light = app.palette()
    assert class_color(black) == "#000000"
    try:
        app.setPalette(dark_palette())
        assert QColor(class_color(black)).lightness() > 200  # a black dot on a dark plot would vanish
        assert class_color(0) == CLASS_COLORS[0]
    finally:
        app.setPalette(light)


def test_the_side_column_is_never_cut_at_the_right(qtbot, view):
    from explorer.ui.projection.side_panel import SidePanel

    v, state, _ = view
    load(qtbot, v, state, "default", "the king and the queen")
    side = v.findChild(SidePanel)
    for width in (640, 760, 1200):  # the projection tab of a 1024-px window is about 690 px wide
        v.resize(width, 560)
        qtbot.waitUntil(lambda w=width: v.width() == w)
        QApplication.processEvents()
        assert side.widget().width() <= side.viewport().width(), width
        assert side.widget().minimumSizeHint().width() <= side.viewport().width(), width
