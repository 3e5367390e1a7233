"""The command line: one module per command; errors are one 'error:' line and exit status 2.

``main`` (explorer/cli/dispatch.py) is the console entry point ``explorer.cli:main``.
"""

from explorer.core.runtime import let_blas_threads_sleep

let_blas_threads_sleep()  # before anything imports numpy

from explorer.cli.dispatch import main  # noqa: E402 (after the setting above)

__all__ = ["main"]
