"""The measurements behind ``python -m explorer bench``.

* :func:`bench_open` -- opening only the embedding table versus a full
  transformers model load, each in a fresh Python process so that imports
  and peak memory are measured honestly.
* :func:`bench_big_table` -- a Llama-3-70B-shaped bfloat16 table (2 GB)
  written to a temporary folder, then opened in a fresh process.
* :func:`bench_lookup` / :func:`iter_bench_lookup` -- gather versus one-hot
  @ E versus a bias-free linear layer on one-hot inputs, on a loaded table.
* :func:`bench_default` -- what ``bench`` runs without options.

Every function returns plain JSON-serialisable dicts; :func:`format_results`
turns them into a text report. No Qt here.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .errors import ExplorerError
from typing import Iterator, Sequence

__all__ = [
    "BenchError",
    "bench_open",
    "bench_big_table",
    "iter_bench_lookup",
    "bench_lookup",
    "bench_default",
    "format_results",
    "BIG_SHAPE",
    "BIG_TARGET_SECONDS",
    "BIG_TARGET_RSS_BYTES",
]


class BenchError(ExplorerError):
    """A benchmark that cannot run; the message says why and what to do."""


#: the big table: Llama 3 70B's embedding shape
BIG_SHAPE = (128_256, 8_192)
BIG_TARGET_SECONDS = 3.0
BIG_TARGET_RSS_BYTES = 1_000_000_000
_BIG_TENSOR = "model.embed_tokens.weight"

_SAMPLE_TEXT = "The cat sat on the mat, unhappiness notwithstanding."
_CHILD_TIMEOUT = 900
_MARKER = "@@BENCH@@"

# --------------------------------------------------------------------------
# Child processes
# --------------------------------------------------------------------------

# Each child script reads one JSON argument, measures from just before the
# first import its path needs until the work is done, and prints one JSON
# line after a marker. ru_maxrss is in KiB on Linux.
_CHILD_PRELUDE = r"""
import json, resource, sys, time
args = json.loads(sys.argv[1])
def _maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def _rss():
    # VmHWM is the peak of this process's own address space. ru_maxrss can
    # carry over the parent's peak across fork + exec on Linux, so it is only
    # the fallback.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return _maxrss()
baseline_rss = _rss()
t0 = time.perf_counter()
def report(t_import, t_open, t_done, work_key, **fields):
    # the timings and memory every child reports, then its own fields
    out = {
        "import_s": t_import - t0,
        "load_s": t_open - t_import,
        work_key: t_done - t_open,
        "seconds": t_done - t0,
        "peak_rss_bytes": _rss(),
        "ru_maxrss_bytes": _maxrss(),
        "baseline_rss_bytes": baseline_rss,
    }
    out.update(fields)
    print(%(marker)r + json.dumps(out), flush=True)
""" % {"marker": _MARKER}

_CHILD_EMBEDDING = _CHILD_PRELUDE + r"""
from explorer.core import sources
t_import = time.perf_counter()
table = sources.open_table(args["spec"])
t_open = time.perf_counter()
row = table.row(min(42, table.vocab_size - 1))
try:
    tokens = table.tokenizer.encode(args["text"])
except Exception:  # a toy vocabulary knows only its own words
    tokens = table.tokenizer.encode(table.example_text) if table.example_text else []
t_done = time.perf_counter()
report(t_import, t_open, t_done, "row_and_tokenize_s",
    vocab_size=table.vocab_size,
    dim=table.dim,
    dtype=table.dtype,
    tokens=len(tokens),
    row_finite=bool(abs(float(row.sum())) < float("inf")),
)
"""

_CHILD_TRANSFORMERS = _CHILD_PRELUDE + r"""
import torch
import transformers
t_import = time.perf_counter()
kw = dict(local_files_only=True, trust_remote_code=False)
if args.get("gguf_file"):
    model = transformers.AutoModelForCausalLM.from_pretrained(args["folder"], gguf_file=args["gguf_file"], **kw)
else:
    model = transformers.AutoModel.from_pretrained(args["folder"], **kw)
