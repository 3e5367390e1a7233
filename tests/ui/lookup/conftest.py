"""Fixtures of the lookup view's tests."""

from __future__ import annotations

import pytest

from explorer.core.lookup import animation
from explorer.ui.lookup import LookupView
from tests.support.ui_helpers import standalone_view


@pytest.fixture
def manual_view(qtbot):
    """(state, view): a standalone LookupView whose animation clock moves only by hand."""
    gen = standalone_view(qtbot, LookupView, clock=animation.ManualClock(1000.0))
    view, state, _runner = next(gen)
    yield state, view
    next(gen, None)
