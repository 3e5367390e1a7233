"""Helpers shared by the UI tests (a uniquely named module: every test folder
has its own conftest.py, so "import conftest" would be ambiguous)."""

from __future__ import annotations

LOAD_TIMEOUT = 60_000


def load(qtbot, ex, spec: str, ok: bool = True):
    """Open ``spec`` and wait for the load to end; returns the state's table."""
    with qtbot.waitSignal(ex.load_finished, timeout=LOAD_TIMEOUT) as blocker:
        ex.open_spec(spec)
    assert blocker.args == [ok], ex.last_error
    return ex.state.table