t_open = time.perf_counter()
emb = model.get_input_embeddings().weight
row = emb[min(42, emb.shape[0] - 1)].detach().float().numpy()
t_done = time.perf_counter()
report(t_import, t_open, t_done, "row_s",
    model_params=int(sum(p.numel() for p in model.parameters())),
    vocab_size=int(emb.shape[0]),
    dim=int(emb.shape[1]),
    dtype=str(emb.dtype).replace("torch.", ""),
)
"""

_CHILD_BIG = _CHILD_PRELUDE + r"""
from explorer.core import sources
t_import = time.perf_counter()
table = sources.open_table(args["folder"])
t_open = time.perf_counter()
rows = table.rows(args["ids"])
t_done = time.perf_counter()
report(t_import, t_open, t_done, "rows_s",
    vocab_size=table.vocab_size,
    dim=table.dim,
    dtype=table.dtype,
    rows_shape=list(rows.shape),
    rows_sum=float(rows.astype("float64").sum()),
)
"""


def _project_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _run_child(script: str, args: dict, what: str) -> dict:
    """Run ``script`` in a fresh interpreter; return its JSON result.

    Raises BenchError with the child's last error line when it fails.
    """
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_project_root()), env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, json.dumps(args)],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(_project_root()),
            timeout=_CHILD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what} took longer than {_CHILD_TIMEOUT} s and was stopped") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_MARKER):
            return json.loads(line[len(_MARKER):])
    err = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    last = err[-1] if err else f"exit status {proc.returncode}"
    raise BenchError(f"{what} failed: {last}")


# --------------------------------------------------------------------------
# Opening: embedding-only versus transformers
# --------------------------------------------------------------------------


def _transformers_target(spec: str) -> tuple[dict | None, str | None, Path | None]:
    """What transformers would load for ``spec``.

    Returns (child args or None, note when transformers is not measured,
    file(s) to pre-read into the page cache).
    """
    from . import sources

    low = spec.strip().lower()
    if low.startswith(("toy:", "random:")):
        return None, "toy and random tables exist only in the explorer; transformers has no model to load", None
    if low == "default":
        return (
            None,
            "the bundled model uses the explorer's own toy architecture, which transformers does not know",
            sources.resources_dir() / "default",
        )
    key = low[8:] if low.startswith("package:") else low
    if key in sources.PACKAGE_MODELS:
        path = sources.package_path(key)
        if path is None:
            raise BenchError(f"the model package for {key!r} is not installed; see `python -m explorer models`")
    else:
        path = Path(spec).expanduser()
        if not path.exists():
            repo = spec[3:] if low.startswith("hf:") else spec
            path = sources.find_in_cache(repo)
            if path is None:
                raise BenchError(f"{spec!r} is not a file, a folder, an installed package or a cached model")
    if path.is_dir():
        if (path / "config.json").is_file() and (
            any(path.glob("*.safetensors")) or (path / "model.safetensors.index.json").is_file()
        ):
            return {"folder": str(path)}, None, path
        ggufs = sorted(path.glob("*.gguf"))
        if ggufs:
            path = ggufs[0]
        else:
            return None, "the folder has no config.json beside its weights, so transformers cannot load it", path
    if path.suffix.lower() == ".gguf":
        return {"folder": str(path.parent), "gguf_file": path.name}, None, path
    if path.suffix.lower() == ".safetensors" and (path.parent / "config.json").is_file():
        return {"folder": str(path.parent)}, None, path.parent
    return None, "a lone weights file without config.json cannot be loaded by transformers", path


def _preread(path: Path | None) -> None:
    """Read the model's files once so both paths start with a warm page cache."""
    if path is None:
        return
    files = [path] if path.is_file() else [p for p in path.iterdir() if p.is_file()]
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(16 << 20):
                pass


