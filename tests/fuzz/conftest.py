"""The fuzz suite: every parser a user's file or text reaches, through the
real code path (open_table, peek, the tokenizer, inspect_text).

Deterministic: hypothesis runs derandomized (its examples follow from the
test's own source), with no example database. The CI share is small; ask
for a longer run with

    EXPLORER_FUZZ_EXAMPLES=3000 .venv/bin/python -m pytest -q tests/fuzz
    .venv/bin/python -m pytest -q tests/fuzz --fuzz-examples=3000

Memory is bounded for real: while the suite runs, the process's
RLIMIT_DATA allows only a few GB more than it used at the start, so any
allocation the core did not refuse beforehand fails as a MemoryError, which
the tests count as a failure.
"""

from __future__ import annotations

import os
import resource

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tests.support.fuzzing import HEADROOM, vm_data_bytes  # noqa: E402


def pytest_addoption(parser):
    # read only when tests/fuzz is named on the command line (pytest loads
    # this file early then); the environment variable works from anywhere
    parser.addoption("--fuzz-examples", type=int, default=None,
                     help="hypothesis examples per fuzz target (default: a CI-sized run)")


def pytest_configure(config):
    try:
        n = config.getoption("fuzz_examples")
    except ValueError:
        n = None
    if n:
        os.environ["EXPLORER_FUZZ_EXAMPLES"] = str(n)




@pytest.fixture(scope="module", autouse=True)
def bounded_memory():
    """Cap the process's data segment while a fuzz module runs (restored
    after it, so the rest of the suite runs unbounded)."""
    used = vm_data_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if used is None:
        yield None
        return
    cap = used + HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield cap
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


@pytest.fixture(scope="module", autouse=True)
def private_dirs(tmp_path_factory):
    """Own config and (empty) Hugging Face cache folders. The GGUF tokenizer
    cache stays shared (SmolLM2's takes seconds to build); the file fuzzers
    point it at their own folder."""
    base = tmp_path_factory.mktemp("fuzz-dirs")
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_CONFIG_DIR", str(base / "config"))
    mp.setenv("HF_HUB_CACHE", str(base / "hub"))
    yield base
    mp.undo()
