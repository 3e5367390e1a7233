"""What can be opened on this machine, with V, d and dtype from headers only.

The picker and ``python -m explorer models`` list every source through
:func:`peek`, which reads file headers (milliseconds) and never a row, a
tokenizer or an architecture: listing ten cached models must not read ten
tables. Toys are opened (they are a few numbers). No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from explorer.core.errors import ExplorerError, user_message
from explorer.core.sources import recent
from explorer.core.sources.checkpoint import embedding_shape, file_facts, folder_facts
from explorer.core.sources.common import PACKAGE_MODELS, TOY_NAMES, SourceError, package_path, shown
from explorer.core.sources.gguf_source import gguf_facts
from explorer.core.sources.hfcache import cached_repos, hf_cache_dir
from explorer.core.sources.specs import open_table, parse_random_spec, resolve_spec

__all__ = ["SourceInfo", "peek", "list_sources", "list_sources_job"]


@dataclass
class SourceInfo:
    """One line of the list of models.

    Attributes
    ----------
    spec : str
        Opens the source with :func:`open_table`.
    name : str
    origin : str
        bundled, toy, random, package, cache or recent.
    vocab_size, dim : int or None
    dtype : str or None
        As stored.
    tied : bool or None
    disk_bytes : int or None
    path : str or None
    error : str or None
        Why the headers could not be read (one line); None when they could.
    """

    spec: str
    name: str
    origin: str  # bundled, toy, random, package, cache, recent
    vocab_size: int | None = None
    dim: int | None = None
    dtype: str | None = None
    tied: bool | None = None
    disk_bytes: int | None = None
    path: str | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def peek(spec: str, origin: str) -> SourceInfo:
    """Header facts of a spec without reading rows or building a tokenizer.

    Never raises: a source that cannot be read comes back with ``error`` set.
    """
    try:
        return _peek(spec, origin)
    except ExplorerError as exc:
        return SourceInfo(spec=spec, name=spec, origin=origin, error=user_message(exc))
    except (OSError, MemoryError, RecursionError, ValueError) as exc:
        return SourceInfo(spec=spec, name=spec, origin=origin, error=user_message(exc))


def _peek(spec: str, origin: str) -> SourceInfo:
    r = resolve_spec(spec)
    if r.kind == "toy":
        t = open_table(spec)
        return SourceInfo(spec=spec, name=t.name, origin=origin, vocab_size=t.vocab_size, dim=t.dim,
                          dtype=t.dtype, tied=t.tied)
    if r.kind == "random":
        v, d, seed = parse_random_spec(r.value)
        return SourceInfo(spec=spec, name=f"Random {v:,} x {d:,} (seed {seed})", origin=origin,
                          vocab_size=v, dim=d, dtype="float32")
    name = None
    if r.kind == "default":
        name = "Bundled toy language model"
    elif r.kind == "package":
        if r.path is None:
            raise SourceError(f"the model package for {r.value!r} is not installed")
        name = PACKAGE_MODELS[r.value][2]
    elif r.kind == "cache":
        if r.path is None:
            raise SourceError(f"{shown(r.value)} is not in the local Hugging Face cache ({hf_cache_dir()})")
        name = r.value
    return _peek_path(Path(r.path), spec, origin, name)


def _peek_path(path: Path, spec: str, origin: str, name: str | None) -> SourceInfo:
    if not path.exists():
        raise SourceError(f"{shown(spec)}: no such file or folder; check the path")
    target = folder_facts(path, spec, deep=False) if path.is_dir() else path
    if isinstance(target, Path):
        with open(target, "rb") as f:
            head = f.read(4)
        if target.suffix.lower() != ".gguf" and head != b"GGUF":
            if target.suffix.lower() != ".safetensors":
                raise SourceError(f"{shown(spec)}: not a model folder, a .safetensors or a .gguf file")
            target = file_facts(target, deep=False)
    if isinstance(target, Path):
        g = gguf_facts(target, spec)
        return SourceInfo(spec=spec, name=name or g.name, origin=origin, vocab_size=g.vocab_size, dim=g.dim,
                          dtype=g.dtype, tied=g.tied, disk_bytes=target.stat().st_size, path=str(path))
    v, d, dtype, _ = embedding_shape(target, spec)
    return SourceInfo(spec=spec, name=name or target.name, origin=origin, vocab_size=v, dim=d, dtype=dtype,
                      tied=target.tied, disk_bytes=target.disk_bytes, path=str(path))


def list_sources(recent: Sequence[str] = ()) -> list[SourceInfo]:
    """Everything that can be opened on this machine, with V, d and dtype."""
    out = [peek("default", "bundled")]
    out += [peek(f"toy:{n}", "toy") for n in TOY_NAMES]
    out.append(
        SourceInfo(
            spec="random:50257x768",
            name="Random, GPT-2 small shape (any random:VxD works)",
            origin="random",
            vocab_size=50257,
            dim=768,
            dtype="float32",
        )
    )
    for key in PACKAGE_MODELS:
        if package_path(key) is not None:
            out.append(peek(key, "package"))
    for repo in cached_repos():
        out.append(peek(repo, "cache"))
    seen = {s.spec for s in out}
    for spec in recent:
        if spec not in seen:
            out.append(peek(spec, "recent"))
            seen.add(spec)
    return out


def list_sources_job(recent_specs: Sequence[str]):
    """:func:`list_sources` as a background job. ``recent_specs`` is the window's own list of
    recent models, first (its newest write to the file may not have landed); then come those
    that other windows and the command line added to the file."""
    yield 0.0, "Looking for models…"
    on_file = [s for s in recent.load() if s not in recent_specs]
    return list_sources((list(recent_specs) + on_file)[:recent.MAX_RECENT])
