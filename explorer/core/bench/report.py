"""The text report of ``python -m explorer bench``, and its JSON form. No Qt here."""

from __future__ import annotations

from explorer.core.bench.layouts import format_layouts
from explorer.core.bench.lookup import LookupMeasurement
from explorer.core.units import format_seconds as _t
from explorer.core.units import format_size_exact as _b

__all__ = ["format_results", "results_as_json"]


def _format_open(r: dict) -> list[str]:
    lines = [f"Opening {r['spec']}: embedding only versus a full transformers load"]
    e, tf = r["embedding"], r.get("transformers")
    lines.append(
        f"  table: V x d = {e['vocab_size']:,} x {e['dim']:,}, stored as {e['dtype']}"
    )
    header = f"  {'':<16}{'total':>12}{'imports':>12}{'open':>12}{'peak RSS':>36}"
    lines.append(header)
    for label, x in (("embedding only", e), ("transformers", tf)):
        if x is None:
            continue
        lines.append(
            f"  {label:<16}{_t(x['seconds']):>12}{_t(x['import_s']):>12}{_t(x['load_s']):>12}"
            f"{_b(x['peak_rss_bytes']):>36}"
        )
    if tf is not None:
        lines.append(f"  transformers call: {tf['call']}")
        lines.append(f"  model parameters: {tf['model_params']:,}")
    if r.get("speedup") is not None:
        lines.append(f"  speed-up: {r['speedup']:,.1f}x faster embedding-only (total time)")
    if r.get("memory_ratio") is not None:
        lines.append(f"  memory: {r['memory_ratio']:,.1f}x less peak resident memory embedding-only")
    lines += [f"  note: {n}" for n in r.get("notes", [])]
    return lines


def _format_big(r: dict) -> list[str]:
    v, d = r["shape"]
    ok = lambda p: "PASS" if p else "FAIL"  # noqa: E731
    lines = [
        f"Big table: {v:,} x {d:,} {r['dtype']} ({_b(r['file_bytes'])}), written in {_t(r['write_s'])}",
        f"  open + rows {r['ids']}: {_t(r['seconds'])} (imports {_t(r['import_s'])}, open {_t(r['load_s'])}, "
        f"rows {_t(r['rows_s'])}) -- target < {r['target_seconds']:g} s: {ok(r['seconds_pass'])}",
        f"  peak RSS: {_b(r['peak_rss_bytes'])} -- target < {_b(r['target_rss_bytes'])}: {ok(r['rss_pass'])}",
    ]
    if "big_neighbors_s" in r:
        lines.append(
            f"  one neighbour query: {_t(r['big_neighbors_s'])} (the first, which also measures every row's "
            f"norm: {_t(r['big_neighbors_first_s'])}), {r['big_neighbors_threads']} torch thread(s) "
            f"-- target <= {r['big_neighbors_target_seconds']:g} s: {ok(r['big_neighbors_pass'])}")
    if "health_s" in r:
        hv, hd = r["health_shape"]
        lines.append(
            f"  token health of {hv:,} x {hd:,} bfloat16"
            f"{' (E and its output matrix)' if r.get('health_matrices') == 2 else ''}: {_t(r['health_s'])}, peak RSS "
            f"{_b(r['health_peak_rss_bytes'])} -- targets <= {r['health_target_seconds']:g} s: "
            f"{ok(r['health_pass'])}, <= {_b(r['health_target_rss_bytes'])}: {ok(r['health_rss_pass'])}")
    if "health_minilm_s" in r:
        lines.append(f"  token health of MiniLM: {_t(r['health_minilm_s'])} -- target <= "
                     f"{r['health_minilm_target_seconds']:g} s: {ok(r['health_minilm_pass'])}")
    lines += [f"  note: {n}" for n in r.get("notes", [])]
    return lines


def _format_lookup(m: LookupMeasurement) -> list[str]:
    lines = [
        f"Lookup on {m.spec or 'the table'}: {m.vocab_size:,} x {m.dim:,} "
        f"(stored {m.stored_dtype}, computed in {m.compute_dtype}), {m.threads} torch thread(s), "
        f"best (shortest) of {m.repeats} interleaved runs ({m.gather_repeats} for the gather)",
        f"  {'batch':>7}{'gather':>14}{'one-hot @ E':>14}{'nn.Linear':>14}{'one-hot/gather':>18}"
        f"{'one-hot FLOPs':>18}  equal  spread  machine",
    ]
    for b in m.batches:
        spread = max((med / best if best > 0 else 1.0)
                     for med, best in ((b.gather_median_s, b.gather_s), (b.onehot_median_s, b.onehot_s)))
        lines.append(
            f"  {b.batch:>7,}{_t(b.gather_s):>14}{_t(b.onehot_s):>14}{_t(b.linear_s):>14}"
            f"{b.ratio:>17,.0f}x{b.onehot_flops:>18,}  {'yes' if b.agree else 'NO ':<5}{spread:>6.1f}x  "
            f"{'BUSY' if b.disturbed else 'quiet'}"
        )
    lines.append("  spread: the typical run over the best one; machine: BUSY when even the best runs waited "
                 "for a CPU after measuring again")
    lines += [f"  note: {n}" for n in m.notes]
    return lines


def _format_pca(r: dict) -> list[str]:
    return [
        f"PCA of {r['spec']}: {r['rows']:,} x {r['dim']:,} -> {r['components']} components in "
        f"{_t(r['seconds'])} (reading the table: {_t(r['read_s'])}); first component explains "
        f"{100 * r['explained_first']:.2f} %, all {r['components']}: {100 * r['explained_total']:.2f} %"
    ]


def format_results(results: dict) -> str:
    """A readable report of any mix of ``open``, ``big_table``, ``lookup``,
    ``pca`` and ``layouts`` results, with units and thousands separators."""
    blocks = []
    for key, fmt in (("lookup", _format_lookup), ("pca", _format_pca), ("open", _format_open),
                     ("big_table", _format_big), ("layouts", format_layouts)):
        if results.get(key):
            blocks.append("\n".join(fmt(results[key])))
    return "\n\n".join(blocks) if blocks else "no benchmark results"


def results_as_json(results: dict) -> dict:
    """``results`` with every typed result (a dataclass with ``as_json``) as
    plain data, for ``bench --json``."""
    return {key: (value.as_json() if hasattr(value, "as_json") else value) for key, value in results.items()}
