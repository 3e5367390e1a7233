"""Test-wide settings: offscreen Qt, offline hub, private config and cache folders."""

import atexit
import os
import shutil
import tempfile

# Before anything imports Qt, transformers or platformdirs.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
_tmp = tempfile.mkdtemp(prefix="explorer-tests-")
# each process of the suite (the controller and every xdist worker) removes its own folder when it
# ends: 137 of them had piled up in a day of runs
atexit.register(shutil.rmtree, _tmp, ignore_errors=True)
os.environ["XDG_CONFIG_HOME"] = os.path.join(_tmp, "config")
os.environ["EXPLORER_CONFIG_DIR"] = os.path.join(_tmp, "config", "embedding-explorer")
os.environ["EXPLORER_LOG_DIR"] = os.path.join(_tmp, "log")
# The GGUF tokenizer cache survives between sessions of the same user so
# the 5 s first build is paid once; tests may point it elsewhere.
os.environ.setdefault("EXPLORER_CACHE_DIR", os.path.join(tempfile.gettempdir(), "explorer-test-cache"))


def _threads_per_process() -> int:
    """The cores each of the suite's processes (pytest-xdist) may keep busy: all of them
    alone, a share of them beside the others."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, (os.cpu_count() or 1) // max(1, workers))


# Processes side by side, each with a thread per core, ask for more threads than there are
# cores, and OpenMP's waiting threads spin: t-SNE of 1,500 rows took 14 s in the suite
# against 3 s alone. Before numpy, torch or numba start their thread pools; no test's
# outcome depends on how many threads compute it (only on what they compute).
if os.environ.get("PYTEST_XDIST_WORKER"):  # a process of the suite (the controller's children inherit its env)
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_name, str(_threads_per_process()))


import pytest  # noqa: E402


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): one process per core, at most 4.

    Each process loads torch and the real models (about 1.5 GB at its
    peak), so a many-core machine must not start one per core. No test
    depends on how many run: each has its own settings, config and
    temporary folders, and shared caches are written atomically.
    """
    return max(1, min(4, os.cpu_count() or 1))


#: tests between full garbage collections (each walks every object torch, transformers and Qt hold: ~0.5 s)
FULL_COLLECTION_EVERY = 100
_tests_since_full_collection = 0


@pytest.fixture(autouse=True)
def _older_objects_frozen():
    """What exists before a test is frozen out of the garbage collector while
    it runs (``gc.freeze``), and given back after. A collection, the
    automatic ones and the UI tests' leak check alike, then walks only what
    the test made, not the millions of objects torch, transformers, Qt and
    the session's models hold (a full walk took ~0.3 s, once per UI test
    and often inside tests). Garbage among the older objects waits for a
    full collection before every 100th test."""
    import gc

    global _tests_since_full_collection
    _tests_since_full_collection += 1
    if _tests_since_full_collection >= FULL_COLLECTION_EVERY:
        _tests_since_full_collection = 0
        gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(autouse=True, scope="session")
def _pyqtgraph_as_the_app_configures_it():
    """Every test draws charts as the app does (make_app's pyqtgraph options and quick axes),
    not as whichever earlier test that called make_app left them."""
    from explorer.ui.style import configure_pyqtgraph

    configure_pyqtgraph()


@pytest.fixture(autouse=True)
def _layout_cache_of_its_own(tmp_path_factory, monkeypatch):
    """Each test starts with an empty layout cache: one that watches a t-SNE
    converge must not be served the finished layout of an earlier test."""
    monkeypatch.setenv("EXPLORER_LAYOUT_CACHE", str(tmp_path_factory.mktemp("layouts")))


@pytest.fixture(autouse=True)
def _no_worker_outlives_its_test():
    """Stop any background job a test left running, so it cannot report into
    the next test's objects."""
    yield
    import sys

    if "superqt.utils" in sys.modules:
        from superqt.utils import WorkerBase

        try:
            WorkerBase.await_workers(20000)
        except RuntimeError:
            pass
