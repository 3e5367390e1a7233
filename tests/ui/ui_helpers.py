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


def standalone_view(qtbot, view_cls, size=(1000, 700)):
    """A view on its own AppState and JobRunner, wired like the app wires it.

    A generator for fixtures: yields (view, state, runner), then stops the runner.
    """
    from explorer.app import make_app
    from explorer.state import AppState
    from explorer.workers import JobRunner, await_all_workers

    make_app()
    state = AppState()
    runner = JobRunner()
    v = view_cls(state, runner=runner)
    v.token_selected.connect(state.set_selected_token)
    v.token_added.connect(state.add_extra_token)
    qtbot.addWidget(v)
    v.resize(*size)
    v.show()
    yield v, state, runner
    runner.cancel(emit=False)
    await_all_workers()
