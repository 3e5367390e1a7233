"""What the Projection view's Show filter leaves on screen (pytest-qt,
offscreen): with a filter on, the highlighted tokens (the text's, their
neighbours, the selection's lines) obey it too, so the count and the plot's
title say how many points are drawn."""

from __future__ import annotations

import pytest

from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def _drawn_ids(v) -> set[int]:
    """Every token id with a point on the plot: the cloud, the marks, the selection."""
    marks = v.plot.marks.data["data"].tolist() if len(v.plot.marks.data) else []
    sel = v.plot.selection.data["data"].tolist() if len(v.plot.selection.data) else []
    return set(v.plot._cloud_ids.tolist()) | set(marks) | set(sel)


def test_isolate_draws_what_it_counts_and_the_title_says_it(qtbot, view):
    v, state, _ = view
    table = open_table("minilm")
    state.set_table(table)
    state.set_text("the king and the queen walked to the river bank")
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.interest.value is not None, timeout=TIMEOUT)
    ids = v.result.ids
    interest = state.jobs.interest.value
    assert len(set(interest.all_ids())) > 12  # the text's tokens and their neighbours are marked
    sel = table.tokenizer.id_of("king")
    state.set_selected_token(sel)
    qtbot.waitUntil(lambda: state.jobs.neighbors.value is not None and state.jobs.neighbors.value.token_id == sel,
                    timeout=TIMEOUT)
    v.points.show.isolate_button.click()
    shown = set(v.points.shown_ids.tolist())
    assert shown == ({sel} | set(state.jobs.neighbors.value.ids())) & set(ids.tolist())
    drawn = _drawn_ids(v)
    assert drawn == shown  # the text's other tokens and their neighbours are not drawn over an isolated set
    assert f"Showing <b>{len(drawn):,}</b> of {len(ids):,}" in v.points.show.count_label.text()
    assert v.plot.plot_item.titleLabel.text.startswith(f"{len(drawn):,} of {len(ids):,} tokens ·")
    v.plot.place_now()
    assert {t for t, _text in v.labelled()} <= shown
    v.points.show.all_button.click()
    assert v.plot.plot_item.titleLabel.text.startswith(f"{len(ids):,} tokens ·")
    assert set(interest.all_ids()) <= _drawn_ids(v)  # every highlight is back


def test_legend_entries_hide_show_and_isolate_their_group(qtbot, view):
    from explorer.core.tokens.meta import KINDS

    v, state, _ = view
    state.set_table(open_table("minilm"))
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.token_meta.value is not None, timeout=TIMEOUT)
    ids = v.result.ids
    kinds = state.jobs.token_meta.value.kind[ids]
    v.colour.choose("kind")
    legend = v.info.legend
    present = [k for k in range(len(KINDS)) if f'href="group:{k}"' in legend.text()]
    assert present == list(range(len(v.points.groups.labels)))  # every entry is a link
    word, cont = KINDS.index("word start"), KINDS.index("continuation")
    legend.linkActivated.emit(f"group:{word}")  # a click: word starts hidden
    assert set(v.points.shown_ids.tolist()) == set(ids[kinds != word].tolist())
    assert set(v.plot._cloud_ids.tolist()) == set(ids[kinds != word].tolist())
    assert "<s>word start" in legend.text()
    assert f"Showing <b>{int((kinds != word).sum()):,}</b> of {len(ids):,}" in v.points.show.count_label.text()
    legend.linkActivated.emit(f"group:{word}")  # again: back
    assert len(v.points.shown_ids) == len(ids) and "<s>" not in legend.text()
    v.info.group_clicked.emit(cont, True)  # shift-click: continuations alone
    assert set(v.points.shown_ids.tolist()) == set(ids[kinds == cont].tolist())
    assert "<s>word start" in legend.text() and "<s>continuation" not in legend.text()
    legend.linkActivated.emit(f"group:{word}")  # a click while one group is alone adds another
    assert set(v.points.shown_ids.tolist()) == set(ids[(kinds == cont) | (kinds == word)].tolist())
    v.info.group_clicked.emit(cont, True)
    v.info.group_clicked.emit(cont, True)  # shift-click on the group shown alone: every group again
    assert len(v.points.shown_ids) == len(ids)
    legend.linkActivated.emit(f"group:{word}")
    v.colour.choose("length")  # another colouring: its groups are others, nothing stays hidden
    assert len(v.points.shown_ids) == len(ids)
