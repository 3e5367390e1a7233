"""Opening a model: only its embedding table versus a full transformers load.

Each path is measured in a fresh interpreter (see :mod:`.harness`), so that
imports and peak memory count as they would for a user. No Qt here.
"""

from __future__ import annotations

from pathlib import Path

from explorer.core.bench.harness import CHILD_PRELUDE, BenchError, median_run, run_child

__all__ = ["bench_open", "SAMPLE_TEXT"]

SAMPLE_TEXT = "The cat sat on the mat, unhappiness notwithstanding."

_CHILD_EMBEDDING = CHILD_PRELUDE + r"""
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

_CHILD_TRANSFORMERS = CHILD_PRELUDE + r"""
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


def _transformers_target(spec: str) -> tuple[dict | None, str | None, Path | None]:
    """What transformers would load for ``spec``.

    Returns (child args or None, note when transformers is not measured,
    file(s) to pre-read into the page cache).
    """
    from explorer.core import sources

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
    if path is None or not (path.is_file() or path.is_dir()):  # a device or a missing path: nothing to warm
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
    imports inside it included). ``peak_rss_bytes`` is the child's own
    peak resident memory (VmHWM). A warm-up embedding open runs first, so the GGUF tokenizer is
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
    child = {"spec": spec, "text": SAMPLE_TEXT}
    # warm-up: builds and caches the GGUF tokenizer, compiles .pyc files
    run_child(_CHILD_EMBEDDING, child, f"opening {spec}")
    emb = median_run(_CHILD_EMBEDDING, child, f"opening {spec}", repeats)
    if emb["dtype"] not in ("float32", "float16", "bfloat16", "float64"):  # a GGUF table
        notes.append(
            "One warm-up open ran first, so the GGUF tokenizer (built once, about 5 s) came from the user's "
            "cache: the measured open is the normal, cached case."
        )
    else:
        notes.append("One warm-up open ran first, so imports are compiled and files are in the OS page cache.")
    result = {
        "spec": spec,
        "text": SAMPLE_TEXT,
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
        tf = median_run(_CHILD_TRANSFORMERS, target, what, repeats)
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