def bench_open(spec: str, repeats: int = 1) -> dict:
    """Time opening ``spec`` embedding-only and with a full transformers load.

    Each measurement runs in a fresh interpreter (``sys.executable -c``):
    ``seconds`` runs from just before the first import the path needs until
    the table (or model) is open and one row has been read (and, for the
    embedding path, a short text tokenized); ``import_s`` is the part spent
    on the explicit imports at the top, ``load_s`` the open itself (lazy
    imports inside it included). ``peak_rss_bytes`` is the child's
    ru_maxrss. A warm-up embedding open runs first, so the GGUF tokenizer is
    already in the user's cache and the measured open is the normal, cached
    case; model files are pre-read into the OS page cache for both paths.

    Parameters
    ----------
    spec : str
        A model spec (see :func:`explorer.core.sources.open_table`).
    repeats : int
        Measurements per path; the one with the median time is reported.

    Returns
    -------
    dict
        ``spec``, ``embedding`` and ``transformers`` (dicts of figures, the
        latter None when transformers cannot load the spec),
        ``speedup`` (transformers seconds / embedding seconds, or None),
        ``memory_ratio`` and ``notes`` (list of str).

    Raises
    ------
    BenchError
        When the spec cannot be opened at all.
    """
    spec = (spec or "").strip()
    if not spec:
        raise BenchError("no model given to --open")
    notes: list[str] = []
    target, why_not, files = _transformers_target(spec)
    _preread(files)
    child = {"spec": spec, "text": _SAMPLE_TEXT}
    # warm-up: builds and caches the GGUF tokenizer, compiles .pyc files
    _run_child(_CHILD_EMBEDDING, child, f"opening {spec}")
    emb = _median_run(_CHILD_EMBEDDING, child, f"opening {spec}", repeats)
    if emb["dtype"] not in ("float32", "float16", "bfloat16", "float64"):  # a GGUF table
        notes.append(
            "One warm-up open ran first, so the GGUF tokenizer (built once, about 5 s) came from the user's "
            "cache: the measured open is the normal, cached case."
        )
    else:
        notes.append("One warm-up open ran first, so imports are compiled and files are in the OS page cache.")
    result = {
        "spec": spec,
        "text": _SAMPLE_TEXT,
        "embedding": emb,
        "transformers": None,
        "speedup": None,
        "memory_ratio": None,
        "notes": notes,
    }
    if target is None:
        notes.append(f"Only the embedding figures: {why_not}.")
        return result
    what = "transformers load of " + (target.get("gguf_file") or target["folder"])
    try:
        tf = _median_run(_CHILD_TRANSFORMERS, target, what, repeats)
    except BenchError as exc:
        notes.append(f"Only the embedding figures: the {exc}.")
        return result
    tf["call"] = (
        f"AutoModelForCausalLM.from_pretrained({target['folder']!r}, gguf_file={target['gguf_file']!r}, "
        "local_files_only=True)"
        if target.get("gguf_file")
        else f"AutoModel.from_pretrained({target['folder']!r}, local_files_only=True)"
    )
    result["transformers"] = tf
    result["speedup"] = tf["seconds"] / emb["seconds"] if emb["seconds"] > 0 else None
    result["memory_ratio"] = tf["peak_rss_bytes"] / emb["peak_rss_bytes"] if emb["peak_rss_bytes"] else None
    notes.append(
        "The transformers figure covers the model alone (no tokenizer), so the speed-up is a lower bound."
    )
    return result


