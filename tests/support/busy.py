"""A machine made busy on purpose: one spinning process per core, for tests of
measurements that must not be faked by a busy machine."""

from __future__ import annotations

import contextlib
import multiprocessing
import os


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
            assert started.acquire(timeout=60), "a busy process did not start"
        yield n
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.join(timeout=10)
