"""Helpers for the core's generator jobs: they ``yield (fraction, message)``
for progress and ``return`` their result (see :mod:`explorer.workers`).
No Qt here."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TypeVar

__all__ = ["run_to_end", "scaled"]

T = TypeVar("T")


def run_to_end(job: Generator[object, None, T], progress: Callable[[object], None] | None = None) -> T:
    """Run a job without a worker (command line, tests); return its result.

    ``progress`` is called with everything the job yields."""
    while True:
        try:
            step = next(job)
        except StopIteration as stop:
            return stop.value
        if progress is not None:
            progress(step)


def scaled(job: Generator[tuple[float, str], None, T], lo: float, hi: float) -> Iterator[tuple[float, str]]:
    """Re-yield a sub-job's progress mapped into [lo, hi]; ``yield from`` it
    to get the sub-job's result."""
    while True:
        try:
            fraction, message = next(job)
        except StopIteration as stop:
            return stop.value
        yield lo + (hi - lo) * float(fraction), message
