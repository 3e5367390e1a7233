"""The command line: one module per command; errors are one 'error:' line and exit status 2.

``main`` (explorer/cli/dispatch.py) is the console entry point ``explorer.cli:main``.
"""

from explorer.cli.dispatch import main

__all__ = ["main"]
