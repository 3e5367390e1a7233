"""Token groups (explorer.core.tokens.groups): what the projection colours by
and filters on, checked against the metadata it groups."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.health import health_report
from explorer.core.health.report import CATEGORIES
from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table
from explorer.core.sources.loading import ClassIndex
from explorer.core.tokens.groups import ID_BINS, token_groups
from explorer.core.tokens.meta import KINDS, iter_token_metadata


@pytest.fixture(scope="module")
def bundled():
    t = open_table("default")
    return t, run_to_end(iter_token_metadata(t)), health_report(t), ClassIndex.from_table(t)


def test_id_range_is_ten_bins_of_equal_width():
    ids = np.arange(30_522)
    g = token_groups("id_range", ids, vocab_size=30_522)
    assert len(g.labels) == ID_BINS and g.ordered
    np.testing.assert_array_equal(g.codes, np.minimum(ids * ID_BINS // 30_522, ID_BINS - 1))
    assert np.abs(g.counts() - 3052).max() <= 1 and g.labels[0] == "0–3,052" and g.labels[-1].endswith("30,521")
    assert token_groups("id_range", [0, 5], vocab_size=6).codes.tolist() == [0, 8]  # bins narrower than one id


def test_health_waits_for_the_check_then_groups_by_round_trip_category(bundled):
    t, meta, report, classes = bundled
    ids = np.arange(t.vocab_size)
    waiting = token_groups("health", ids, vocab_size=t.vocab_size)
    assert waiting.labels == () and (waiting.codes == -1).all() and "has not run" in waiting.missing
    g = token_groups("health", ids[::-1], vocab_size=t.vocab_size, health=report)
    np.testing.assert_array_equal(g.codes, report.categories[ids[::-1]])
    assert dict(zip(CATEGORIES, g.counts().tolist())) == report.category_counts()
    assert g.counts()[CATEGORIES.index("special")] > 0  # the bundled model's <pad>, <unk>...


def test_kind_length_norm_classes_follow_the_metadata(bundled):
    t, meta, _report, classes = bundled
    ids = np.arange(0, t.vocab_size, 3)
    kind = token_groups("kind", ids, vocab_size=t.vocab_size, meta=meta)
    assert kind.labels == KINDS and (kind.codes == meta.kind[ids]).all()
    assert token_groups("kind", ids, vocab_size=t.vocab_size).missing  # metadata not computed yet
    norm = token_groups("norm", ids, vocab_size=t.vocab_size, meta=meta)
    assert norm.counts().sum() == len(ids)
    cls = token_groups("classes", ids, vocab_size=t.vocab_size, classes=classes)
    np.testing.assert_array_equal(cls.codes, np.where(classes.of[ids] >= 0, classes.of[ids], -1))
    assert cls.mask(0).sum() == cls.counts()[0]
    assert token_groups("classes", ids, vocab_size=t.vocab_size).missing == "This model has no classes."
    assert token_groups("none", ids, vocab_size=t.vocab_size).labels == ()


def test_visible_mask_combines_group_hits_and_isolation():
    from explorer.core.projection.point_filter import SHOW_ALL, PointFilter, visible_mask

    ids = np.arange(100, 200)
    groups = token_groups("id_range", ids, vocab_size=1000)  # ids 100..199 are bin 1
    assert visible_mask(ids, SHOW_ALL).all() and SHOW_ALL.shows_all
    assert visible_mask(ids, PointFilter(group=1), groups).all()
    assert not visible_mask(ids, PointFilter(group=2), groups).any()
    assert not visible_mask(ids, PointFilter(group=0)).any()  # no groups known: nothing to show
    hits = np.array([5, 150, 160])
    np.testing.assert_array_equal(ids[visible_mask(ids, PointFilter(hits_only=True), hits=hits)], [150, 160])
    iso = PointFilter(isolated=(160, 170, 7))
    np.testing.assert_array_equal(ids[visible_mask(ids, iso, hits=hits)], [160, 170])
    both = PointFilter(hits_only=True, isolated=(160, 170))
    np.testing.assert_array_equal(ids[visible_mask(ids, both, groups, hits)], [160])


def test_hidden_groups_toggle_and_a_group_alone():
    from explorer.core.projection.point_filter import SHOW_ALL, visible_mask

    ids = np.arange(0, 1000, 7)
    groups = token_groups("id_range", ids, vocab_size=1000)  # ten bins of 100 ids
    bins = ids // 100
    off = SHOW_ALL.toggled(3, 10).toggled(5, 10)
    assert off.hidden == (3, 5) and not off.shows_all
    np.testing.assert_array_equal(ids[visible_mask(ids, off, groups)], ids[(bins != 3) & (bins != 5)])
    assert off.toggled(3, 10).toggled(5, 10).shows_all  # clicked again: back
    alone = off.alone(4)
    assert (alone.group, alone.hidden) == (4, ())
    np.testing.assert_array_equal(ids[visible_mask(ids, alone, groups)], ids[bins == 4])
    two = alone.toggled(8, 10)  # one group alone, another clicked on: those two
    np.testing.assert_array_equal(ids[visible_mask(ids, two, groups)], ids[(bins == 4) | (bins == 8)])
    assert alone.alone(4).shows_all  # shift-click on the group shown alone: all again
