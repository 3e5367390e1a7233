"""Clocks that play a quiet or a busy machine exactly (for the timing code's
tests: no test may depend on how fast or how loaded the machine is)."""

from __future__ import annotations

from explorer.core.bench.timing import Clocks

#: one tick of the played clocks, seconds (far above the busy test's slack)
STEP = 1e-3


class PlayedMachine:
    """A wall clock and a CPU clock for timed calls (each call reads cpu, wall,
    wall, cpu). Every CPU read advances the CPU clock by :data:`STEP`; a wall
    read advances the wall clock by STEP while the machine is quiet and by
    ``10 * STEP`` while it is busy (the calling thread waited off the CPU).

    ``busy_calls``: how many timed calls (counted by their first wall read)
    are busy, from the start; ``None``: every call.
    """

    def __init__(self, busy_calls: int | None = 0):
        self.busy_calls = busy_calls
        self.calls = 0
        self._wall = 0.0
        self._cpu = 0.0
        self._reads = 0

    @property
    def busy(self) -> bool:
        return self.busy_calls is None or self.calls <= self.busy_calls

    def wall(self) -> float:
        self._reads += 1
        if self._reads % 2 == 1:  # the first read of a call: a new call
            self.calls += 1
        else:
            self._wall += STEP * (10 if self.busy else 1)
        return self._wall

    def cpu(self) -> float:
        self._cpu += STEP
        return self._cpu

    @property
    def clocks(self) -> Clocks:
        return Clocks(wall=self.wall, cpu=self.cpu)


class SetClock:
    """A clock that stands still until a test moves ``now`` (the idle builder's tests)."""

    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now
