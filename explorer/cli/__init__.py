"""The command line: one module per command; errors are one 'error:' line and exit status 2."""

from explorer.cli.commands import main

__all__ = ["main"]
