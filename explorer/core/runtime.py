"""Process-wide settings for the numeric libraries. No Qt here."""

from __future__ import annotations

import os
import sys


def limit_torch_threads(import_torch: bool = True) -> None:
    """Leave a core free (for the GUI) on machines with more than one.

    With ``import_torch`` False nothing happens unless torch is already
    loaded: importing it costs over a second and is never done just for this.
    Safe to call any number of times.
    """
    if "torch" not in sys.modules and not import_torch:
        return
    # an import, not sys.modules["torch"]: another thread (the warm-up) may be
    # half-way through importing torch, and the import waits for it to finish
    # where the bare module would lack get_num_threads
    import torch
    n = os.cpu_count() or 1
    if n > 1 and torch.get_num_threads() >= n:
        torch.set_num_threads(n - 1)


def _glibc():
    """The C library when it is glibc (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:  # musl and friends: no libc.so.6
        return None


def trim_heap() -> bool:
    """Hand the memory freed by a dropped model back to the system.

    glibc keeps freed blocks in its heaps (one per thread that allocated:
    the workers), so after a switch away from MiniLM the process stayed
    150-200 MB larger for good and grew with every big model opened.
    ``malloc_trim(0)`` returns every free page. It takes a few milliseconds
    on a large heap, and ctypes drops the GIL for the call, so call it from
    a worker thread. Returns False where there is nothing to call.
    """
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True


def trim_heap_in_background() -> None:
    """:func:`trim_heap` on a short-lived daemon thread (never blocks the caller)."""
    import threading

    threading.Thread(target=trim_heap, name="trim-heap", daemon=True).start()
