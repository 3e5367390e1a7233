"""Timing one operation (explorer.core.units writes the time). No Qt here."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["best_time"]

T = TypeVar("T")


def best_time(fn: Callable[[], T], repeats: int, clock: Callable[[], float] = time.perf_counter) -> tuple[float, T]:
    """The shortest time of ``repeats`` calls of ``fn`` after one warm-up call,
    in seconds of ``clock``.

    The minimum, not the median: on a busy 2-core machine a microsecond
    gather sometimes waits a whole scheduler slice (8 ms) for torch's second
    thread; the minimum is the cost of the operation itself.

    Returns
    -------
    (seconds, result of the last call)
    """
    out = fn()  # warm-up (allocations, kernel choice)
    best = float("inf")
    for _ in range(max(1, int(repeats))):
        t = clock()
        out = fn()
        best = min(best, clock() - t)
    return best, out
