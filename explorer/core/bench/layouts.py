"""``bench --layouts``: t-SNE of 5,000 MiniLM rows and UMAP of 2,000, as the
projection view runs them (one worker thread, seeded, cosine). No Qt here.

The figures: the seconds to the whole t-SNE layout (target 30 s), to its
first layout (the PCA start the window draws at once; target 2 s) and to
its first optimised frame (after 25 iterations, once the neighbours are
known), and each layout's trustworthiness (cosine, 5 neighbours; issue 15
asks at least 0.9 for t-SNE and 0.8 for UMAP). UMAP's figure includes the
one-off compilation of its code, measured apart when this process had not
compiled it yet.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from explorer.core.jobs import run_to_end
from explorer.core.projection.manifold import ManifoldResult, manifold_job, warm_up_umap
from explorer.core.units import format_seconds as _t

__all__ = ["LayoutBench", "bench_layouts", "format_layouts", "TSNE_ROWS", "UMAP_ROWS"]

TSNE_ROWS = 5000
UMAP_ROWS = 2000
TSNE_TARGET_S = 30.0
FIRST_LAYOUT_TARGET_S = 2.0


@dataclass(frozen=True)
class LayoutBench:
    """Measured t-SNE and UMAP layouts of MiniLM rows (seconds from the job's start)."""

    spec: str
    tsne_rows: int
    tsne_5000_s: float
    tsne_first_layout_s: float
    tsne_first_step_s: float
    tsne_trustworthiness: float
    tsne_cpu_s: float
    umap_rows: int
    umap_compile_s: float
    umap_2000_s: float
    umap_trustworthiness: float

    def as_json(self) -> dict:
        return asdict(self)


def _timed_tsne(table, rows: int, seed: int):
    """(result, seconds, seconds to the first frame, to the first optimised frame, CPU seconds)."""
    t0, c0 = time.perf_counter(), time.process_time()
    first = step = None
    steps = manifold_job(table, "tsne", "sample", rows, seed=seed)
    while True:
        try:
            item = next(steps)
        except StopIteration as stop:
            return stop.value, time.perf_counter() - t0, first, step, time.process_time() - c0
        if isinstance(item, ManifoldResult):
            now = time.perf_counter() - t0
            first = now if first is None else first
            step = now if step is None and item.iteration > 0 else step


def bench_layouts(spec: str = "minilm", seed: int = 0) -> LayoutBench:
    """Run both layouts on ``spec`` (MiniLM by default) and time them."""
    from explorer.core.sources import open_table

    table = open_table(spec)
    tsne, tsne_s, first, step, cpu = _timed_tsne(table, TSNE_ROWS, seed)
    compile_s = warm_up_umap()
    t0 = time.perf_counter()
    umap = run_to_end(manifold_job(table, "umap", "sample", UMAP_ROWS, seed=seed))
    return LayoutBench(spec, len(tsne.ids), tsne_s, first, step, float(tsne.trustworthiness), cpu, len(umap.ids),
                       compile_s, time.perf_counter() - t0, float(umap.trustworthiness))


def format_layouts(r) -> list[str]:
    """Report lines for a LayoutBench (or its JSON form)."""
    r = r.as_json() if isinstance(r, LayoutBench) else r
    ok = lambda p: "PASS" if p else "FAIL"  # noqa: E731
    busy = " (well below the wall time: the machine was busy)" if r["tsne_cpu_s"] < 0.6 * r["tsne_5000_s"] else ""
    return [
        f"t-SNE of {r['tsne_rows']:,} {r['spec']} rows (openTSNE, cosine, one thread): {_t(r['tsne_5000_s'])} "
        f"[{ok(r['tsne_5000_s'] <= TSNE_TARGET_S)} <= {TSNE_TARGET_S:.0f} s]; CPU time {_t(r['tsne_cpu_s'])}{busy}",
        f"  first layout drawn (the PCA start): {_t(r['tsne_first_layout_s'])} "
        f"[{ok(r['tsne_first_layout_s'] <= FIRST_LAYOUT_TARGET_S)} <= {FIRST_LAYOUT_TARGET_S:.0f} s]; "
        f"first optimised frame (25 iterations): {_t(r['tsne_first_step_s'])}",
        f"  trustworthiness (cosine, 5 neighbours): {r['tsne_trustworthiness']:.3f} "
        f"[{ok(r['tsne_trustworthiness'] >= 0.9)} >= 0.9]",
        f"UMAP of {r['umap_rows']:,} rows: {_t(r['umap_2000_s'])} after compiling its code once "
        f"({_t(r['umap_compile_s'])}); trustworthiness {r['umap_trustworthiness']:.3f} "
        f"[{ok(r['umap_trustworthiness'] >= 0.8)} >= 0.8]",
    ]
