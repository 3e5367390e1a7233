"""Whole-table passes on big bfloat16 tables, each in a fresh process: the
token health check and a neighbour search. No Qt here.

Torch is imported before the clock for the work starts (the app imports it
once the window is up), so ``health_s`` and ``big_neighbors_s`` are the
work alone; ``import_s`` says what the imports cost.
"""

from __future__ import annotations

from pathlib import Path

from explorer.core.bench.harness import CHILD_PRELUDE, run_child

__all__ = ["HEALTH_SHAPE", "HEALTH_TARGET_SECONDS", "HEALTH_TARGET_RSS_BYTES", "HEALTH_MINILM_TARGET_SECONDS",
           "NEIGHBORS_TARGET_SECONDS", "bench_health", "bench_neighbors"]

#: Llama 3 8B's embedding shape, for the health check
HEALTH_SHAPE = (128_256, 4_096)
#: both ends: E and its output matrix, streamed
HEALTH_TARGET_SECONDS = 4.0
HEALTH_TARGET_RSS_BYTES = 1_500_000_000
HEALTH_MINILM_TARGET_SECONDS = 2.0
NEIGHBORS_TARGET_SECONDS = 0.5

_CHILD_HEALTH = CHILD_PRELUDE + r"""
import torch
from explorer.core import sources
from explorer.core.health import health_report
t_import = time.perf_counter()
table = sources.open_table(args["spec"])
t_open = time.perf_counter()
r = health_report(table)
t_done = time.perf_counter()
report(t_import, t_open, t_done, "health_s",
    vocab_size=table.vocab_size, dim=table.dim, dtype=table.dtype, threads=torch.get_num_threads(),
    flagged=r.flagged_count, reference=r.reference.kind, side=r.side,
)
"""

_CHILD_NEIGHBORS = CHILD_PRELUDE + r"""
import torch
from explorer.core import sources
from explorer.core.geometry.neighbors import neighbors_of
from explorer.core.runtime import limit_torch_threads
limit_torch_threads()
t_import = time.perf_counter()
table = sources.open_table(args["spec"])
first = time.perf_counter()
a = neighbors_of(table, args["ids"][0], 10)
t_open = time.perf_counter()
b = neighbors_of(table, args["ids"][1], 10)
t_done = time.perf_counter()
report(t_import, t_open, t_done, "neighbors_s",
    first_query_s=t_open - first, threads=torch.get_num_threads(),
    first_ids=a.ids(), ids=b.ids(), open_s=first - t_import,
)
"""


def bench_health(spec: str | Path) -> dict:
    """The whole health check of ``spec`` in a fresh process: ``health_s``
    (the check alone), ``peak_rss_bytes`` and the child's other timings."""
    return run_child(_CHILD_HEALTH, {"spec": str(spec)}, f"the health check of {spec}")


def bench_neighbors(spec: str | Path, ids: tuple[int, int] = (42, 1000)) -> dict:
    """Two neighbour queries in a fresh process: the first measures the
    table's row norms in an exact pass (``first_query_s``), the second is a
    native-dtype pass over the memory-mapped file (``neighbors_s``)."""
    return run_child(_CHILD_NEIGHBORS, {"spec": str(spec), "ids": [int(i) for i in ids]},
                     f"the neighbour search in {spec}")
