"""A clock for training tests: time moves only when the job reads or waits on it."""

from __future__ import annotations

from explorer.core.training.job import Clock


class FakeClock(Clock):
    """``now()`` returns ``t`` (advanced by ``tick`` at each reading); ``wait``
    returns at once, having advanced ``t`` by the time asked for (unless
    ``advance`` is False), and records it in ``waits``. ``on_wait()`` runs
    first, standing in for the GUI thread acting during a wait."""

    def __init__(self, tick: float = 0.0, on_wait=None, advance: bool = True):
        self.t = 0.0
        self.tick = tick
        self.waits: list[float] = []
        self.on_wait = on_wait
        self.advance = advance

    def now(self) -> float:
        self.t += self.tick
        return self.t

    def wait(self, event, seconds: float) -> bool:
        self.waits.append(seconds)
        if self.on_wait is not None:
            self.on_wait()
        if event.is_set():
            return True
        if self.advance:
            self.t += max(0.0, seconds)
        return False
