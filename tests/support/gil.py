"""Whether a call lets the GIL go while it runs."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def lets_the_gil_go(call: Callable[[], T]) -> tuple[T, bool]:
    """``call()`` in this thread while another counts, with the switch interval at an hour: the counter
    runs only while the calling thread lets the GIL go itself (a C call that releases it). Returns the
    call's result and whether the counter ran meanwhile."""
    count, done = 0, False

    def counter():
        nonlocal count
        while not done:
            count += 1
            time.sleep(0)

    interval = sys.getswitchinterval()
    thread = threading.Thread(target=counter)
    sys.setswitchinterval(3600)
    try:
        thread.start()
        time.sleep(0.01)  # the counter's first turn, before the count is read
        before = count
        result = call()
        counted = count - before
    finally:
        done = True
        sys.setswitchinterval(interval)
        thread.join()
    return result, counted > 0
