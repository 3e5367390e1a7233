"""bench --big's whole-table passes (health, neighbours), on small tables in
fresh processes: the keys bench --big --json reports and its text."""

from __future__ import annotations

import json

from explorer.core import bench


def test_big_table_bench_reports_health_and_neighbours():
    r = bench.bench_big_table(shape=(600, 32), health_shape=(700, 48), minilm=False)
    data = json.loads(json.dumps(bench.results_as_json({"big_table": r})))["big_table"]
    for key in ("big_neighbors_s", "big_neighbors_first_s", "health_s", "health_peak_rss_bytes"):
        assert data[key] > 0, key
    assert data["health_shape"] == [700, 48] and data["health_flagged"] == 0  # random rows: nothing flagged
    assert data["big_neighbors_pass"] == (data["big_neighbors_s"] <= data["big_neighbors_target_seconds"])
    assert data["health_pass"] == (data["health_s"] <= 10.0)
    text = bench.format_results({"big_table": r})
    assert "one neighbour query" in text and "token health of 700 x 48 bfloat16" in text
