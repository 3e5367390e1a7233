"""``bench --layouts``: the layouts of MiniLM's whole vocabulary (30,522 rows),
measured side by side in one run. No Qt here.

For PCA, t-SNE and UMAP: the seconds to the layout cold (nothing cached,
the neighbour graph searched anew) and warm (the same request again: t-SNE
and UMAP come from the layout cache, PCA is computed again), and the
layouts' trustworthiness with 5 and 15 neighbours (cosine, on the same
seeded 5,000 rows). Beside them, umap-learn with its defaults (its own
NN-descent search and spectral start) on the same unit rows, right before
the app's UMAP, its trustworthiness, and the recall of its neighbour search
against the exact graph; the exact graph's own time, and the time and recall
of the graph the app uses (bfloat16 products where the CPU has them).

umap-learn and the app's UMAP are timed twice, in turn (umap-learn, the
app, umap-learn, the app), and the best of each is compared: on a shared
machine whose speed drifts, one of a single pair can be slowed alone.

Targets (issue 26): UMAP at least 2× faster than umap-learn's defaults at a
trustworthiness no more than 0.01 lower; the warm layouts under 1 s; t-SNE
of the whole vocabulary within 30 s at a trustworthiness of at least 0.9.
The compiled code of both UMAPs is warmed first and its time reported apart.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from explorer.core.bench.harness import BenchError
from explorer.core.jobs import run_to_end
from explorer.core.projection.manifold import LayoutCache, ManifoldResult, knn_graph_job, manifold_job, warm_up_umap
from explorer.core.projection.manifold import knn as knn_memo
from explorer.core.projection.manifold.quality import layout_trustworthiness
from explorer.core.units import format_seconds as _t

__all__ = ["LayoutBench", "bench_layouts", "format_layouts"]

TSNE_TARGET_S = 30.0
TSNE_TRUST_TARGET = 0.9
WARM_TARGET_S = 1.0
SPEEDUP_TARGET = 2.0
TRUST_SLACK = 0.01


@dataclass(frozen=True)
class LayoutBench:
    """Measured layouts of a whole vocabulary (seconds of wall time)."""

    spec: str
    rows: int
    graph_s: float
    graph_exact: bool
    graph_recall: float
    exact_graph_s: float
    umap_compile_s: float
    pca_cold_s: float
    pca_warm_s: float
    tsne_cold_s: float
    tsne_warm_s: float
    tsne_first_layout_s: float
    tsne_trust5: float
    tsne_trust15: float
    umap_cold_s: float
    umap_layout_s: float
    umap_warm_s: float
    umap_trust5: float
    umap_trust15: float
    baseline_umap_s: float
    baseline_trust5: float
    baseline_trust15: float
    baseline_recall: float
    baseline_compile_s: float
    cpu_s: float
    wall_s: float
    #: every timed run, in the order run (umap-learn and the app in turn); the figures above are the best
    umap_layout_runs: tuple[float, ...] = ()
    baseline_umap_runs: tuple[float, ...] = ()

    def as_json(self) -> dict:
        return asdict(self)


def _trust(unit: np.ndarray, coords: np.ndarray, seed: int) -> tuple[float, float]:
    return tuple(layout_trustworthiness(unit, coords, seed, n_neighbors=k)[0] for k in (5, 15))


def _timed(job) -> tuple[ManifoldResult, float, float | None, float]:
    """(result, seconds, seconds to the first frame drawn, seconds to the final layout drawn: the
    frame of the last iteration or epoch, before the trustworthiness is measured)."""
    t0, first, final = time.perf_counter(), None, None
    while True:
        try:
            item = next(job)
        except StopIteration as stop:
            seconds = time.perf_counter() - t0
            return stop.value, seconds, first, seconds if final is None else final
        if isinstance(item, ManifoldResult):
            first = time.perf_counter() - t0 if first is None else first
            if item.n_iter and item.iteration == item.n_iter:
                final = time.perf_counter() - t0


def _baseline(unit: np.ndarray, seed: int):
    """umap-learn with its defaults (cosine, seeded): (coords, seconds, its kNN indices)."""
    import umap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        reducer = umap.UMAP(metric="cosine", random_state=seed)
        coords = reducer.fit_transform(unit)
        return np.asarray(coords, np.float32), time.perf_counter() - t0, reducer._knn_indices


def _warm_baseline(seed: int) -> None:
    """Compile NN-descent's code (umap-learn searches exactly below 4,096 rows)."""
    _baseline(np.random.default_rng(seed).standard_normal((4200, 8)).astype(np.float32), seed)


