"""The Projection view's exports for other tools (pytest-qt, offscreen): the
layout on the axes shown goes to TensorBoard's Embedding Projector folder and
to Embedding Atlas's parquet with the view's classes and filter; a path that
cannot be written is said in the view, not raised."""

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


def test_layout_exports_carry_the_axes_shown_classes_and_filter(qtbot, view, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None and state.token_meta.value is not None, timeout=TIMEOUT)
    res = v.result
    v.set_axes(2, 1)  # PC3 across, PC2 up
    v.search.search("s")
    qtbot.waitUntil(lambda: v.points.hits is not None, timeout=TIMEOUT)
    v.points.show.choose("hits")
    v._on_export_chosen("atlas", str(tmp_path / "a.parquet"))
    got = pq.read_table(tmp_path / "a.parquet").to_pydict()
    fitted = np.asarray(got["fitted"])
    assert np.asarray(got["id"])[fitted].tolist() == res.ids.tolist()
    np.testing.assert_array_equal(np.c_[got["x"], got["y"]][fitted], res.coords[:, [2, 1]])
    assert [got["class"][k] for k in range(len(res.ids))] == [state.classes.name_of(i) for i in res.ids.tolist()]
    shown = {i for i, s in zip(got["id"], got["shown"]) if s}
    assert shown == set(np.intersect1d(res.ids, v.points.hits.ids).tolist()) and shown
    assert "embedding-atlas" in v.info.hover_label.text()
    v._on_export_chosen("projector", str(tmp_path / "proj"))
    layout = np.loadtxt(tmp_path / "proj" / "layout.tsv", delimiter="\t", dtype=np.float32)
    np.testing.assert_allclose(layout[: len(res.ids), :2], res.coords[:, [2, 1]], rtol=1e-6)
    assert (layout[:, 2] == 0).all()  # the projector's own PCA needs a third column
    vectors = np.fromfile(tmp_path / "proj" / "vectors.bytes", "<f4").reshape(len(got["id"]), -1)
    np.testing.assert_array_equal(vectors, state.table.rows(got["id"]).astype(np.float32))
    assert "tensorboard --logdir" in v.info.hover_label.text()


def test_an_export_that_cannot_be_written_is_said_in_the_view(qtbot, view, tmp_path):
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None, timeout=TIMEOUT)
    v._on_export_chosen("atlas", str(tmp_path / "missing" / "a.parquet"))
    assert "Could not export" in v.info.hover_label.text()
