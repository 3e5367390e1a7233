"""numpy's BLAS leaves a core to the window: the limit, the rule, and where a worker's product runs.

Each check runs in a fresh process: the limit is process-wide, and this one's is the app's."""

from __future__ import annotations

import sys

import pytest

from tests.support.fresh import fresh_process

#: the number of threads of numpy's BLAS after the app's limit, with os.cpu_count() said to be CORES
_RULE_SCRIPT = """
import os
if {user!r}:
    os.environ["OPENBLAS_NUM_THREADS"] = {user!r}
import numpy
from explorer.core import blas
before = blas.blas_threads()
os.cpu_count = lambda: {cores}
blas.limit_blas_threads()
print(max(before), max(blas.blas_threads()))
"""


@pytest.mark.parametrize("cores", [1, 2, 64])
def test_the_blas_is_limited_to_one_thread_fewer_than_the_cores_and_never_raised(cores):
    before, after = map(int, fresh_process(_RULE_SCRIPT.format(user="", cores=cores)))
    assert after == min(before, max(1, cores - 1))


def test_a_lower_limit_the_user_set_stays():
    before, after = map(int, fresh_process(_RULE_SCRIPT.format(user="1", cores=64)))
    assert before == after == 1


def test_the_app_limits_numpys_blas_when_it_is_made():
    script = """
import os
import numpy
from explorer.core import blas
before = max(blas.blas_threads())
from explorer.ui.application import make_app
app = make_app()
print(before, max(blas.blas_threads()), os.cpu_count())
"""
    before, after, cores = map(int, fresh_process(script))
    assert after == min(before, max(1, cores - 1))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread CPU times from /proc (Linux)")
def test_a_lowered_workers_products_run_on_its_own_thread_once_limited():
    """numpy's BLAS made its threads in the importing thread, at its priority: with the limit, a
    worker's products run on the worker's own thread (on two cores, the machine's; on one the BLAS
    had one thread anyway). CPU ticks per thread from /proc, before and after the products."""
    script = """
import os, threading
import numpy as np
from explorer.core import blas, runtime
blas.limit_blas_threads()
def ticks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        fields = open(f"/proc/self/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        out[int(tid)] = int(fields[11]) + int(fields[12])
    return out
seen = {}
def work():
    runtime.lower_this_thread()
    seen["tid"] = threading.get_native_id()
    a = np.random.default_rng(0).random((500, 500))
    seen["before"] = ticks()
    for _ in range(60):
        a = np.tanh(a @ a.T / 500)
    seen["after"] = ticks()
thread = threading.Thread(target=work)
thread.start()
thread.join()
tid, before, after = seen["tid"], seen["before"], seen["after"]
own = after[tid] - before[tid]
others = sum(after[t] - before.get(t, 0) for t in after if t != tid)
print(own, others)
"""
    own, others = map(int, fresh_process(script))
    assert own >= 5  # the products took CPU, on this thread
    assert others <= max(1, own // 10)
