"""``bench --record``: the A B rounds are measured for each model and reported."""

from __future__ import annotations

import json

from explorer.core.bench.record import RECORD_TARGET, bench_record, format_record


def test_bench_record_measures_both_sides_of_each_round():
    r = bench_record(rounds=2, steps_per_block=2, batch=1, seq=4)
    assert [c.model.split(" ")[0] for c in r.cases] == ["GPT-2", "Llama", "worst"]
    for c in r.cases:
        assert len(c.plain_s) == len(c.recorded_s) == len(c.plain_wall_s) == 2
        assert all(t > 0 for t in c.plain_s + c.recorded_s)
        assert 0 < c.vocab_size * c.dim < c.params
    tied = {c.model: c.tied for c in r.cases}
    assert tied["GPT-2 (tied)"] and not tied["Llama (untied)"]
    data = json.loads(json.dumps(r.as_json()))
    assert data["target"] == RECORD_TARGET and {"overhead", "passes"} <= data["cases"][0].keys()
    text = format_record(r)
    assert text.count("-- overhead") == 3 and "A B A B" in text
