"""The window scripts `bench --gui` runs in child processes still drive the
real app (a rename once made the quit-during-load child fail silently)."""

from __future__ import annotations

import math

from explorer.benchmarks.gui import BIG_SPEC, quit_during_load, time_to_interactive


def test_quitting_during_a_load_ends_the_process():
    seconds = quit_during_load(BIG_SPEC)  # raises if the child never closed its window mid-load
    assert math.isfinite(seconds) and seconds >= 0


def test_the_window_comes_up_on_the_bundled_model():
    assert time_to_interactive("default") > 0  # raises if the child never reported READY
