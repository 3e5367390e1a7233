"""Plot titles fit their plot: elided with the whole text in the tooltip,
never running past the plot's edge."""

from __future__ import annotations

import pyqtgraph as pg

from explorer.ui.plot_title import FittedTitle
from ui_helpers import load

TITLE = "Score of 30,522 rows; line: the reference rows (the tokenizer's unused tokens)"


def test_a_long_title_is_elided_to_the_plot_and_restored_when_wide(qtbot):
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    title = FittedTitle(w.getPlotItem())
    title.set(TITLE)
    w.resize(260, 200)
    w.show()
    qtbot.waitExposed(w)
    plot = w.getPlotItem()
    qtbot.waitUntil(lambda: title.shown.endswith("…"))
    assert TITLE.startswith(title.shown[:-1]) and plot.titleLabel.toolTip() == TITLE
    assert plot.titleLabel.item.boundingRect().width() <= plot.vb.width()
    w.resize(1400, 200)
    qtbot.waitUntil(lambda: title.shown == TITLE)
    assert plot.titleLabel.toolTip() == ""


def test_markup_in_a_title_is_shown_as_text(qtbot):
    w = pg.PlotWidget()
    qtbot.addWidget(w)
    title = FittedTitle(w.getPlotItem())
    title.set("Cosines of <unk> and <b>")
    assert "&lt;unk&gt;" in w.getPlotItem().titleLabel.text
    title.set("")
    assert not w.getPlotItem().titleLabel.isVisible()


def test_health_titles_fit_at_1024(qtbot, explorer):
    explorer.window.resize(1024, 700)
    load(qtbot, explorer, "minilm")
    explorer.window.show_view("health")
    view = explorer.health_view
    qtbot.waitUntil(lambda: view.histogram.title.text != "", timeout=60_000)
    for title in (view.vocab_plot.title, view.histogram.title):
        plot = title.plot
        qtbot.waitUntil(lambda: title.shown != "")
        label = plot.titleLabel
        assert label.item.boundingRect().width() <= plot.vb.width()
        assert title.shown == title.text or (title.shown.endswith("…") and label.toolTip() == title.text)
