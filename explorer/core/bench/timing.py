"""Timing one operation (explorer.core.units writes the time). No Qt here."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["best_time", "Timed", "Clocks", "REAL_CLOCKS", "interleaved_times", "iter_interleaved_times", "BUSY_FACTOR",
           "BUSY_SLACK_S"]

T = TypeVar("T")

#: a call whose wall time exceeds its own thread's CPU time by this factor (plus the slack) was
#: kept off the CPU: another process had the core, or another thread held the GIL
BUSY_FACTOR = 1.5
BUSY_SLACK_S = 20e-6


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


@dataclass(frozen=True)
class Clocks:
    """The two clocks a timing reads: ``wall`` (seconds elapsed) and ``cpu``
    (the calling thread's CPU seconds). A test passes clocks of its own to
    play a busy or a quiet machine exactly, whatever the machine it runs on."""

    wall: Callable[[], float] = time.perf_counter
    cpu: Callable[[], float] = time.thread_time


REAL_CLOCKS = Clocks()


@dataclass(frozen=True)
class Timed:
    """The runs of one operation.

    Attributes
    ----------
    best_s : float
        Shortest wall time of a call, seconds.
    median_s : float
        Median wall time of the calls (the spread: ``median_s / best_s``).
    cpu_s : float
        CPU time of the calling thread during that shortest call (user + system).
    result : object
        What the last call returned.
    """

    best_s: float
    median_s: float
    cpu_s: float
    result: object = None

    @property
    def disturbed(self) -> bool:
        """Even the shortest call spent most of its time off the CPU: the machine was busy."""
        return self.best_s > BUSY_FACTOR * self.cpu_s + BUSY_SLACK_S

    def merged(self, other: Timed) -> Timed:
        """The better of two measurements of the same operation (the shorter best call)."""
        return self if self.best_s <= other.best_s else other


def iter_interleaved_times(fns: Mapping[str, Callable[[], object]], rounds: int,
                           calls: Mapping[str, int] | None = None, clocks: Clocks = REAL_CLOCKS) -> Iterator[int]:
    """Time several operations in interleaved rounds: each round calls every
    ``fn`` in turn (``calls[name]`` times, default once), so that a busy
    spell of the machine hits all of them rather than one.

    Every call is timed by the wall clock and by the calling thread's CPU
    clock (``time.thread_time``): when they differ the thread was waiting
    (preempted by another process, or for the GIL), which
    :attr:`Timed.disturbed` reports. Run single-threaded work here (torch at
    one intra-op thread): the CPU clock sees only the calling thread.

    A generator: yields the number of rounds done after each one (stop it
    there to cancel), returns a dict name -> :class:`Timed`. ``clocks``
    replaces the two clocks (:class:`Clocks`).
    """
    calls = dict(calls or {})
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    results = {name: fn() for name, fn in fns.items()}  # warm-up (allocations, kernel choice)
    for done in range(max(1, int(rounds))):
        for name, fn in fns.items():
            for _ in range(max(1, int(calls.get(name, 1)))):
                c0 = clocks.cpu()
                t0 = clocks.wall()
                results[name] = fn()
                t1 = clocks.wall()
                runs[name].append((t1 - t0, clocks.cpu() - c0))
        yield done + 1
    out = {}
    for name, timed in runs.items():
        wall, cpu = min(timed)
        out[name] = Timed(wall, statistics.median(w for w, _ in timed), cpu, results[name])
    return out


def interleaved_times(fns: Mapping[str, Callable[[], object]], rounds: int,
                      calls: Mapping[str, int] | None = None, clocks: Clocks = REAL_CLOCKS) -> dict[str, Timed]:
    """:func:`iter_interleaved_times` run to its end."""
    gen = iter_interleaved_times(fns, rounds, calls, clocks)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