def _median_run(script: str, args: dict, what: str, repeats: int) -> dict:
    runs = [_run_child(script, args, what) for _ in range(max(1, int(repeats)))]
    runs.sort(key=lambda r: r["seconds"])
    out = runs[len(runs) // 2]
    out["runs"] = len(runs)
    return out


# --------------------------------------------------------------------------
# The big table
# --------------------------------------------------------------------------


def write_bf16_table(folder: Path, shape: tuple[int, int] = BIG_SHAPE, chunk_rows: int = 4096, seed: int = 0) -> Path:
    """Write a random bfloat16 table as ``model.safetensors`` + ``config.json``.

    The safetensors header is written by hand (8-byte little-endian length,
    then JSON padded with spaces to a multiple of 8) and the data streamed in
    chunks of ``chunk_rows`` rows, so the whole table is never in memory.
    """
    import torch

    v, d = int(shape[0]), int(shape[1])
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    nbytes = v * d * 2
    header = {_BIG_TENSOR: {"dtype": "BF16", "shape": [v, d], "data_offsets": [0, nbytes]}}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    gen = torch.Generator().manual_seed(seed)
    with open(folder / "model.safetensors", "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for start in range(0, v, chunk_rows):
            n = min(chunk_rows, v - start)
            blk = torch.randn(n, d, generator=gen).mul_(0.02).to(torch.bfloat16)
            f.write(blk.view(torch.int16).numpy().tobytes())
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": v,
        "hidden_size": d,
        "torch_dtype": "bfloat16",
        "tie_word_embeddings": False,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    return folder


def bench_big_table(shape: tuple[int, int] = BIG_SHAPE, ids: Sequence[int] | None = None) -> dict:
    """Open a 128,256 x 8,192 bfloat16 table (2.1 GB) in a fresh process.

    The table is written to a temporary folder (deleted afterwards); the
    child times ``open_table(folder)`` plus reading rows 0, 42 and the last.
    Targets: open under :data:`BIG_TARGET_SECONDS` s and peak RSS under
    :data:`BIG_TARGET_RSS_BYTES` bytes.
    """
    v, d = int(shape[0]), int(shape[1])
    nbytes = v * d * 2
    ids = [0, min(42, v - 1), v - 1] if ids is None else [int(i) for i in ids]
    base = Path(tempfile.gettempdir())
    free = shutil.disk_usage(base).free
    if free < nbytes + (256 << 20):
        raise BenchError(
            f"the big-table benchmark needs {nbytes / 1e9:.2f} GB free in {base}, only {free / 1e9:.2f} GB are"
        )
    tmp = Path(tempfile.mkdtemp(prefix="explorer-bigtable-"))
    try:
        t0 = time.perf_counter()
        write_bf16_table(tmp, (v, d))
        write_s = time.perf_counter() - t0
        child = _run_child(_CHILD_BIG, {"folder": str(tmp), "ids": ids}, "opening the big table")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "shape": [v, d],
        "dtype": "bfloat16",
        "file_bytes": nbytes,
        "write_s": write_s,
        "ids": ids,
        **child,
        "target_seconds": BIG_TARGET_SECONDS,
        "target_rss_bytes": BIG_TARGET_RSS_BYTES,
        "seconds_pass": child["seconds"] < BIG_TARGET_SECONDS,
        "rss_pass": child["peak_rss_bytes"] < BIG_TARGET_RSS_BYTES,
        "notes": [
            "Written just before the measurement, so the file is in the OS page cache; only the header and "
            "the three rows' pages are touched by the open.",
        ],
    }


# --------------------------------------------------------------------------
# Lookup: gather versus one-hot
# --------------------------------------------------------------------------


def _median_time(fn, repeats: int) -> tuple[float, object]:
    """Best time of ``repeats`` runs after a warm-up.

    The minimum, not the median: on a busy 2-core machine a microsecond
    gather sometimes waits a whole scheduler slice (8 ms) for torch's second
    thread; the minimum is the cost of the operation itself.
    """
    out = fn()  # warm-up (allocations, kernel choice)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def iter_bench_lookup(
    table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5, seed: int = 0
) -> Iterator[float | dict]:
    """Generator form of :func:`bench_lookup`: yields progress fractions in
    [0, 1], then the result dict as its last item. Stop it between yields to
    cancel.

    Gather and one-hot paths are timed on E = ``table.torch_table()`` as
    float32 (V, d), at torch's current thread count. Times are the best of
    ``repeats`` runs after one warm-up (the gather, costing microseconds,
    gets 20x as many runs); the one-hot vector is built inside the timed
    region.
    """
    import torch
    import torch.nn.functional as F

    repeats = max(1, int(repeats))
    batch_sizes = [int(b) for b in batch_sizes]
    yield 0.0
    t0 = time.perf_counter()
    e = table.torch_table()
    stored = str(e.dtype).replace("torch.", "")
    e = e.detach().to(torch.float32).contiguous()
    load_s = time.perf_counter() - t0
    v, d = e.shape
    yield 0.1
    linear = torch.nn.Linear(v, d, bias=False)
    with torch.no_grad():
        # weight (d, V) = E.T: x @ weight.T = x @ E; shares E's storage
        linear.weight = torch.nn.Parameter(e.T, requires_grad=False)
    gen = torch.Generator().manual_seed(seed)
    finite = bool(torch.isfinite(e).all())
    rows = []
    n_steps = len(batch_sizes) * 3
    step = 0
    with torch.no_grad():
        for b in batch_sizes:
            ids = torch.randint(0, v, (b,), generator=gen)
            gather_s, g = _median_time(lambda: F.embedding(ids, e), repeats * 20)
            step += 1
            yield 0.1 + 0.9 * step / n_steps
            onehot_s, o = _median_time(lambda: F.one_hot(ids, v).float() @ e, repeats)
            step += 1
            yield 0.1 + 0.9 * step / n_steps
            linear_s, lin = _median_time(lambda: linear(F.one_hot(ids, v).float()), repeats)
            step += 1
            yield 0.1 + 0.9 * step / n_steps
            rows.append(
                {
                    "batch": b,
                    "gather_s": gather_s,
                    "onehot_s": onehot_s,
                    "linear_s": linear_s,
                    "ratio": onehot_s / gather_s if gather_s > 0 else float("inf"),
                    "linear_ratio": linear_s / gather_s if gather_s > 0 else float("inf"),
                    "agree": bool(torch.equal(g, o) and torch.equal(g, lin) and torch.equal(o, lin)),
                    "onehot_flops": 2 * v * d * b,
                }
            )
    yield {
        "spec": getattr(table, "spec", None),
        "vocab_size": int(v),
        "dim": int(d),
        "stored_dtype": stored,
        "compute_dtype": "float32",
        "threads": torch.get_num_threads(),
        "repeats": repeats,
        "gather_repeats": repeats * 20,
        "prepare_s": load_s,
        "finite": finite,
        "batches": rows,
        "notes": [] if finite else ["The table holds inf or NaN: one-hot @ E turns those columns into NaN, so the paths disagree."],
    }


