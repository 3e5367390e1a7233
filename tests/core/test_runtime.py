"""Process-wide memory settings: freed memory goes back to the system."""

from __future__ import annotations

import threading

import pytest

from explorer.core import runtime
from explorer.core.memory import resident_bytes


def rss_mb() -> float:
    """Resident memory of this process, in MB (Linux: VmRSS)."""
    return resident_bytes() / 2**20


@pytest.mark.skipif(runtime._glibc() is None, reason="malloc_trim is glibc's")
def test_trim_heap_returns_what_a_worker_freed():
    kept = []

    def worker():
        # 200 MB in 4 KB blocks from a worker thread's own heap, every 16th kept:
        # the heap cannot shrink from its top, only whole free pages can go back
        blocks = [bytearray(4000) for _ in range(50_000)]
        kept.extend(blocks[::16])
        del blocks

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    before = rss_mb()
    assert runtime.trim_heap() is True
    after = rss_mb()
    assert before - after > 100, (before, after)
    assert len(kept) == 3125


def test_trim_heap_in_background_never_blocks_and_is_harmless():
    runtime.trim_heap_in_background()
    for t in threading.enumerate():
        if t.name == "trim-heap":
            t.join(timeout=10)
            assert not t.is_alive()


def test_limit_torch_threads_waits_for_an_import_under_way_in_another_thread():
    """The warm-up imports torch in a worker while a load calls
    limit_torch_threads: the half-imported module must not be used."""
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "from explorer.core import runtime\n"
        "t = threading.Thread(target=lambda: __import__('torch'))\n"
        "t.start()\n"
        "while 'torch' not in sys.modules: pass\n"
        "runtime.limit_torch_threads(import_torch=False)\n"
        "t.join()\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
