"""bench --big's whole-table passes (health, neighbours), each in a fresh
process on a small bfloat16 table: the keys bench --big --json reports and
its text."""

from __future__ import annotations

import json

from explorer.core import bench
from explorer.core.bench import big_table, passes


def test_health_and_neighbour_passes_are_reported(tmp_path):
    folder = bench.write_bf16_table(tmp_path / "m", shape=(700, 48), chunk_rows=128, seed=1)
    health = passes.bench_health(folder)
    near = passes.bench_neighbors(folder, (42, 600))
    assert health["health_s"] > 0 and health["flagged"] == 0  # random rows: nothing flagged
    assert health["threads"] >= 1 and health["peak_rss_bytes"] > 0
    assert near["neighbors_s"] > 0 and near["first_query_s"] > 0 and len(near["ids"]) == 10
    assert 42 not in near["first_ids"] and 600 not in near["ids"]
    fields = {**big_table._neighbors_fields(near), "health_shape": [700, 48], "health_s": health["health_s"],
              "health_peak_rss_bytes": health["peak_rss_bytes"], "health_target_seconds": 10.0,
              "health_target_rss_bytes": 1.5e9, "health_pass": True, "health_rss_pass": True}
    r = {"shape": [700, 48], "dtype": "bfloat16", "file_bytes": 1, "write_s": 0.1, "ids": [0], "seconds": 0.1,
         "import_s": 0.1, "load_s": 0.0, "rows_s": 0.0, "target_seconds": 3.0, "peak_rss_bytes": 1,
         "target_rss_bytes": 2, "seconds_pass": True, "rss_pass": True, **fields}
    assert json.loads(json.dumps(bench.results_as_json({"big_table": r})))["big_table"]["big_neighbors_s"] > 0
    text = bench.format_results({"big_table": r})
    assert "one neighbour query" in text and "token health of 700 x 48 bfloat16" in text


def test_the_health_pass_reads_both_ends_of_an_untied_table(tmp_path):
    from explorer.core.sources import open_table

    folder = bench.write_bf16_table(tmp_path / "m", shape=(600, 32), chunk_rows=128, seed=2, with_output=True)
    t = open_table(str(folder))
    assert t.tied is False and t.output_table().tensor_name == "lm_head.weight"
    assert not (t.output_table().rows([0, 599]) == t.rows([0, 599])).all()
    health = passes.bench_health(folder)
    assert health["side"] == "output" and health["flagged"] == 0  # random rows at both ends: nothing flagged
