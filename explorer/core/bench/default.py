"""What ``python -m explorer bench`` measures without options. No Qt here."""

from __future__ import annotations

import time

from explorer.core.bench.lookup import bench_lookup
from explorer.core.bench.opening import bench_open

__all__ = ["bench_default"]


def bench_default() -> dict:
    """Lookup on random:50257x768, PCA of that table, and opening ``minilm``
    (when its package is installed)."""
    from explorer.core import sources
    from explorer.core.geometry.vectors import pca_project

    table = sources.open_table("random:50257x768")
    out: dict = {"lookup": bench_lookup(table)}
    t0 = time.perf_counter()
    m = sources.open_table("random:50257x768").matrix()  # a fresh table: its cache is empty
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    proj = pca_project(m, n_components=10)
    pca_s = time.perf_counter() - t0
    out["pca"] = {
        "spec": table.spec,
        "rows": int(m.shape[0]),
        "dim": int(m.shape[1]),
        "components": int(proj.coords.shape[1]),
        "read_s": read_s,
        "seconds": pca_s,
        "explained_first": float(proj.explained[0]),
        "explained_total": float(proj.explained.sum()),
    }
    if sources.package_path("minilm") is not None:
        out["open"] = bench_open("minilm")
    return out