def bench_lookup(table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5, seed: int = 0) -> dict:
    """Time gather, one-hot @ E and a bias-free nn.Linear on one-hot inputs.

    Parameters
    ----------
    table : EmbeddingTable
        Its ``torch_table()`` converted to float32 (V, d) is E.
    batch_sizes : ids per lookup (1-D batches of random ids).
    repeats : timed runs per measurement (median reported).

    Returns
    -------
    dict
        ``vocab_size``, ``dim``, ``threads``, and ``batches``: one dict per
        batch size with ``gather_s``, ``onehot_s``, ``linear_s`` (seconds),
        ``ratio`` (onehot_s / gather_s) and ``agree`` (the three outputs are
        torch.equal).
    """
    result = None
    for item in iter_bench_lookup(table, batch_sizes, repeats, seed):
        if isinstance(item, dict):
            result = item
    return result


# --------------------------------------------------------------------------
# Default
# --------------------------------------------------------------------------


def bench_default() -> dict:
    """Lookup on random:50257x768, PCA of that table, and opening ``minilm``
    (when its package is installed)."""
    from . import sources
    from .geometry import pca_project

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


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def _t(s: float | None) -> str:
    """Seconds with a unit that suits their size."""
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def _b(n: float | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1e6:,.1f} MB ({int(n):,} bytes)"


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
    lines += [f"  note: {n}" for n in r.get("notes", [])]
    return lines


def _format_lookup(r: dict) -> list[str]:
    lines = [
        f"Lookup on {r.get('spec') or 'the table'}: {r['vocab_size']:,} x {r['dim']:,} "
        f"(stored {r['stored_dtype']}, computed in float32), {r['threads']} torch thread(s), "
        f"best of {r['repeats']} runs ({r['gather_repeats']} for the gather)",
        f"  {'batch':>7}{'gather':>14}{'one-hot @ E':>14}{'nn.Linear':>14}{'one-hot/gather':>18}"
        f"{'one-hot FLOPs':>18}  equal",
    ]
    for b in r["batches"]:
        lines.append(
            f"  {b['batch']:>7,}{_t(b['gather_s']):>14}{_t(b['onehot_s']):>14}{_t(b['linear_s']):>14}"
            f"{b['ratio']:>17,.0f}x{b['onehot_flops']:>18,}  {'yes' if b['agree'] else 'NO'}"
        )
    lines += [f"  note: {n}" for n in r.get("notes", [])]
    return lines


def _format_pca(r: dict) -> list[str]:
    return [
        f"PCA of {r['spec']}: {r['rows']:,} x {r['dim']:,} -> {r['components']} components in "
        f"{_t(r['seconds'])} (reading the table: {_t(r['read_s'])}); first component explains "
        f"{100 * r['explained_first']:.2f} %, all {r['components']}: {100 * r['explained_total']:.2f} %"
    ]


def format_results(results: dict) -> str:
    """A readable report of any mix of ``open``, ``big_table``, ``lookup`` and
    ``pca`` results, with units and thousands separators."""
    blocks = []
    for key, fmt in (("lookup", _format_lookup), ("pca", _format_pca), ("open", _format_open), ("big_table", _format_big)):
        if results.get(key):
            blocks.append("\n".join(fmt(results[key])))
    return "\n\n".join(blocks) if blocks else "no benchmark results"
