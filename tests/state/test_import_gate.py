"""A job's step that imports a module: gated, with the collector paused, until the step ends
(explorer.core.import_gate, wired into every job by explorer.workers)."""

import gc
import importlib
import sys

import pytest

PROBE_MODULE = """
import gc, sys
COLLECTING = gc.isenabled()
PROFILE = sys.getprofile()
"""


@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    """A factory of modules never imported before, each recording, as it runs, whether the collector
    was on and the thread's profile function."""
    from explorer.core.import_gate import step_aside_on_imports

    assert step_aside_on_imports()  # as make_app does
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make() -> str:
        name = f"import_gate_probe_{len(made)}_{id(tmp_path)}"
        (tmp_path / f"{name}.py").write_text(PROBE_MODULE)
        made.append(name)
        return name

    yield make
    for name in made:
        sys.modules.pop(name, None)


def _run_job(qtbot, job, *args):
    from explorer.workers import JobRunner

    done = []
    runner = JobRunner()
    runner.succeeded.connect(done.append)
    runner.failed.connect(done.append)
    runner.start(job, *args)
    qtbot.waitUntil(lambda: bool(done), timeout=30_000)
    return done[0]


def test_a_step_that_imports_runs_gated_to_its_end_with_the_collector_paused_for_the_import(
        qtbot, fresh_module, monkeypatch):
    """torch._dynamo's import in the first training's step (0.7-1.5 s of module code): the window's
    longest gap while the views were switched went from 46-87 ms to 27-31 ms. The window rests here
    (a lively one gates every step anyway)."""
    from explorer.core.runtime import WindowTurns

    monkeypatch.setattr(WindowTurns, "lively", property(lambda _self: False))
    assert gc.isenabled()
    name = fresh_module()
    seen = {}

    def job():
        yield 0.0, "a step without an import"
        seen["plain step"] = (gc.isenabled(), sys.getprofile() is None)
        module = importlib.import_module(name)
        seen["after the import, same step"] = (gc.isenabled(), sys.getprofile() is None)
        yield 0.5, "imported"
        seen["next step"] = (gc.isenabled(), sys.getprofile() is None)
        return module

    module = _run_job(qtbot, job)
    assert module.COLLECTING is False
    assert module.PROFILE is not None  # the worker's gate (behind the watch for the import's end)
    # (collector on, unprofiled): the gate stays on to the step's end, the next step begins unprofiled
    assert seen == {"plain step": (True, True), "after the import, same step": (True, False),
                    "next step": (True, True)}
    assert gc.isenabled()


def test_a_step_that_waits_after_its_import_does_not_keep_the_collector_off(qtbot, fresh_module):
    """A training paused by the user waits inside its step, maybe for minutes: the collector is on
    again as soon as the step's import has returned."""
    import threading

    name = fresh_module()
    imported, release = threading.Event(), threading.Event()

    def job():
        yield 0.0, "importing, then waiting"
        module = importlib.import_module(name)
        imported.set()
        release.wait(20)
        return module

    from explorer.workers import JobRunner

    done = []
    runner = JobRunner()
    runner.succeeded.connect(done.append)
    runner.start(job)
    try:
        assert imported.wait(20)
        assert gc.isenabled()  # seen from this thread while the worker's step still runs
    finally:
        release.set()
    qtbot.waitUntil(lambda: bool(done), timeout=30_000)
    assert done[0].COLLECTING is False


def test_an_import_outside_a_jobs_step_changes_nothing(fresh_module):
    """The window's own imports (and any thread's outside a job) are neither gated nor paused."""
    module = importlib.import_module(fresh_module())
    assert module.COLLECTING is True and module.PROFILE is None


@pytest.mark.parametrize("parking", [True, False])
def test_what_an_importing_step_made_is_parked_when_the_app_parks(qtbot, fresh_module, parking):
    """Once the app parks what survives its collections, the step's end parks what exists (the first
    collection after the pause walked all the import made: 69-78 ms holding the GIL); otherwise not."""
    from explorer.core.runtime import park_after_full_collections

    name = fresh_module()

    def job():
        yield 0.0, "importing"
        keep = [[i] for i in range(20_000)]  # containers the collector tracks, made in the paused step
        importlib.import_module(name)
        return keep

    before = gc.get_freeze_count()
    park_after_full_collections(parking)
    try:
        kept = _run_job(qtbot, job)
    finally:
        park_after_full_collections(False)
    assert len(kept) == 20_000
    assert (gc.get_freeze_count() - before >= 20_000) is parking


def test_the_warm_up_imports_torch_under_the_gate_and_the_views_code_without(qtbot, fresh_module, monkeypatch):
    """torch's import (1-2 s of module code, while the user's first clicks come) steps aside for the
    window's turns; the views' code comes as fast as it can, since a tab shown in the first second
    imports it on the window's thread otherwise, waiting for the warm-up's import of it."""
    import explorer.warm_up as warm_up

    views, torch_like = fresh_module(), fresh_module()
    monkeypatch.setattr(warm_up, "TORCH_MODULES", (torch_like,))
    assert _run_job(qtbot, warm_up.warm_up_job, (views, torch_like)) is True  # as the app starts it
    assert sys.modules[views].PROFILE is None
    assert sys.modules[torch_like].PROFILE is not None  # the worker's gate
    assert sys.modules[torch_like].COLLECTING is False and gc.isenabled()


def test_a_module_that_fails_to_import_leaves_the_collector_on(qtbot, tmp_path, monkeypatch):
    """The import's end is its outermost frame returning, by an exception too."""
    from explorer.core.import_gate import step_aside_on_imports

    assert step_aside_on_imports()
    name = f"import_gate_broken_{id(tmp_path)}"
    (tmp_path / f"{name}.py").write_text("import gc\nCOLLECTING = gc.isenabled()\nraise RuntimeError('broken')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = {}

    def job():
        yield 0.0, "importing a broken module"
        try:
            importlib.import_module(name)
        except RuntimeError as exc:
            seen["error"] = str(exc)
        seen["collecting after"] = gc.isenabled()
        return True

    assert _run_job(qtbot, job) is True
    assert seen == {"error": "broken", "collecting after": True}
    assert name not in sys.modules


def test_the_gate_goes_back_in_front_of_a_finder_put_before_it(monkeypatch):
    """A finder a library puts first on sys.meta_path since is asked before the gate, and alone when
    it finds the module: the gate goes back in front (one of it), as make_app asks for it."""
    import sys

    from explorer.core.import_gate import StepAsideOnImport, step_aside_on_imports

    class Elsewhere:
        @staticmethod
        def find_spec(_name, _path=None, _target=None):
            return None

    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    assert step_aside_on_imports()
    other = Elsewhere()
    sys.meta_path.insert(0, other)
    assert step_aside_on_imports()
    assert isinstance(sys.meta_path[0], StepAsideOnImport) and sys.meta_path[1] is other
    assert sum(isinstance(f, StepAsideOnImport) for f in sys.meta_path) == 1
