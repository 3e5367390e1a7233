"""The PCA path of position rows: coloured from the first position to the last."""

from __future__ import annotations

import warnings

import numpy as np
import pyqtgraph as pg
import pytest

from explorer.app import make_app
from explorer.core.input_layer import PathPCA
from explorer.core.input_layer.report import positions_report
from explorer.core.sources import open_table
from explorer.ui.positions.path_panel import PATH_COLOURS, PathPanel, path_colour_steps
from explorer.ui.style import SEQUENTIAL
from tests.support.ui_helpers import settle_layout


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 1000, 8192])
def test_the_colour_steps_run_from_the_first_colour_to_the_last_without_going_back(n):
    steps = path_colour_steps(n)
    assert len(steps) == n and steps[0] == 0 and steps.max() <= PATH_COLOURS - 1
    assert (np.diff(steps) >= 0).all()
    if n > 1:
        assert steps[-1] == PATH_COLOURS - 1
    if n >= PATH_COLOURS:
        assert len(np.unique(steps)) == PATH_COLOURS  # every colour of the ramp is used


def test_a_long_path_is_drawn_with_a_few_shared_colours_in_order(qtbot):
    """8,192 positions (a long learned position table) each had a colour of its own: the
    scatter drew 8,192 symbols on the GUI thread (1.1 s). The ramp now has PATH_COLOURS steps."""
    make_app()
    panel = PathPanel()
    qtbot.addWidget(panel)
    n = 8192
    pts = np.cumsum(np.random.default_rng(0).standard_normal((n, 2)), axis=0)
    panel.set_path(PathPCA(points=pts, explained=(0.5, 0.2)), "PCA path")
    brushes = panel.points.data["brush"]
    rgb = np.array([b.color().getRgb() for b in brushes])
    assert len(np.unique(rgb, axis=0)) <= PATH_COLOURS and panel.n_points == n
    # the colormap's own colours, in its order: a position never takes an earlier one than the one before it
    ramp = [c.getRgb() for c in pg.colormap.get(SEQUENTIAL).map(np.linspace(0, 1, PATH_COLOURS), mode="qcolor")]
    assert tuple(rgb[0]) == ramp[0] and tuple(rgb[-1]) == ramp[-1]
    index = {c: k for k, c in enumerate(ramp)}
    taken = np.array([index[tuple(c)] for c in rgb])
    assert (np.diff(taken) >= 0).all() and taken[-1] == PATH_COLOURS - 1


@pytest.mark.parametrize("spec", ["random:300x1", "random:300x2"])
def test_a_path_with_a_flat_component_gets_a_readable_range_and_paints_without_warnings(qtbot, spec):
    """A table one value wide has no second component: auto-range gave PC 2 its float noise
    (an axis from -5e-306 to 0, whose transform overflowed to inf while painting)."""
    path = positions_report(open_table(spec)).sinusoidal_path
    make_app()
    panel = PathPanel()
    qtbot.addWidget(panel)
    panel.resize(400, 300)
    panel.show()
    qtbot.waitExposed(panel)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        panel.set_path(path, "path")
        settle_layout()
        panel.grab()
    (x0, x1), (y0, y1) = panel.plot.vb.viewRange()
    pts = path.points.astype(np.float64)
    assert x0 <= pts[:, 0].min() and pts[:, 0].max() <= x1 and y0 <= pts[:, 1].min() and pts[:, 1].max() <= y1
    spread = np.ptp(pts, axis=0)
    assert (y1 - y0) >= 0.5 * spread.max() and (x1 - x0) >= 0.5 * spread.max()  # no axis shrunk to its noise
