"""The lasso on the 2D projection (pytest-qt, offscreen): a path drawn on the
plot makes the drawn points inside it a group, listed, colourable, marked in
the exports and handed to the Similarity view."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from explorer.core.sources import open_table
from explorer.ui.projection import ProjectionView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def _square_around_the_middle(v):
    xy = v.plot.cloud.positions()
    (x0, y0), (x1, y1) = np.percentile(xy, 35, axis=0), np.percentile(xy, 65, axis=0)
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), xy


def test_a_lasso_makes_a_group_listed_coloured_exported_and_compared(qtbot, view, tmp_path):
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.token_meta.value is not None, timeout=TIMEOUT)
    panel = v.lasso.panel
    assert not v.lasso.item.isVisible() and not panel.compare_button.isEnabled()
    panel.toggle.click()
    assert v.lasso.item.isVisible()
    square, xy = _square_around_the_middle(v)
    v.lasso.item.close_path(square)  # the end of a drag along the square
    ids = v.plot.cloud_ids()
    (x0, y0), (x1, y1) = square[0], square[2]
    want = ids[(xy[:, 0] > x0) & (xy[:, 0] < x1) & (xy[:, 1] > y0) & (xy[:, 1] < y1)]
    assert len(want) > 3
    np.testing.assert_array_equal(v.points.chosen_ids, np.sort(want))
    assert f"{len(want):,} token" in panel.label.text() and panel.list.count() == min(len(want), 200)
    assert panel.list.item(0).text().startswith(state.table.shown_piece(int(np.sort(want)[0])).text)
    v.colour.choose("lasso")  # a colouring: the group against the rest
    inside = np.isin(ids, want)
    np.testing.assert_array_equal(v.plot.cloud.groups(), np.where(inside, 1, 0))
    v.export_coordinates_csv(str(tmp_path / "c.csv"))
    import csv

    rows = list(csv.DictReader(open(tmp_path / "c.csv", encoding="utf-8")))
    assert {int(r["id"]) for r in rows if r["lasso"] == "1"} == set(want.tolist())
    panel.compare_button.click()
    assert state.extra_ids == np.sort(want).tolist()[:200]
    panel.clear_button.click()
    assert len(v.points.chosen_ids) == 0 and not panel.list.isVisible()


def test_a_drag_on_the_plot_draws_the_lasso(qtbot, view):
    v, state, _ = view
    state.set_table(open_table("default"))
    qtbot.waitUntil(lambda: v.result is not None and state.jobs.token_meta.value is not None, timeout=TIMEOUT)
    with qtbot.waitSignal(v.plot.settled, timeout=TIMEOUT):  # the view's range is final: corners map to data
        v.plot.settle_soon()
    v.lasso.panel.toggle.click()
    widget = v.plot.viewport() if hasattr(v.plot, "viewport") else v.plot
    before = v.plot.view_rect()
    vb = v.plot.plot_item.getViewBox()
    square, _ = _square_around_the_middle(v)
    corners = [v.plot.mapFromScene(vb.mapViewToScene(QPointF(*p))) for p in square] + [None]
    corners[-1] = corners[0]
    with qtbot.waitSignal(v.lasso.item.drawn, timeout=5_000) as blocker:
        # 1 s after the last click of an earlier test (QTest's clock): a press, not the second half of a double click
        QTest.mousePress(widget, Qt.LeftButton, Qt.NoModifier, corners[0], 1000)
        for a, b in zip(corners[:-1], corners[1:]):
            for t in np.linspace(0.2, 1.0, 5):  # a hand's drag: many small moves, some time apart
                _move(widget, a + (b - a) * float(t))
                qtbot.wait(20)
        QTest.mouseRelease(widget, Qt.LeftButton, Qt.NoModifier, corners[-1])
    path = blocker.args[0]
    assert v.plot.view_rect() == before  # nothing moved the view during the drag
    assert len(path) >= 4
    np.testing.assert_allclose(path.min(0), square.min(0), rtol=0.05, atol=0.05 * np.ptp(square, axis=0).max())
    assert len(v.points.chosen_ids) > 3


def _move(widget, pos):
    """A mouse move with the left button held (QTest.mouseMove sends none)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    global_pos = widget.mapToGlobal(pos)
    ev = QMouseEvent(QEvent.MouseMove, QPointF(pos), QPointF(global_pos), Qt.NoButton, Qt.LeftButton,
                     Qt.NoModifier)
    QApplication.sendEvent(widget, ev)
