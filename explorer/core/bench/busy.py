"""The lookup lesson on a machine made busy on purpose (``bench --busy``).

One spinning process per core runs while the lookup is timed again; the
lesson (one-hot @ E takes R times as long as the gather) must stay within 2x
of the quiet figure, or the measurement must say the machine was busy. Which
of the two happens depends on the machine and its scheduler, which is why
this is measured here and not asserted in a test (the tests play a busy
machine with clocks of their own). No Qt here.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from dataclasses import dataclass

__all__ = ["busy_cores", "BusyLookup", "bench_lookup_busy", "format_busy", "BUSY_SPEC"]

#: big enough that one-hot @ E is compute, not call overhead (a ratio of hundreds), small enough
#: that a call fits in a scheduler slice
BUSY_SPEC = "random:20000x128"
BUSY_BATCHES = (1, 8)
#: the busy ratio must stay within this factor of the quiet one, or be flagged
TOLERANCE = 2.0


def _spin(started) -> None:
    started.release()
    while True:
        pass


@contextlib.contextmanager
def busy_cores(n: int | None = None):
    """Run ``n`` (default ``os.cpu_count()``) processes that spin on the CPU
    while the block runs; they are started before it and killed after."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding torch or Qt threads
    n = n or os.cpu_count() or 1
    started = ctx.Semaphore(0)
    procs = [ctx.Process(target=_spin, args=(started,), daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            if not started.acquire(timeout=60):
                raise RuntimeError("a busy process did not start within 60 s")
        yield n
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.join(timeout=10)


@dataclass(frozen=True)
class BusyLookup:
    """Quiet and busy ratios per batch, and whether each busy one was flagged.

    The quiet ratios are the lowest and highest of the runs before and after
    the busy one: on a shared machine (a VM, a laptop) the quiet figure itself
    drifts between runs, and the busy one holds when it lies within 2x of
    that range.
    """

    spec: str
    cores: int
    batches: tuple[int, ...]
    quiet_low: tuple[float, ...]
    quiet_high: tuple[float, ...]
    busy_ratio: tuple[float, ...]
    disturbed: tuple[bool, ...]
    attempts: tuple[int, ...]
    agree: bool

    @property
    def held(self) -> tuple[bool, ...]:
        return tuple(lo / TOLERANCE <= b <= hi * TOLERANCE
                     for lo, hi, b in zip(self.quiet_low, self.quiet_high, self.busy_ratio))

    @property
    def passed(self) -> bool:
        """Every busy batch held the lesson or said the machine was busy, and the paths agreed."""
        return self.agree and all(h or d for h, d in zip(self.held, self.disturbed))

    def as_json(self) -> dict:
        return {"spec": self.spec, "cores": self.cores, "batches": list(self.batches),
                "quiet_low": list(self.quiet_low), "quiet_high": list(self.quiet_high),
                "busy_ratio": list(self.busy_ratio),
                "held": list(self.held), "disturbed": list(self.disturbed), "attempts": list(self.attempts),
                "agree": self.agree, "passed": self.passed}


def bench_lookup_busy(spec: str = BUSY_SPEC, quiet_runs: int = 2) -> BusyLookup:
    """Time the lookup quietly ``quiet_runs`` times, then with every core
    spinning, then quietly again."""
    from explorer.core.bench.lookup import bench_lookup
    from explorer.core.sources import open_table

    table = open_table(spec)

    def quietly():
        return [bench_lookup(table, batch_sizes=BUSY_BATCHES, repeats=3) for _ in range(quiet_runs)]

    quiet = quietly()
    with busy_cores() as n:
        busy = bench_lookup(table, batch_sizes=BUSY_BATCHES, repeats=3)
    quiet += quietly()
    ratios = [[r.batches[k].ratio for r in quiet] for k in range(len(BUSY_BATCHES))]
    return BusyLookup(
        spec, n, BUSY_BATCHES, tuple(min(r) for r in ratios), tuple(max(r) for r in ratios),
        tuple(b.ratio for b in busy.batches), tuple(b.disturbed for b in busy.batches),
        tuple(b.attempts for b in busy.batches), busy.agree and all(r.agree for r in quiet))


def format_busy(r: BusyLookup) -> str:
    lines = [f"lookup on a busy machine ({r.spec}, {r.cores} spinning processes): "
             f"{'PASS' if r.passed else 'FAIL'} (within {TOLERANCE:g}x of quiet, or flagged busy)"]
    for b, lo, hi, x, h, d, a in zip(r.batches, r.quiet_low, r.quiet_high, r.busy_ratio, r.held, r.disturbed,
                                     r.attempts):
        verdict = "held" if h else ("flagged busy" if d else "NOT flagged")
        lines.append(f"  batch {b:>3,}: quiet {lo:,.0f}-{hi:,.0f}x (before and after), busy {x:,.0f}x after {a} "
                     f"attempt{'s' if a != 1 else ''} - {verdict}")
    return "\n".join(lines)
