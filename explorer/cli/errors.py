"""The command line's user error, raised by any command and printed by
:func:`explorer.cli.dispatch.main` as one ``error: ...`` line, exit status 2.

A module of its own so that the commands and the parser, which registers
them, can all raise it without importing each other.
"""

from __future__ import annotations

__all__ = ["CliError"]


class CliError(Exception):
    """A user error: printed as ``error: ...``, exit status 2."""
