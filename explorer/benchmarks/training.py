"""How much the training view's live charts cost the training itself.

``bench_training()`` measures steps per second of the same run twice:
headless (the core job driven in a plain loop, every value applied to a
:class:`~explorer.core.training.session.TrainingSession`, no Qt) and in the
TrainingView (its worker, its signals, its charts redrawing; offscreen is
fine). Runs come in pairs, each view run compared with its headless partner
(alternately run first), since the machine may be shared; the median of the
pairs' ratios is reported. The charts may cost at
most 5 % of the throughput. Run it with ``python -m explorer bench --training``.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["bench_training", "format_training", "TARGET_COST"]

#: the live charts may cost at most this share of the headless throughput
TARGET_COST = 0.05
CONFIG = dict(dim=32, batch_size=64, lr=0.01, optimizer="adam")
#: the uncounted view run that warms Qt's and pyqtgraph's caches up
WARM_UP_STEPS = 300


def _headless_rate(steps: int) -> float:
    from explorer.core.training.config import TrainConfig
    from explorer.core.training.corpus import synthetic_corpus
    from explorer.core.training.job import StepBatch
    from explorer.core.training.session import TrainingSession

    session = TrainingSession()
    job = session.start(TrainConfig(steps=steps, **CONFIG), synthetic_corpus)
    t0 = s0 = None
    gen = job()
    try:
        while True:
            value = next(gen)
            if isinstance(value, tuple):  # progress while preparing
                continue
            session.apply(value)
            if t0 is None and isinstance(value, StepBatch):
                # from the first batch on: corpus, model and warm-up excluded
                t0, s0 = time.perf_counter(), session.last_step
    except StopIteration as stop:
        session.finish(stop.value)
    return (session.last_step - s0) / max(time.perf_counter() - t0, 1e-9)


def _view_rate(steps: int, size: tuple[int, int]) -> tuple[float, float, dict[str, list[float]]]:
    from PySide6.QtCore import QEventLoop, QTimer

    from explorer.app import make_app
    from explorer.state.app_state import AppState
    from explorer.ui.training import TrainingView
    from explorer.workers import await_all_workers

    make_app()
    state = AppState()
    view = TrainingView(state)
    view.resize(*size)
    view.show()
    view.set_config(**CONFIG)
    marks: dict[str, float] = {}

    def _on_stepped(step: int) -> None:
        if "t0" not in marks:
            marks["t0"], marks["s0"], marks["c0"] = time.perf_counter(), step, time.thread_time()

    state.training.stepped.connect(_on_stepped)
    loop = QEventLoop()
    QTimer.singleShot(600_000, loop.quit)
    view.run_steps_then(steps, loop.quit)
    loop.exec()
    t1, c1 = time.perf_counter(), time.thread_time()
    done = view.session.last_step
    times = {"frame": view.frame_times_ms(), "frame_cpu": view.frame_times_ms(cpu=True),
             "python_paint_cpu": view.paint_times_ms()}
    state.training.reset()
    await_all_workers(10_000)
    view.deleteLater()
    state.deleteLater()
    wall = max(t1 - marks.get("t0", t1), 1e-9)
    # the GUI thread's CPU time over the run: while it works it holds the GIL
    gui_share = (c1 - marks.get("c0", c1)) / wall
    return (done - marks.get("s0", 0)) / wall, gui_share, times


def _stats(values: list[float], prefix: str) -> dict:
    import numpy as np

    a = np.asarray(values or [0.0])
    return {f"{prefix}_ms_mean": round(float(a.mean()), 2), f"{prefix}_ms_p95": round(float(np.percentile(a, 95)), 2),
            f"{prefix}_ms_max": round(float(a.max()), 2), f"{prefix}s": len(values)}


def bench_training(steps: int = 3000, size: tuple[int, int] = (900, 620), repeats: int = 5) -> dict:
    """Steps per second headless and with the view's charts running.

    Parameters
    ----------
    steps : int
        Steps per run (d = 32, batch 64, Adam, the synthetic language).
    size : (int, int)
        The view's size in pixels (about its tab in a 1280 x 800 window).
    repeats : int
        Pairs of runs, headless and in the view (alternately first), after
        one short uncounted view run.

    Returns
    -------
    dict
        headless_steps_per_s, view_steps_per_s (medians), ratio (median over
        the pairs of view / headless), charts_cost (1 - ratio),
        pair_ratios, gui_cpu_share (the GUI thread's CPU time over the run's
        wall time, median), and for the frames: frame_ms_* (the update:
        setData and friends, wall clock) and frame_cpu_ms_* (its CPU time),
        python_paint_cpu_ms_* (the paints that run Python: the scatter plots;
        Qt paints the rest without the GIL), mean, p95 and max.
    """
    import numpy as np

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    headless, viewed, shares = [], [], []
    times: dict[str, list[float]] = {}
    # a short run first, not counted: the first charts of a process rasterise
    # their fonts and fill Qt's caches, once per session, not per frame
    _view_rate(WARM_UP_STEPS, size)
    for k in range(max(1, repeats)):
        # each pair in turn headless first and view first, so a drift of the
        # machine's speed during a pair does not always favour one side
        if k % 2 == 0:
            headless.append(_headless_rate(steps))
        rate, share, t = _view_rate(steps, size)
        if k % 2 == 1:
            headless.append(_headless_rate(steps))
        viewed.append(rate)
        shares.append(share)
        for name, values in t.items():
            times.setdefault(name, []).extend(values)
    ratios = [v / h for h, v in zip(headless, viewed) if h > 0]
    ratio = float(np.median(ratios)) if ratios else None
    return {
        "steps": steps,
        "headless_steps_per_s": round(float(np.median(headless)), 1),
        "view_steps_per_s": round(float(np.median(viewed)), 1),
        "headless_runs": [round(h, 1) for h in headless],
        "view_runs": [round(v, 1) for v in viewed],
        "ratio": round(ratio, 3) if ratio is not None else None,
        "charts_cost": round(1 - ratio, 3) if ratio is not None else None,
        "pair_ratios": [round(r, 3) for r in ratios],
        # the least disturbed runs of each kind (a shared machine only ever slows a run down)
        "best_ratio": round(max(viewed) / max(headless), 3),
        "charts_cost_best": round(1 - max(viewed) / max(headless), 3),
        "gui_cpu_share": round(float(np.median(shares)), 3),
        **_stats(times.get("frame", []), "frame"),
        **_stats(times.get("frame_cpu", []), "frame_cpu"),
        **_stats(times.get("python_paint_cpu", []), "python_paint_cpu"),
    }


def format_training(r: dict) -> str:
    """The figures as two lines for the terminal."""
    return (f"Training ({r['steps']:,} steps, d = 32, batch 64, Adam): {r['headless_steps_per_s']:,.0f} steps/s "
            f"headless, {r['view_steps_per_s']:,.0f} steps/s with the live charts (charts cost "
            f"{r['charts_cost']:.1%} of throughput, pairs {', '.join(f'{1 - x:.1%}' for x in r['pair_ratios'])}; "
            f"best run against best run {r['charts_cost_best']:.1%}; target at most {TARGET_COST:.0%})\n"
            f"  frame update {r['frame_ms_mean']:.1f} ms mean, {r['frame_ms_p95']:.1f} p95, "
            f"{r['frame_ms_max']:.1f} max "
            f"({r['frames']} frames; CPU {r['frame_cpu_ms_mean']:.1f} mean); Python paints "
            f"{r['python_paint_cpu_ms_mean']:.1f} ms mean, {r['python_paint_cpu_ms_max']:.1f} max "
            f"({r['python_paint_cpus']}); GUI thread busy {r['gui_cpu_share']:.1%} of the run")


if __name__ == "__main__":
    print(json.dumps(bench_training(), indent=1))
