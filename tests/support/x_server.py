"""A private X server (Xvfb) for what only a real X display shows: OpenGL's driver, GLX."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def private_display(timeout_s: float = 20) -> Iterator[str]:
    """``DISPLAY`` of an Xvfb started for the test and stopped after it; skips where Xvfb is not installed
    (Debian's package xvfb) or does not start."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("needs Xvfb (Debian's package xvfb) for a private X display")
    read, write = os.pipe()
    server = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                              pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as f:  # Xvfb writes the display's number once it accepts clients
            number = f.readline().strip()
        if not number.isdigit():
            pytest.skip("Xvfb did not start")
        yield f":{number}"
    finally:
        server.terminate()
        try:
            server.wait(timeout_s)
        except subprocess.TimeoutExpired:
            server.kill()
