"""The user's own metadata on the projection (pytest-qt, offscreen): a TSV
keyed by id colours the points by its columns, its groups filter them (Show
and the legend), column=value searches it; a bad file is said, not raised."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def test_a_metadata_file_colours_filters_and_searches(qtbot, view, tmp_path):
    v, state, _ = view
    table = open_table("default")
    state.set_table(table)
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.token_meta.value is not None, timeout=TIMEOUT)
    ids = v.result.ids
    parity = {i: ("even" if i % 2 == 0 else "odd") for i in range(0, table.vocab_size, 3)}  # a third of the rows
    lines = ["id\tparity\tthird"] + [f"{i}\t{p}\t{i / 3:.1f}" for i, p in parity.items()]
    (tmp_path / "mine.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with qtbot.waitSignal(v.user_metadata.loaded, timeout=TIMEOUT) as read:
        assert v.user_metadata.load(str(tmp_path / "mine.tsv"))
        assert v.points.user is None and "Reading mine.tsv" in v.info.hover_label.text()  # read in a worker
    assert read.args == [True]
    assert v.colour.colour_by == "user:parity" and "mine.tsv" in v.info.hover_label.text()
    labels = v.points.groups.labels
    want = np.array([labels.index(parity[i]) + 1 if i in parity else 0 for i in ids.tolist()])
    np.testing.assert_array_equal(v.plot.cloud.groups(), want)  # 0: faint, no value in the file
    assert "even" in v.info.legend.text() and 'href="group:' in v.info.legend.text()
    v.points.show.choose(f"group:{labels.index('odd')}")  # the Show filter offers the file's groups
    assert set(v.points.shown_ids.tolist()) == {i for i in ids.tolist() if parity.get(i) == "odd"}
    v.points.show_all()
    v.search.search("parity=even")
    qtbot.waitUntil(lambda: v.points.hits is not None and v.points.hits.query == "parity=even", timeout=TIMEOUT)
    assert v.points.hits.ids.tolist() == sorted(i for i, p in parity.items() if p == "even")
    v.colour.choose("user:third")  # a number column: bins in order
    codes = v.plot.cloud.groups()
    named = np.array([i in parity for i in ids.tolist()])
    assert (np.diff(codes[named][np.argsort(ids[named])]) >= 0).all()


def test_a_bad_metadata_file_is_said(qtbot, view, tmp_path):
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None, timeout=TIMEOUT)
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with qtbot.waitSignal(v.user_metadata.loaded, timeout=TIMEOUT) as read:
        assert v.user_metadata.load(str(tmp_path / "bad.csv"))
    assert read.args == [False]
    assert "no id or piece column" in v.info.hover_label.text() and v.points.user is None


def test_the_same_file_loaded_again_is_read_again(qtbot, view, tmp_path):
    """The user edits the file and loads it again: the new columns are shown (a request keyed by
    the path was taken for the last one and never read the file)."""
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None, timeout=TIMEOUT)
    path = tmp_path / "mine.tsv"
    for column in ("first", "second"):
        path.write_text(f"id\t{column}\n" + "".join(f"{i}\tx{i % 2}\n" for i in range(20)), encoding="utf-8")
        with qtbot.waitSignal(v.user_metadata.loaded, timeout=TIMEOUT) as read:
            assert v.user_metadata.load(str(path))
        assert read.args == [True] and v.colour.colour_by == f"user:{column}"
