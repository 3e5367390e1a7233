"""The projection's density map (pytest-qt, offscreen): on by default for big
layouts, computed off the GUI thread for the cloud drawn and the view's range,
gone with the model it was drawn for."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from explorer.ui.projection.density_layer import CLOUD_OPACITY
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def load(qtbot, v, state, spec):
    table = open_table(spec)
    state.set_table(table)
    qtbot.waitUntil(lambda: v.result is not None and v.result.spec == table.spec, timeout=TIMEOUT)
    return table


def drawn_map(qtbot, v):
    d = v.plot.density
    qtbot.waitUntil(lambda: d.value is not None and d.image.isVisible(), timeout=TIMEOUT)
    return d.value


def test_a_big_layout_is_drawn_as_a_map(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "random:12000x16")
    d = v.plot.density
    assert d.shown and d.toggle.isVisible()
    assert d.toggle.toolTip()
    m = drawn_map(qtbot, v)
    g = m.grid
    # the grid counts the points drawn inside its rectangle, and the rectangle covers the view's data
    xy = v.plot.cloud.positions()
    inside = ((xy[:, 0] >= g.x0) & (xy[:, 0] <= g.x1) & (xy[:, 1] >= g.y0) & (xy[:, 1] <= g.y1)).sum()
    assert g.n_in_range == inside == len(xy)  # zoomed out: every point
    assert g.counts.sum() == pytest.approx(inside, rel=1e-9)
    assert v.plot.cloud.opacity() == pytest.approx(CLOUD_OPACITY)
    assert d.contours.isVisible() and len(m.contours) == len(g.levels) >= 3
    # the image sits where the grid is
    r = d.image.mapRectToView(d.image.boundingRect())
    assert (r.left(), r.right()) == pytest.approx((g.x0, g.x1), rel=1e-6, abs=1e-9)
    assert sorted((r.top(), r.bottom())) == pytest.approx((g.y0, g.y1), rel=1e-6, abs=1e-9)

    d.set_shown(False)
    assert not d.image.isVisible() and not d.contours.isVisible()
    assert d.value is None and v.plot.cloud.opacity() == 1.0


def test_a_small_layout_has_no_map_until_asked(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "default")
    d = v.plot.density
    assert not d.shown and not d.image.isVisible()
    assert v.plot.cloud.opacity() == 1.0
    d.toggle.click()  # the user asks
    assert drawn_map(qtbot, v).grid.n_in_range == len(v.result.ids)
    # the user's choice stays for the next model, however big
    load(qtbot, v, state, "random:12000x16")
    assert d.shown


def test_zooming_in_maps_the_new_range_finer(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "random:12000x16")
    whole = drawn_map(qtbot, v).grid
    vb = v.plot.plot_item.getViewBox()
    rect = vb.viewRect()
    cx, cy = rect.center().x(), rect.center().y()
    w, h = rect.width() / 8, rect.height() / 8
    vb.setRange(xRange=(cx - w / 2, cx + w / 2), yRange=(cy - h / 2, cy + h / 2), padding=0)
    d = v.plot.density
    qtbot.waitUntil(lambda: d.value is not None and d.value.grid is not whole
                    and d.value.grid.x1 - d.value.grid.x0 < (whole.x1 - whole.x0) / 2, timeout=TIMEOUT)
    g = d.value.grid
    # the new grid covers the view, with cells smaller than before
    assert g.x0 <= cx - w / 2 and g.x1 >= cx + w / 2
    assert g.cell[0] < whole.cell[0] / 2
    assert g.n_in_range < len(v.result.ids)


def test_a_new_model_clears_the_map_at_once(qtbot, view):
    v, state, _ = view
    load(qtbot, v, state, "random:12000x16")
    drawn_map(qtbot, v)
    state.set_table(open_table("toy:cat-sat"))
    d = v.plot.density
    assert not d.image.isVisible() and d.value is None


def test_cluster_labels_name_the_layouts_clusters(qtbot, view):
    v, state, _ = view
    table = load(qtbot, v, state, "default")
    clusters = v.plot.clusters
    assert not clusters.toggle.isChecked() and clusters.toggle.toolTip()
    clusters.toggle.click()
    qtbot.waitUntil(lambda: clusters.value is not None, timeout=TIMEOUT)
    res = clusters.value
    assert 1 <= len(res.centres) <= 12 and res.sizes.sum() == len(v.result.ids)
    v.plot.place_now()
    shown = dict(v.labelled())
    # each cluster's label names its most central tokens (as many as do not overlap more important labels)
    expected = {}
    for members in res.central:
        ids = [int(v.result.ids[i]) for i in members]  # the cloud keeps the result's order
        expected[ids[0]] = " · ".join(table.shown_piece(t).short() for t in ids)
    placed = {tid: text for tid, text in shown.items() if tid in expected and text == expected[tid]}
    assert len(placed) >= 1
    # its centre lies among its members
    xy = v.plot.cloud.positions()
    for centre, members in zip(res.centres, res.central):
        assert np.linalg.norm(xy[members[0]] - centre) <= np.linalg.norm(xy - centre, axis=1).max()
    clusters.toggle.click()
    v.plot.place_now()
    assert not any(text == expected.get(tid) for tid, text in v.labelled())
