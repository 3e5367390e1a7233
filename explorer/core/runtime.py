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
        return libc if hasattr(libc, "mallopt") else None
    except OSError:  # musl and friends: no libc.so.6
        return None


#: glibc's mallopt parameter for the size from which blocks are mapped on their own
_M_MMAP_THRESHOLD = -3
#: blocks from this size get their own mapping, unmapped (and given back) on free
MMAP_THRESHOLD_BYTES = 1 << 20


def return_big_blocks_at_once() -> bool:
    """Make every block of 1 MB or more its own memory mapping (glibc).

    glibc raises its mapping threshold each time a mapped block is freed,
    up to 32 MB, so after the first model the big arrays of the next ones
    come from the heaps of the threads that made them (the workers), and a
    dropped model's memory stayed with the process: a soak run grew 30-50 MB
    over 76 switches and kept 150-200 MB after leaving MiniLM. A fixed
    threshold keeps big blocks mapped, and free gives them back at once,
    with no lock held over the heaps (``malloc_trim`` after each switch
    did the same but held that lock for tens of milliseconds and stalled
    the window). Returns False
    where there is no glibc.
    """
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


#: how long a thread may hold the GIL while another waits for it (Python's default is 5 ms)
GIL_SWITCH_INTERVAL_S = 0.0002


def favour_the_gui_thread() -> None:
    """Hand the GIL over every 0.2 ms instead of every five.

    A paint runs many short Python callbacks between calls into Qt; each
    time the GUI thread gives the GIL up inside Qt, a worker running Python
    (indexing 128,000 pieces during a load, listing models) keeps it for the
    whole switch interval. Twenty callbacks per paint made a 100-170 ms stall
    of the window while the biggest table opened at 5 ms. Measured in a real
    window (MiniLM, 16 tab switches with resizes, a worker looping in
    Python): median stall 590-610 ms at 1 ms, 190-240 ms at 0.2 ms, 150-175 ms
    at 0.1-0.05 ms; 61-74 ms with no worker. Workers lose little: their heavy
    work runs in numpy and torch without the GIL, and model loads took as
    long at 0.2 ms as at 1 ms.
    """
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


def quiet_transformers() -> None:
    """No progress bars or info logs from transformers on the terminal (the
    window and the CLI say what is happening themselves).

    ``disable_progress_bar`` silences transformers' own bars; its GGUF
    converter draws a plain ``tqdm.auto`` bar ("Converting and de-quantizing
    GGUF tensors…") that this switch does not reach, so that module's bar is
    pointed at transformers' switchable one. Imports transformers: call it
    only where a model is about to be loaded.
    """
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # a transformers without GGUF support: nothing to silence
        return
    if hasattr(gguf_utils, "tqdm"):
        gguf_utils.tqdm = hf_logging.tqdm
