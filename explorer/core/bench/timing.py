"""Timing one operation, and writing times and sizes with units. No Qt here."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["best_time", "format_seconds", "format_bytes"]

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


def format_seconds(s: float | None) -> str:
    """Seconds with a unit that suits their size: 12.3 µs, 4.56 ms, 7.89 s."""
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def format_bytes(n: float | None) -> str:
    """Megabytes and the exact count: 12.3 MB (12,345,678 bytes)."""
    if n is None:
        return "-"
    return f"{n / 1e6:,.1f} MB ({int(n):,} bytes)"
