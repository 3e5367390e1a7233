"""How much the training view's live charts cost the training itself.

``bench_training()`` measures steps per second of the core generator alone
(headless) and of the same run driven by the TrainingView with its charts
redrawing (offscreen is fine), and their ratio. The charts may cost at most
20 % of the throughput. Run it with ``python -m explorer.training_bench``.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["bench_training"]


def _headless_rate(steps: int, cfg_kwargs: dict) -> float:
    from .core.training import TrainConfig, synthetic_corpus, training_job

    corpus = synthetic_corpus()
    cfg = TrainConfig(steps=steps, **cfg_kwargs)
    t0 = s0 = None
    last = 0
    for batch in training_job(corpus.ids, corpus.vocab_size, cfg, batch_seconds=0.03):
        if t0 is None:  # from the first batch on: model building and warm-up excluded
            t0, s0 = time.perf_counter(), batch[-1].step
        last = batch[-1].step
    return (last - s0) / max(time.perf_counter() - t0, 1e-9)


def _view_rate(steps: int, cfg_kwargs: dict, size: tuple[int, int]) -> tuple[float, list[float]]:
    from PySide6.QtCore import QEventLoop, QTimer

    from .app import make_app
    from .state import AppState
    from .ui.training_view import TrainingView
    from .workers import JobRunner, await_all_workers

    make_app()
    runner = JobRunner()
    view = TrainingView(AppState(), runner)
    view.resize(*size)
    view.show()
    view.set_config(**cfg_kwargs)
    marks: dict[str, float] = {}

    def _on_produced(value) -> None:
        h = view.history
        if "t0" not in marks and h is not None and h.n:
            marks["t0"], marks["s0"] = time.perf_counter(), h.last_step

    runner.produced.connect(_on_produced)
    loop = QEventLoop()
    QTimer.singleShot(600_000, loop.quit)
    view.run_steps_then(steps, loop.quit)
    loop.exec()
    t1 = time.perf_counter()
    done = view.history.last_step if view.history is not None else 0
    frames = view.frame_times_ms
    view.shutdown()
    await_all_workers(10_000)
    runner.produced.disconnect(_on_produced)
    view.deleteLater()
    return (done - marks.get("s0", 0)) / max(t1 - marks.get("t0", t1), 1e-9), frames


def bench_training(steps: int = 3000, size: tuple[int, int] = (900, 620), repeats: int = 5) -> dict:
    """Steps per second headless and with the view's charts running.

    Parameters
    ----------
    steps : int
        Steps per run (the view's default settings: d = 32, batch 64, Adam).
    size : (int, int)
        The view's size in pixels (about its tab in a 1280 x 800 window).
    repeats : int
        Runs of each kind, alternating; medians are reported (the machine may
        be shared).

    Returns
    -------
    dict
        headless_steps_per_s, view_steps_per_s (medians), ratio (median of
        view / headless over the pairs), charts_cost (1 - ratio), pair_ratios,
        frame_ms_mean, frame_ms_p95, frame_ms_max (the update part of a frame,
        painting excluded), frames.
    """
    import numpy as np

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    cfg_kwargs = dict(dim=32, batch_size=64, lr=0.01, optimizer="adam")
    headless, viewed, frames = [], [], []
    for _ in range(max(1, repeats)):
        headless.append(_headless_rate(steps, dict(cfg_kwargs, snapshot_every=20)))
        rate, f = _view_rate(steps, cfg_kwargs, size)
        viewed.append(rate)
        frames.extend(f)
    # the machine may be shared: pair each view run with the headless run just
    # before it and report the median of the pairs' ratios
    ratios = [v / h for h, v in zip(headless, viewed) if h > 0]
    ratio = float(np.median(ratios)) if ratios else None
    fr = np.asarray(frames or [0.0])
    return {
        "steps": steps,
        "headless_steps_per_s": round(float(np.median(headless)), 1),
        "view_steps_per_s": round(float(np.median(viewed)), 1),
        "ratio": round(ratio, 3) if ratio is not None else None,
        "charts_cost": round(1 - ratio, 3) if ratio is not None else None,
        "pair_ratios": [round(r, 3) for r in ratios],
        "frame_ms_mean": round(float(fr.mean()), 2),
        "frame_ms_p95": round(float(np.percentile(fr, 95)), 2),
        "frame_ms_max": round(float(fr.max()), 2),
        "frames": int(len(frames)),
    }


if __name__ == "__main__":
    print(json.dumps(bench_training(), indent=1))