def _recall(approx: np.ndarray, exact: np.ndarray) -> float:
    k = min(approx.shape[1], exact.shape[1])
    hits = sum(len(np.intersect1d(a[:k], e[:k], assume_unique=False)) for a, e in zip(approx, exact))
    return hits / (len(exact) * k)


def bench_layouts(spec: str = "minilm", seed: int = 0) -> LayoutBench:
    """Lay out every row of ``spec`` (MiniLM by default) by PCA, t-SNE and UMAP, and umap-learn's defaults."""
    from explorer.core.projection.job import projection_job
    from explorer.core.sources import open_table

    t_all, c_all = time.perf_counter(), time.process_time()
    table = open_table(spec)
    unit = table.unit_matrix()
    unit = np.asarray(unit if unit is not None else table.matrix(), np.float32)
    unit = np.where(np.isfinite(unit), unit, 0)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-30)
    compile_s = warm_up_umap()
    t0 = time.perf_counter()
    _warm_baseline(seed)
    baseline_compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    exact = run_to_end(knn_graph_job(unit, bf16=False))
    exact_graph_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = run_to_end(knn_graph_job(unit))
    graph_s = time.perf_counter() - t0
    graph_recall = _recall(graph.indices, exact.indices)
    base, base_s, base_knn = _baseline(unit, seed)
    recall = _recall(base_knn, exact.indices[:, :base_knn.shape[1]])
    graph_exact = graph.exact
    del graph, exact

    with tempfile.TemporaryDirectory(prefix="explorer-bench-layouts-") as folder:
        cache = LayoutCache(folder, max_bytes=1 << 30)

        def run(method, **kw):
            knn_memo.forget_graphs()
            cold, cold_s, first, final = _timed(manifold_job(table, method, "all", seed=seed, cache=cache, **kw))
            warm, warm_s, _, _ = _timed(manifold_job(table, method, "all", seed=seed, cache=cache, **kw))
            if not warm.cached:
                raise BenchError(f"the second {method} of {spec} was computed again, not read from the layout cache")
            return cold, cold_s, warm_s, first, final

        umap_res, umap_s, umap_warm, _, umap_layout_s = run("umap")
        # a second pair, umap-learn then the app, cold again: a machine whose speed drifts (a shared VM's
        # second core) slows one of the pair; the best of each is compared
        base_runs, layout_runs = [base_s], [umap_layout_s]
        base_runs.append(_baseline(unit, seed)[1])
        knn_memo.forget_graphs()
        layout_runs.append(_timed(manifold_job(table, "umap", "all", seed=seed, cache=None))[3])
        tsne_res, tsne_s, tsne_warm, tsne_first, _ = run("tsne")
    pca = []
    for _ in range(2):
        t0 = time.perf_counter()
        run_to_end(projection_job(table, "all", 0, n_components=2, seed=seed))
        pca.append(time.perf_counter() - t0)
    return LayoutBench(spec, len(unit), graph_s, graph_exact, graph_recall, exact_graph_s, compile_s, pca[0], pca[1],
                       tsne_s, tsne_warm, tsne_first or 0.0,
                       *_trust(unit, tsne_res.coords, seed), umap_s, min(layout_runs), umap_warm,
                       *_trust(unit, umap_res.coords, seed),
                       min(base_runs), *_trust(unit, base, seed), recall, baseline_compile_s,
                       time.process_time() - c_all, time.perf_counter() - t_all, tuple(layout_runs), tuple(base_runs))


