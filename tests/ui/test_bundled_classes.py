"""Every class of the bundled language gets a colour of its own."""

from __future__ import annotations

from explorer.core.sources import open_table
from explorer.core.sources.loading import ClassIndex
from explorer.ui.style import class_color


def test_each_class_of_the_default_model_has_its_own_colour(qtbot):
    classes = ClassIndex.from_table(open_table("default"))
    n = len(classes.names)
    assert n >= 10
    assert len({class_color(i) for i in range(n)}) == n
