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
    if import_torch:
        import torch  # an import statement waits for one another thread has under way
    else:
        torch = sys.modules.get("torch")
        if torch is None or not hasattr(torch, "get_num_threads"):  # absent, or half imported by another thread
            return
    n = os.cpu_count() or 1
    if n > 1 and torch.get_num_threads() >= n:
        torch.set_num_threads(n - 1)
