"""The command line: one module per command; errors are one 'error:' line and exit status 2.

``main`` (explorer/cli/dispatch.py) is the console entry point ``explorer.cli:main``.

Before anything imports numpy: OpenBLAS's threads wait for their next task by spinning, for 2^28 cycles
(about 0.1 s) after each product of a worker, on a core the window's thread and the X server need. In a
5,000-action walk that was 7.6 s of a core, 92 ms of it inside one stall of the window; a product of
800 x 800 was followed by 104 ms of the process's CPU while it slept, and by none at 2^4 cycles, as fast.
A value the user set stays.
"""

import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from explorer.cli.dispatch import main  # noqa: E402 (after the setting above)

__all__ = ["main"]
