"""What this process may still allocate, checked *before* a big allocation.

A table of any shape can be named (``random:10000000x65536`` is 2.6 TB of
float32), so every place that would hold a whole table, or a large part of
one, asks :func:`require` first and the user reads one sentence instead of
a ``MemoryError`` traceback (or a machine that swaps for minutes). No Qt here.
"""

from __future__ import annotations

import os
import resource

from explorer.core.errors import ExplorerError
from explorer.core.units import format_size

__all__ = ["MemoryLimitError", "available_bytes", "resident_bytes", "require"]

#: share of the available memory one allocation may take: the rest is left
#: for the copies numpy makes on the way and for everything else running
_USABLE_SHARE = 0.8
#: allocations below this are not checked: reading /proc on every row read
#: would cost more than the read, and a machine short of 16 MB is lost anyway
_UNCHECKED_BYTES = 16 * 1024 * 1024


class MemoryLimitError(ExplorerError):
    """An allocation was refused because the machine does not have the memory."""


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _sysconf_available() -> int | None:
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_available() -> int | None:
    """Room left under a cgroup v2 memory limit (containers), if there is one."""
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as f:
            used = int(f.read().strip())
        return max(0, int(limit) - used)
    except (OSError, ValueError):
        return None


def _rlimit_available() -> int | None:
    """Room left under this process's own RLIMIT_DATA / RLIMIT_AS (ulimit)."""
    room = None
    fields = {resource.RLIMIT_DATA: "VmData:", resource.RLIMIT_AS: "VmSize:"}
    for which, key in fields.items():
        soft, _hard = resource.getrlimit(which)
        if soft == resource.RLIM_INFINITY:
            continue
        used = _status_kib(key)
        if used is None:
            continue
        left = max(0, soft - used * 1024)
        room = left if room is None else min(room, left)
    return room


def _status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def resident_bytes() -> int | None:
    """This process's resident memory now (VmRSS), or None where /proc is missing."""
    kib = _status_kib("VmRSS:")
    return None if kib is None else kib * 1024


def available_bytes() -> int | None:
    """Bytes this process can still allocate without swapping or being refused.

    The smallest of the kernel's MemAvailable (or sysconf's free pages), the
    room under a cgroup memory limit and the room under the process's own
    resource limits. None when none of them can be read (then nothing is
    refused).
    """
    candidates = [
        v
        for v in (_meminfo_available() or _sysconf_available(), _cgroup_available(), _rlimit_available())
        if v is not None
    ]
    return min(candidates) if candidates else None


def require(nbytes: int, what: str, hint: str = "use a smaller table") -> None:
    """Refuse an allocation of ``nbytes`` the machine cannot hold.

    Parameters
    ----------
    nbytes : int
        The size about to be allocated.
    what : str
        What it is for, completing "... needs N bytes": e.g. "reading the
        whole 128,256 x 4,096 table as float32".
    hint : str
        What the user can do instead.

    Raises
    ------
    MemoryLimitError
        When ``nbytes`` exceeds 80 % of :func:`available_bytes` (sizes under
        16 MB are not checked).
    """
    nbytes = int(nbytes)
    if nbytes < _UNCHECKED_BYTES:
        return
    avail = available_bytes()
    if avail is None or nbytes <= avail * _USABLE_SHARE:
        return
    raise MemoryLimitError(
        f"{what} needs {format_size(nbytes)} but this machine has only {format_size(avail)} "
        f"of memory available; {hint}"
    )
