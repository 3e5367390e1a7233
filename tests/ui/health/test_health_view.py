"""The Health view on a standalone view (pytest-qt, offscreen): what it draws
against numpy and the corpus, clicks that select, Cancel, model switches,
the CSV export and both layouts."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from explorer.core.health import Flag
from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table
from explorer.ui.health import HealthView
from explorer.ui.health.score_histogram import ScoreHistogram
from explorer.ui.health.view import CANCELLED
from explorer.ui.health.vocab_plot import Y_CHOICES, VocabPlot
from tests.support.ui_helpers import SceneClick, settle_layout, standalone_view

CHECK_TIMEOUT = 60_000


def _made_in_steps(state, held=None):
    """The view as the app makes it for its tab (LazyPage): over turns, what each step made held."""
    return run_to_end(HealthView.built_in_steps(state), None if held is None else held.append)


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, _made_in_steps, size=(1100, 760))


def test_the_view_made_in_steps_takes_its_plots_a_step_each(qtbot):
    """The tab's first show makes the two plots a step each, each yielded for the page to hold,
    then the rest of the view around them (every other test here uses a view made so)."""
    from explorer.state.app_state import AppState

    state, held = AppState(), []
    v = _made_in_steps(state, held)
    qtbot.addWidget(v)
    assert [type(w) for w in held] == [VocabPlot, ScoreHistogram]
    assert v.vocab_plot is held[0] and v.histogram is held[1]
    assert v.plots.widget(0) is held[0] and v.plots.widget(1) is held[1]
    state.deleteLater()


def _checked(qtbot, v, state, spec):
    table = open_table(spec)
    state.set_table(table)
    qtbot.waitUntil(lambda: v.report is not None, timeout=CHECK_TIMEOUT)
    return table


def test_bundled_model_shows_its_rare_words(qtbot, view):
    v, state, _ = view
    assert "Open a model" in v.summary.caption.text()
    table = _checked(qtbot, v, state, "default")
    r = v.report
    words = {table.piece(i) for i in r.flagged}
    assert words == {"<pad>", "<unk>", "of"}
    # the flagged rows stand out on norm: the plot shows the norms, ringed, the bar under them
    assert v.vocab_plot.y_key == "norm"
    np.testing.assert_allclose(v.vocab_plot.y_values(), np.linalg.norm(table.matrix().astype(np.float64), axis=1),
                               rtol=1e-5)
    assert v.vocab_plot.dots.point_count() == table.vocab_size
    rx, ry = v.vocab_plot.rings.getData()
    assert sorted(rx.astype(int)) == sorted(r.flagged.tolist())
    assert v.vocab_plot.bar.value() == pytest.approx(r.norm_threshold) and (ry < r.norm_threshold).all()
    # the table lists them first, with their corpus counts (0), and the caption says so
    model = v.table.model_
    # the table ranks the tokens a text can reach: "of" (never in the corpus) leads; the flagged special
    # tokens <pad> and <unk> are listed apart, under the counts
    assert model.token_id(0) == table.tokenizer.id_of("of") and model.token_id(0) in set(r.flagged.tolist())
    corpus_col = model.columns.index("in corpus")
    assert model.data(model.index(0, corpus_col)) == "0"
    assert all(r.category_of(model.token_id(k)) == "ok" for k in range(model.rowCount()))
    assert "special (3): &lt;pad&gt;, &lt;unk&gt;, &lt;bos&gt;" in v.summary.apart.text()
    text = v.summary.caption.text()
    assert "“of” (0)" in text and "Training tab" in text and "0 times" in text
    assert "special&nbsp;3" in v.summary.counts.text()


def test_clicks_select_and_the_selection_is_mirrored(qtbot, view):
    v, state, _ = view
    table = _checked(qtbot, v, state, "default")
    model = v.table.model_
    # a candidate clicked
    row = 1
    rect = v.table.visualRect(model.index(row, 1))
    qtbot.mouseClick(v.table.viewport(), Qt.LeftButton, pos=rect.center())
    assert state.selected_id == model.token_id(row)
    # a point clicked, where it is drawn
    target = 150
    vb = v.vocab_plot.plot.vb
    scene = vb.mapViewToScene(QPointF(target, float(v.vocab_plot.y_values()[target])))
    v.vocab_plot._on_scene_clicked(SceneClick(scene))
    assert state.selected_id == target
    mx, my = v.vocab_plot.marker.getData()
    assert list(mx) == [target] and my[0] == pytest.approx(np.linalg.norm(table.row(target)), rel=1e-5)
    # selected elsewhere: the marker and the table follow, without a signal back
    state.set_selected_token(int(model.token_id(0)))
    assert v.table.selectionModel().isRowSelected(0)
    assert list(v.vocab_plot.marker.getData()[0]) == [model.token_id(0)]


def test_csv_export_lists_the_table(qtbot, view, tmp_path):
    v, state, _ = view
    table = _checked(qtbot, v, state, "default")
    path = tmp_path / "health.csv"
    n = v.export_csv(str(path))
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    ranking = [r for r in rows if r["list"] == "ranking"]
    assert n == len(ranking) == v.table.model_.rowCount()
    # the lists kept apart from the ranking follow it: the bundled model's three special tokens
    assert [r["piece"] for r in rows if r["list"] == "special"] == ["<pad>", "<unk>", "<bos>"]
    first = rows[0]
    i = int(first["id"])
    assert first["piece"] == table.piece(i) and first["flagged"] == "1" and first["corpus_count"] == "0"
    assert float(first["norm"]) == pytest.approx(np.linalg.norm(table.row(i)), rel=1e-5)


def test_a_flagged_row_without_a_score_is_not_ringed_on_the_score_axis(qtbot, view, recwarn):
    """cat-sat's zero row is flagged and has no score: on the score axis its ring had y NaN, and
    pyqtgraph warned "All-NaN slice" at every paint (the monkey found it)."""
    v, state, _ = view
    _checked(qtbot, v, state, "toy:cat-sat")
    r = v.report
    assert r.flag_counts()["zero"] == 1 and v.vocab_plot.y_key == "norm"
    assert len(v.vocab_plot.rings.getData()[0]) == 1  # on the norm axis, at 0
    v.vocab_plot.y_choice.setCurrentIndex(list(Y_CHOICES).index("score"))
    assert np.isnan(r.scores[r.flagged]).all()
    rx, ry = v.vocab_plot.rings.getData()
    assert len(rx) == 0 and np.isfinite(ry).all()
    v.vocab_plot.plot.vb.autoRange()
    v.vocab_plot.plot_widget.grab()  # a paint
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_model_switch_clears_then_shows_the_new_model(qtbot, view):
    v, state, _ = view
    _checked(qtbot, v, state, "default")
    v.vocab_plot.readout.setText("of  id 10")
    state.set_table(open_table("random:3000x48"))
    assert v.report is None or v.report.vocab_size == 3000  # never the old model's report
    assert v.vocab_plot.readout.text() == ""
    if v.report is None:  # issue 25, item 13: the axes span the new table while it is checked
        (x0, x1), _ = v.vocab_plot.plot.vb.viewRange()
        assert x0 < 0 and 2900 < x1 < 3100 and "3,000 rows" in v.vocab_plot.title.text
    qtbot.waitUntil(lambda: v.report is not None, timeout=CHECK_TIMEOUT)
    assert v.report.flagged_count == 0 and "Nothing here beyond chance" in v.summary.caption.text()
    assert len(v.vocab_plot.rings.getData()[0]) == 0
    # issue 25, item 5: a table without a tokenizer has no round trip to call "ok"
    counts = v.summary.counts.text()
    assert "Tokenizer round trip: not checked: this table has no tokenizer" in counts
    assert "ok&nbsp;3,000" not in counts and not v.report.round_trip_checked


def test_cancel_then_check_again(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("random:400000x256"))  # long enough to be stopped
    qtbot.waitUntil(lambda: state.health.running, timeout=CHECK_TIMEOUT)
    assert v.cancel_button.isVisible() and v.progress.isVisible()
    qtbot.mouseClick(v.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: v.run_button.isVisible(), timeout=CHECK_TIMEOUT)
    assert v.report is None and v.summary.caption.text() == CANCELLED and not v.cancel_button.isVisible()
    state.set_table(open_table("random:2000x32"))  # a smaller table: checked at once
    qtbot.waitUntil(lambda: v.report is not None, timeout=CHECK_TIMEOUT)
    assert not v.run_button.isVisible()


def test_hidden_view_checks_nothing_until_shown(qtbot, view):
    v, state, _ = view
    v.hide()
    state.set_table(open_table("default"))
    assert state.health.pending and not state.health.running and v.report is None
    v.show()
    qtbot.waitUntil(lambda: v.report is not None, timeout=CHECK_TIMEOUT)
    assert v.report.flagged_count == 3


def test_narrow_and_wide_layouts(qtbot, view):
    v, state, _ = view
    _checked(qtbot, v, state, "default")
    v.resize(700, 600)
    qtbot.waitUntil(lambda: v.split.orientation() == Qt.Vertical)
    assert v.plots.orientation() == Qt.Horizontal
    v.resize(1300, 700)
    qtbot.waitUntil(lambda: v.split.orientation() == Qt.Horizontal)
    assert v.plots.orientation() == Qt.Vertical
    assert all(v.table.columnWidth(c) > 30 for c in range(v.table.model_.columnCount()))
    assert v.report.flags[0] & Flag.UNDER_TRAINED


def test_verify_with_a_causal_model_fills_a_column(qtbot, view, tmp_path):
    from tests.support import model_factory as mf

    v, state, _ = view
    built = mf.build_model(tmp_path / "tiny", "llama", "float32", tied=False, tokenizer=mf.train_bpe(120), seed=2)
    _checked(qtbot, v, state, str(built.folder))
    assert v.verify_button.isEnabled() and v.verify_note.text() == ""
    qtbot.mouseClick(v.verify_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: state.verification.value is not None, timeout=CHECK_TIMEOUT)
    result = state.verification.value
    model = v.table.model_
    col = model.columns.index("repeat P")
    first = result.of(model.token_id(0))
    assert model.data(model.index(0, col)) == f"{first.probability:.2g} {first.status}"
    assert f"{result.confirmed_count} verified" in v.verify_note.text()
    v.export_csv(str(tmp_path / "verified.csv"))
    with open(tmp_path / "verified.csv", newline="", encoding="utf-8") as f:
        row = next(csv.DictReader(f))
    assert float(row["repeat_probability"]) == pytest.approx(first.probability, rel=1e-5)
    # a new model drops the answers
    state.set_table(open_table("default"))
    assert state.verification.value is None and "repeat P" not in model.columns


def test_verify_is_not_offered_without_a_causal_model(qtbot, view):
    v, state, _ = view
    _checked(qtbot, v, state, "default")
    assert not v.verify_button.isEnabled()
    assert "not available" in v.verify_note.text() and "ExplorerToyLM" in v.verify_note.text()


def test_every_column_stays_in_view_beside_the_piece(qtbot, view):
    """At 1440 x 900 the table's pane is about 400 px wide; fixed widths (508 px) hid the score
    and the corpus counts behind a horizontal scroll bar. The widths come from the fonts, so the
    narrow case is the width they need, not a number of pixels."""
    from explorer.ui.health.candidates import CandidateTable

    v, state, _ = view
    table = _checked(qtbot, v, state, "default")
    t = CandidateTable()
    qtbot.addWidget(t)
    t.set_report(v.report, table.piece)
    t.show()
    header = t.horizontalHeader().fontMetrics()
    columns = t.model_.columns
    assert "score" in columns and "in corpus" in columns
    # the pane's width where the columns other than the piece just fit beside a narrowest piece
    # (about 400 px with this machine's fonts), and a wide one
    others = sum(t.columnWidth(c) for c, name in enumerate(columns) if name != "piece")
    frame = t.width() - t.viewport().width()
    for width in (others + 72 + frame + 2, 640):
        t.resize(width, 300)
        qtbot.waitUntil(lambda w=width: t.width() == w)
        qtbot.wait(20)
        assert sum(t.columnWidth(c) for c in range(len(columns))) <= t.viewport().width()
        assert t.horizontalScrollBar().maximum() == 0
        assert all(t.columnWidth(c) >= header.horizontalAdvance(name) for c, name in enumerate(columns))
        assert t.columnWidth(columns.index("piece")) >= 72


def test_the_reports_notes_are_shown_when_the_duplicate_search_was_cut(qtbot, view):
    """Rows on a circle (random 20,000 x 2): more near pairs than are checked. The near count
    shown is then a lower bound, and the window says so, as the command line does."""
    v, state, _ = view
    _checked(qtbot, v, state, "random:20000x2")
    cut = [n for n in v.report.notes if n.startswith("More pairs of near-equal rows")]
    assert len(cut) == 1
    assert f"Note: {cut[0]}" in v.summary.counts.text()
    _checked(qtbot, v, state, "default")
    assert v.report.notes[0].startswith("Scored on the output matrix")  # said in short by "Scored on"
    assert len(v.report.notes) == 1 and "Note:" not in v.summary.counts.text()


def test_checking_again_leaves_the_plots_where_they_are(qtbot, view):
    """While the check runs again its sentences keep their room (WrappedLabel.hold): cleared to
    one line and grown back, they resized the two plots under them twice per model switch."""
    from tests.support.ui_helpers import layout_watch

    v, state, _ = view
    _checked(qtbot, v, state, "default")
    settle_layout()
    assert v.summary.caption.height() > 2 * v.summary.caption.fontMetrics().lineSpacing()
    watch = layout_watch(*(p.getViewBox().scene().views()[0] for p in (v.vocab_plot.plot, v.histogram.plot)))
    old = v.report
    _checked(qtbot, v, state, "default")  # the same table opened again: the same sentences come back
    settle_layout()
    assert v.report is not old and not watch.seen, watch.seen


def test_a_report_draws_its_table_then_its_two_plots_a_turn_each(qtbot, view):
    """The summary, table and both plots in one turn stalled a real window ~100 ms when the tab
    came back after a model switch: now the vocabulary plot and the histogram follow a turn each,
    and ``report`` (the report drawn) is set with the last; a new model drops draws still waiting."""
    from PySide6.QtCore import QTimer

    v, state, _ = view
    turn = [0]
    ticker = QTimer()
    ticker.timeout.connect(lambda: turn.__setitem__(0, turn[0] + 1))
    ticker.start(0)
    drawn = []
    for name, part in (("table", v.table), ("vocab", v.vocab_plot), ("histogram", v.histogram)):
        part.set_report = lambda report, *a, f=part.set_report, n=name, **k: (
            drawn.append((n, turn[0])) if report is not None else None, f(report, *a, **k))[1]
    _checked(qtbot, v, state, "default")
    ticker.stop()
    at = dict(drawn)
    assert [n for n, _ in drawn] == ["table", "vocab", "histogram"]
    assert at["table"] < at["vocab"] < at["histogram"]  # a turn each
    assert v.vocab_plot.dots.point_count() == state.table.vocab_size and v.export_button.isEnabled()

    report = v.report
    drawn.clear()
    v._draw(report)  # a report comes (the job's result): the table now, the plots wait
    assert [n for n, _ in drawn] == ["table"] and v._plots.pending == 2
    v._clear()  # a new model, a failed check: the draws still waiting go
    assert v._plots.pending == 0 and v.report is None and not v.export_button.isEnabled()
    qtbot.wait(50)
    assert [n for n, _ in drawn] == ["table"]  # nothing of the old report drawn after all
