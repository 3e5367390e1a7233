"""What a piece of code imports, run in a fresh Python process."""

from __future__ import annotations

import os
import subprocess
import sys


def modules_imported_by(code: str, modules: tuple[str, ...], timeout_s: float = 150) -> list[str]:
    """Which of ``modules`` are imported once ``code`` has run in a fresh process (offscreen);
    the code's own failure fails the test."""
    check = f"\nimport sys as _sys\nprint(sorted(m for m in {modules!r} if m in _sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", code + check], capture_output=True, text=True,
                          timeout=timeout_s, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 (a list of names this process printed)
