"""Label placement (explorer.core.projection.label_layout): no two labels overlap, none
leaves the plot, the most important ones are placed first."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.projection.label_layout import place_centred_labels, place_labels

BOUNDS = (0.0, 0.0, 400.0, 300.0)


def _assert_valid(placed, bounds=BOUNDS):
    x0, y0, x1, y1 = bounds
    for p in placed:
        assert x0 <= p.left and p.right <= x1 and y0 <= p.top and p.bottom <= y1
    for i, a in enumerate(placed):
        for b in placed[i + 1:]:
            assert not a.overlaps(b), (a, b)


def test_a_lone_label_sits_above_right_of_its_point():
    [p] = place_labels([[100, 100]], [[40, 12]], BOUNDS, gap=5, lift=2)
    assert (p.index, p.left, p.top, p.width, p.height) == (0, 105, 86, 40, 12)
    assert (p.dx, p.dy) == (5, -14)


def test_crowded_points_take_the_other_sides_then_give_up():
    # four labels on one point: the four places around it; a fifth has no room
    placed = place_labels([[200, 150]] * 5, [[40, 12]] * 5, BOUNDS)
    assert [p.index for p in placed] == [0, 1, 2, 3]
    assert {(p.dx > 0, p.dy < 0) for p in placed} == {(True, True), (False, True), (True, False), (False, False)}
    _assert_valid(placed)


def test_labels_stay_inside_near_the_edges_and_priority_wins():
    # at the right edge the label goes left; at the top it goes below
    right, top = place_labels([[395, 150], [100, 3]], [[40, 12], [40, 12]], BOUNDS)
    assert right.right <= 400 and right.dx < 0
    assert top.top >= 0 and top.dy > 0
    # two labels competing for one place: the first given keeps it
    a, b = place_labels([[100, 100], [101, 100]], [[60, 12], [60, 12]], BOUNDS)
    assert (a.index, a.dx) == (0, 5) and b.dx < 0


def test_limit_and_nonfinite_anchors():
    placed = place_labels([[10, 100], [np.nan, 5], [300, 200], [200, 50]], [[30, 10]] * 4, BOUNDS, limit=2)
    assert [p.index for p in placed] == [0, 2]


def test_centred_labels_sit_on_their_points_or_move_the_least():
    # a lone name: centred on its point
    [p] = place_centred_labels([[100, 100]], [[40, 12]], BOUNDS)
    assert (p.left, p.top, p.dx, p.dy) == (80, 94, -20, -6)
    # three names on one point: the first centred, the others one step above and below
    # (a vertical step is preferred to a sideways one)
    a, b, c = place_centred_labels([[200, 150]] * 3, [[40, 12]] * 3, BOUNDS, spacing=1)
    assert (a.left, a.top) == (180, 144)
    assert {b.top, c.top} == {144 - 13, 144 + 13} and b.left == c.left == 180
    # near an edge the name moves inside; with no free place within reach, left out
    [edge] = place_centred_labels([[5, 150]], [[40, 12]], BOUNDS)
    assert edge.left >= 0
    crowded = place_centred_labels([[200, 150]] * 80, [[40, 12]] * 80, BOUNDS, reach=(1, 1))
    assert len(crowded) == 3  # one column: a half-width move still covers the centre column
    _assert_valid(crowded)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(-20, 420), st.floats(-20, 320), st.floats(4, 120), st.floats(6, 20)),
                min_size=0, max_size=80))
def test_never_overlapping_never_outside(labels):
    anchors = [(x, y) for x, y, _, _ in labels]
    sizes = [(w, h) for _, _, w, h in labels]
    for place in (place_labels, place_centred_labels):
        placed = place(np.array(anchors).reshape(-1, 2), np.array(sizes).reshape(-1, 2), BOUNDS)
        _assert_valid(placed)
        assert [p.index for p in placed] == sorted(p.index for p in placed)
