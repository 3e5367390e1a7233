"""What the commands share: opening a model, one-line text, the table
printer, and holding what native code writes to stderr while a tokenizer runs."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

__all__ = ["native_stderr_held", "one_line", "open_table", "print_table"]


def one_line(text: str) -> str:
    return " ".join(text.split())


def open_table(spec: str):
    from explorer.core.sources import open_table

    return open_table(spec)


def print_table(rows, right=()):
    widths = [max(len(str(r[c])) for r in rows) for c in range(len(rows[0]))]
    for n, r in enumerate(rows):
        cells = [str(v).rjust(w) if c in right else str(v).ljust(w) for c, (v, w) in enumerate(zip(r, widths))]
        print("  ".join(cells).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


@contextlib.contextmanager
def native_stderr_held():
    """Hold what native code writes to stderr while a tokenizer runs.

    A Rust panic in a tokenizer prints its own message and backtrace on
    file descriptor 2 before Python sees the exception (which becomes our
    one-line error). On failure that noise is dropped; on success anything
    written is passed on, so no warning is lost.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        ok = False
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if ok:
                held.seek(0)
                data = held.read()
                if data:
                    sys.stderr.write(data.decode("utf-8", "replace"))
                    sys.stderr.flush()
