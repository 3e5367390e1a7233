"""Code run in a fresh Python process (offscreen), for what only a new process shows: what is imported."""

from __future__ import annotations

import ast
import os
import subprocess
import sys


def fresh_process(script: str, timeout_s: float = 150) -> list[str]:
    """The words ``script`` prints, run in a fresh process (offscreen); its failure fails the test."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout_s,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def modules_imported_by(code: str, modules: tuple[str, ...], timeout_s: float = 150) -> list[str]:
    """Which of ``modules`` are imported once ``code`` has run in a fresh process."""
    check = f"\nimport sys as _sys\nprint(repr(sorted(m for m in {modules!r} if m in _sys.modules)).replace(' ', ''))\n"
    return ast.literal_eval(fresh_process(code + check, timeout_s)[-1])
