"""The window scripts `bench --gui` runs in child processes still drive the
real app (a rename once made the quit-during-load child fail silently)."""

from __future__ import annotations

import math

from explorer.benchmarks.gui import BIG_SPEC, launch_and_open, quit_during_load


def test_quitting_during_a_load_ends_the_process():
    seconds = quit_during_load(BIG_SPEC)  # raises if the child never closed its window mid-load
    assert math.isfinite(seconds) and seconds >= 0


def test_the_window_comes_up_from_the_command_line_on_the_bundled_model():
    """The child runs ``python -m explorer --model default`` (the command's own code) and reports
    the seconds to the drawn model and the longest stall after the window showed."""
    seconds, stall_ms = launch_and_open("default", settle_s=0.1)  # raises if it never reported both
    assert 0 < seconds < 300 and 0 < stall_ms and math.isfinite(stall_ms)  # no bound between two timings
