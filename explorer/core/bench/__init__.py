"""The measurements behind ``python -m explorer bench``.

* :func:`bench_open` (:mod:`.opening`): opening only the embedding table
  versus a full transformers load, each in a fresh Python process
  (:mod:`.harness`) so that imports and peak memory are measured honestly.
* :func:`bench_big_table` (:mod:`.big_table`): a Llama-3-70B-shaped
  bfloat16 table (2 GB) written to a temporary folder, then opened in a
  fresh process.
* :func:`bench_lookup` / :func:`iter_bench_lookup` (:mod:`.lookup`): gather
  versus one-hot @ E versus a bias-free linear layer on one-hot inputs, on a
  loaded table; a :class:`LookupMeasurement`, times are minima (:mod:`.timing`).
* :func:`bench_default` (:mod:`.default`): what ``bench`` runs without options.

:func:`format_results` (:mod:`.report`) turns the results into a text
report, :func:`results_as_json` into plain data. No Qt here.
"""

from __future__ import annotations

from explorer.core.bench.big_table import (
    BIG_SHAPE,
    BIG_TARGET_RSS_BYTES,
    BIG_TARGET_SECONDS,
    bench_big_table,
    write_bf16_table,
)
from explorer.core.bench.default import bench_default
from explorer.core.bench.harness import BenchError
from explorer.core.bench.lookup import BatchTiming, LookupMeasurement, bench_lookup, iter_bench_lookup
from explorer.core.bench.opening import bench_open
from explorer.core.bench.report import format_results, results_as_json
from explorer.core.bench.timing import best_time

__all__ = [
    "BenchError",
    "bench_open",
    "bench_big_table",
    "write_bf16_table",
    "iter_bench_lookup",
    "bench_lookup",
    "BatchTiming",
    "LookupMeasurement",
    "bench_default",
    "format_results",
    "results_as_json",
    "best_time",
    "BIG_SHAPE",
    "BIG_TARGET_SECONDS",
    "BIG_TARGET_RSS_BYTES",
]
