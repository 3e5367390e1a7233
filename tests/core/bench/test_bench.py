"""The benchmark helpers (explorer.core.bench), on small tables only.

The 2 GB big-table write and the transformers loads are not run here; the
safetensors writer is checked on a tiny table instead.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from safetensors import safe_open

from explorer.core import bench
from explorer.core.sources import open_table


def test_bench_lookup_on_a_small_random_table():
    t = open_table("random:2000x32")
    r = bench.bench_lookup(t, batch_sizes=(1, 16), repeats=2)
    assert isinstance(r, bench.LookupMeasurement)
    assert (r.vocab_size, r.dim, r.stored_dtype, r.compute_dtype) == (2000, 32, "float32", "float32")
    assert r.finite is True and r.agree is True
    assert (r.repeats, r.gather_repeats) == (2, 2 * bench.lookup.GATHER_REPEATS_FACTOR)
    assert [b.batch for b in r.batches] == [1, 16]
    for b in r.batches:
        assert b.gather_s > 0 and b.onehot_s > 0 and b.linear_s > 0
        assert b.ratio == pytest.approx(b.onehot_s / b.gather_s)
        assert b.agree is True
        assert b.onehot_flops == 2 * 2000 * 32 * b.batch
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.batches[0].gather_s = 0.0
    # the --json form keeps the benchmark's key names
    data = json.loads(json.dumps(bench.results_as_json({"lookup": r})))["lookup"]
    assert {"spec", "vocab_size", "dim", "stored_dtype", "threads", "repeats", "gather_repeats", "finite",
            "batches", "notes"} <= set(data)
    assert set(data["batches"][0]) == {"batch", "gather_s", "onehot_s", "linear_s", "ratio", "linear_ratio",
                                       "agree", "onehot_flops", "gather_median_s", "onehot_median_s",
                                       "linear_median_s", "disturbed", "attempts"}
    assert data["threads"] == 1 and data["disturbed"] == r.disturbed
    for b in r.batches:  # the spread: the median run is never shorter than the best
        assert b.gather_median_s >= b.gather_s and b.onehot_median_s >= b.onehot_s
    assert data["batches"][1]["ratio"] == pytest.approx(r.batches[1].ratio)
    text = bench.format_results({"lookup": r})
    assert "2,000 x 32" in text and "gather" in text and "best" in text and "median" not in text


def test_best_time_is_the_minimum_of_the_runs():
    ticks = iter([0.0, 5.0, 10.0, 12.0, 20.0, 27.0])  # three timed runs: 5 s, 2 s, 7 s
    calls = []

    def fn():
        calls.append(1)
        return len(calls)

    best, out = bench.best_time(fn, 3, clock=lambda: next(ticks))
    assert best == 2.0 and out == 4 and len(calls) == 4  # a warm-up, then three timed calls


def test_iter_bench_lookup_yields_progress_then_returns_the_measurement():
    t = open_table("toy:gradient")
    gen = bench.iter_bench_lookup(t, batch_sizes=(3,), repeats=1)
    progress = []
    while True:
        try:
            progress.append(next(gen))
        except StopIteration as stop:
            result = stop.value
            break
    fractions = [f for f, _m in progress]
    assert all(isinstance(m, str) and m for _f, m in progress)
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == pytest.approx(1.0)
    assert any("one-hot @ E and nn.Linear in turn for 3 tokens" in m for _f, m in progress)
    assert isinstance(result, bench.LookupMeasurement) and result.batches[0].agree is True
    # cancelling between yields: closing the generator early is fine
    gen = bench.iter_bench_lookup(t, batch_sizes=(3,), repeats=1)
    assert next(gen)[0] == 0.0
    gen.close()


def test_bench_lookup_on_a_bf16_safetensors_table(tmp_path):
    folder = bench.write_bf16_table(tmp_path / "m", shape=(300, 16), chunk_rows=64, seed=3)
    t = open_table(str(folder))
    r = bench.bench_lookup(t, batch_sizes=(4,), repeats=1)
    assert r.stored_dtype == "bfloat16" and r.compute_dtype == "float32"
    assert r.batches[0].agree is True


def test_bench_lookup_with_an_inf_disagrees():
    t = open_table("random:500x8")
    m = t.matrix()
    m[7, 3] = np.inf  # the cached float32 copy is what torch_table() wraps
    r = bench.bench_lookup(t, batch_sizes=(64,), repeats=1)
    assert r.finite is False and r.notes and not r.agree


def test_hand_written_bf16_safetensors_is_valid(tmp_path):
    shape = (300, 16)
    folder = bench.write_bf16_table(tmp_path / "m", shape=shape, chunk_rows=64, seed=3)
    path = folder / "model.safetensors"
    assert path.stat().st_size % 8 == 0
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert n % 8 == 0
    header = json.loads(raw[8 : 8 + n])
    assert header["model.embed_tokens.weight"] == {
        "dtype": "BF16", "shape": list(shape), "data_offsets": [0, 300 * 16 * 2]}
    with safe_open(str(path), framework="pt") as f:
        e = f.get_tensor("model.embed_tokens.weight")
    assert e.dtype == torch.bfloat16 and tuple(e.shape) == shape
    # the same generator gives the same stream: chunks are what was written
    gen = torch.Generator().manual_seed(3)
    first = torch.randn(64, 16, generator=gen).mul_(0.02).to(torch.bfloat16)
    assert torch.equal(e[:64], first)
    assert 0.015 < float(e.float().std()) < 0.025
    cfg = json.loads((folder / "config.json").read_text())
    assert (cfg["vocab_size"], cfg["hidden_size"], cfg["model_type"]) == (300, 16, "llama")
    t = open_table(str(folder))
    assert (t.vocab_size, t.dim, t.dtype, t.tensor_name) == (300, 16, "bfloat16", "model.embed_tokens.weight")
    np.testing.assert_array_equal(t.rows([0, 42, 299]), e[[0, 42, 299]].float().numpy())


def test_bench_open_of_a_toy_gives_only_embedding_figures():
    r = bench.bench_open("toy:robot")
    e = r["embedding"]
    assert r["transformers"] is None and r["speedup"] is None
    assert e["vocab_size"] == 4 and e["dim"] == 3
    assert e["seconds"] >= e["import_s"] > 0
    # a fresh interpreter's own peak: more than nothing, far less than torch
    assert 5_000_000 < e["peak_rss_bytes"] < 1_000_000_000
    assert any("transformers" in n for n in r["notes"])
    text = bench.format_results({"open": r})
    assert "toy:robot" in text and "MB" in text


def test_bench_open_unknown_spec_raises():
    with pytest.raises(bench.BenchError):
        bench.bench_open("no/such-model-anywhere")


def test_the_bench_lookup_command_prints_a_table_and_json(capsys):
    from explorer.cli import dispatch as cli

    assert cli.main(["bench", "--lookup", "random:300x16"]) == 0
    out = capsys.readouterr().out
    assert "Lookup on random:300x16: 300 x 16" in out and "best (shortest) of 5 interleaved runs" in out
    assert "median" not in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "64 "))]
    assert [r[0] for r in rows] == ["1", "64"] and all(r[-3] == "yes" for r in rows)
    assert all(r[-1] in ("quiet", "BUSY") for r in rows)
    assert rows[1][-4] == f"{2 * 300 * 16 * 64:,}"  # one-hot FLOPs: 2·V·d per token
    assert cli.main(["bench", "--lookup", "random:300x16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["lookup"]
    assert (data["vocab_size"], data["dim"], data["stored_dtype"]) == (300, 16, "float32")
    assert [b["batch"] for b in data["batches"]] == [1, 64]
    assert all(b["agree"] and b["onehot_flops"] == 2 * 300 * 16 * b["batch"] for b in data["batches"])