def _runs(r: dict) -> str:
    """", best of 2 each, run in turn: …" when the bench timed both more than once."""
    ours, theirs = r.get("umap_layout_runs") or (), r.get("baseline_umap_runs") or ()
    if len(ours) < 2 or len(theirs) < 2:
        return ""
    return (f", best of {len(ours)} each, run in turn: the app {' / '.join(_t(s) for s in ours)}, umap-learn "
            f"{' / '.join(_t(s) for s in theirs)}")


def format_layouts(r) -> list[str]:
    """Report lines for a LayoutBench (or its JSON form)."""
    r = r.as_json() if isinstance(r, LayoutBench) else r
    ok = lambda p: "PASS" if p else "FAIL"  # noqa: E731
    speedup = r["baseline_umap_s"] / max(r["umap_layout_s"], 1e-9)
    trust_gap = min(r["umap_trust5"] - r["baseline_trust5"], r["umap_trust15"] - r["baseline_trust15"])
    lines = [
        f"Layouts of all {r['rows']:,} rows of {r['spec']} (cosine, seeded; trustworthiness on 5,000 rows, "
        f"@5 / @15):",
        f"  neighbour graph (90 neighbours): exact {_t(r['exact_graph_s'])}; the app's "
        f"({'exact' if r['graph_exact'] else 'bfloat16 products'}) {_t(r['graph_s'])}, "
        f"{r['graph_recall']:.1%} of the exact neighbours; umap-learn's NN-descent finds "
        f"{r['baseline_recall']:.1%} of the exact 15",
        f"  UMAP cold, rows to the final layout drawn {_t(r['umap_layout_s'])} vs umap-learn's defaults "
        f"{_t(r['baseline_umap_s'])} (rows to layout{_runs(r)}): {speedup:.2f}× "
        f"[{ok(speedup >= SPEEDUP_TARGET)} >= {SPEEDUP_TARGET:.0f}×]; with its trustworthiness measured "
        f"{_t(r['umap_cold_s'])}; trustworthiness "
        f"{r['umap_trust5']:.3f} / {r['umap_trust15']:.3f} vs {r['baseline_trust5']:.3f} / {r['baseline_trust15']:.3f} "
        f"[{ok(trust_gap >= -TRUST_SLACK)} no more than {TRUST_SLACK} below]; "
        f"umap-learn timed with its NN-descent already compiled ({_t(r['baseline_compile_s'])} in a new process)",
        f"  UMAP warm (the layout cache): {_t(r['umap_warm_s'])} [{ok(r['umap_warm_s'] < WARM_TARGET_S)} "
        f"< {WARM_TARGET_S:.0f} s]; compiling UMAP's code once: {_t(r['umap_compile_s'])}",
        f"  t-SNE cold {_t(r['tsne_cold_s'])} [{ok(r['tsne_cold_s'] <= TSNE_TARGET_S)} <= {TSNE_TARGET_S:.0f} s], "
        f"first layout drawn after {_t(r['tsne_first_layout_s'])}; trustworthiness {r['tsne_trust5']:.3f} / "
        f"{r['tsne_trust15']:.3f} [{ok(r['tsne_trust5'] >= TSNE_TRUST_TARGET)} >= {TSNE_TRUST_TARGET}]",
        f"  t-SNE warm: {_t(r['tsne_warm_s'])} [{ok(r['tsne_warm_s'] < WARM_TARGET_S)} < {WARM_TARGET_S:.0f} s]",
        f"  PCA: {_t(r['pca_cold_s'])} cold, {_t(r['pca_warm_s'])} again (computed, not cached)",
    ]
    if r["cpu_s"] < 0.6 * r["wall_s"]:
        lines.append(f"  CPU time {_t(r['cpu_s'])} of {_t(r['wall_s'])} wall: the machine was busy; "
                     "the figures are slower than they would be")
    return lines
