"""Colour by token kind, length or row norm in the Projection view (pytest-qt,
offscreen): the groups drawn are the core's metadata for exactly the drawn
ids, and the legend names them."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.sources import open_table
from explorer.core.tokens.meta import KINDS
from explorer.ui.projection import ProjectionView
from tests.support.ui_helpers import standalone_view

TIMEOUT = 60_000


@pytest.fixture
def view(qtbot):
    yield from standalone_view(qtbot, ProjectionView)


def test_colour_by_kind_length_and_norm_on_minilm(qtbot, view):
    v, state, _ = view
    table = open_table("minilm")
    state.set_table(table)
    qtbot.waitUntil(lambda: v.result is not None and state.token_meta.value is not None, timeout=TIMEOUT)
    assert v.colour.colour_by == "none" and len(v.plot.cloud.colors()) == 1  # MiniLM has no classes
    meta, ids = state.token_meta.value, v.result.ids
    v.colour.choose("kind")
    np.testing.assert_array_equal(v.plot.cloud.groups(), meta.kind[ids] + 1)
    assert len(v.plot.cloud.colors()) == len(KINDS) + 1
    legend = v.info.legend.text()
    assert "Token kind" in legend and all(k in legend for k in KINDS)
    assert v.plot.cloud.groups()[table.tokenizer.id_of("##ing")] == KINDS.index("continuation") + 1
    v.colour.choose("norm")
    groups = v.plot.cloud.groups()
    counts = np.bincount(groups, minlength=7)[1:]
    assert counts.sum() == len(ids) and counts.min() > 0.9 * len(ids) / 6  # six bins of equal counts
    norms = np.linalg.norm(table.matrix()[ids].astype(np.float64), axis=1)
    assert norms[groups == 1].max() <= norms[groups == 6].min()  # the bins are ordered by norm
    v.colour.choose("length")
    assert v.plot.cloud.groups()[table.tokenizer.id_of("queen")] == 5  # 5 characters: the "4–5" bin (0 is group 1)
    assert "≥ 9 characters" in v.info.legend.text()
