"""Fresh child interpreters for honest start-up measurements.

Opening a model is measured in a new Python process, so that imports and
peak memory count as they would for a user starting the app. Each child
script starts with :data:`CHILD_PRELUDE`: it reads one JSON argument,
measures from just before the first import its path needs until the work is
done, and prints one JSON line after a marker, which :func:`run_child`
reads back. No Qt here.
"""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path

from explorer.core.errors import ExplorerError

__all__ = ["BenchError", "CHILD_PRELUDE", "run_child", "median_run", "CHILD_TIMEOUT"]


class BenchError(ExplorerError):
    """A benchmark that cannot run; the message says why and what to do."""


CHILD_TIMEOUT = 900
_MARKER = "@@BENCH@@"

# ru_maxrss is in KiB on Linux.
CHILD_PRELUDE = string.Template(r"""
import json, resource, sys, time
args = json.loads(sys.argv[1])
def _maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def _rss():
    # VmHWM is the peak of this process's own address space. ru_maxrss can
    # carry over the parent's peak across fork + exec on Linux, so it is only
    # the fallback.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return _maxrss()
baseline_rss = _rss()
t0 = time.perf_counter()
def report(t_import, t_open, t_done, work_key, **fields):
    # the timings and memory every child reports, then its own fields
    out = {
        "import_s": t_import - t0,
        "load_s": t_open - t_import,
        work_key: t_done - t_open,
        "seconds": t_done - t0,
        "peak_rss_bytes": _rss(),
        "ru_maxrss_bytes": _maxrss(),
        "baseline_rss_bytes": baseline_rss,
    }
    out.update(fields)
    print($marker + json.dumps(out), flush=True)
""").substitute(marker=repr(_MARKER))


def _project_root() -> Path:
    return Path(__file__).resolve().parents[3]


def run_child(script: str, args: dict, what: str) -> dict:
    """Run ``script`` in a fresh interpreter; return its JSON result.

    Raises
    ------
    BenchError
        With the child's last error line when it fails, or when it runs
        longer than :data:`CHILD_TIMEOUT` seconds.
    """
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_project_root()), env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, json.dumps(args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(_project_root()),
            timeout=CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what} took longer than {CHILD_TIMEOUT} s and was stopped") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARKER):
            return json.loads(line[len(_MARKER):])
    err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    last = err[-1] if err else f"exit status {proc.returncode}"
    raise BenchError(f"{what} failed: {last}")


def median_run(script: str, args: dict, what: str, repeats: int) -> dict:
    """:func:`run_child` ``repeats`` times; the run with the median total
    time, with ``runs`` (how many there were) added."""
    runs = [run_child(script, args, what) for _ in range(max(1, int(repeats)))]
    runs.sort(key=lambda r: r["seconds"])
    out = runs[len(runs) // 2]
    out["runs"] = len(runs)
    return out
