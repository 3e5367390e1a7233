"""The local Hugging Face cache: where it is and which models it holds.

Read offline: nothing is ever downloaded. No Qt here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["hf_cache_dir", "find_in_cache", "cached_repos", "REPO_ID"]

#: what a repo id looks like: ``name`` or ``org/name`` of letters, digits, ``_.-``
REPO_ID = re.compile(r"[\w.-]+(/[\w.-]+)?", flags=re.ASCII)


def hf_cache_dir() -> Path:
    """The hub cache folder: ``HF_HUB_CACHE`` as set now, else huggingface_hub's
    default (which reads the environment only once, at its import)."""
    override = os.environ.get("HF_HUB_CACHE")
    if override:
        return Path(override)
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def find_in_cache(repo: str) -> Path | None:
    """The snapshot folder of ``repo`` in the local HF cache, or None.

    ``refs/main`` picks the snapshot when it names one; otherwise the newest.
    """
    if not REPO_ID.fullmatch(repo) or ".." in repo.split("/"):
        return None
    base = hf_cache_dir() / ("models--" + repo.replace("/", "--"))
    snaps = base / "snapshots"
    if not snaps.is_dir():
        return None
    ref = base / "refs" / "main"
    if ref.is_file():
        try:
            commit = ref.read_text(encoding="utf-8", errors="replace").strip()[:100]
        except OSError:
            commit = ""
        if re.fullmatch(r"[\w.-]+", commit, flags=re.ASCII) and commit not in (".", ".."):
            p = snaps / commit
            if p.is_dir():
                return p
    candidates = sorted((p for p in snaps.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    return candidates[0] if candidates else None


def cached_repos() -> list[str]:
    """Model repos in the local HF cache that hold safetensors or GGUF weights."""
    base = hf_cache_dir()
    if not base.is_dir():
        return []
    repos = []
    for d in sorted(base.glob("models--*")):
        repo = d.name[len("models--") :].replace("--", "/")
        snap = find_in_cache(repo)
        if snap is None:
            continue
        has_weights = any(snap.glob("*.safetensors")) or any(snap.glob("*.gguf"))
        if has_weights or (snap / "model.safetensors.index.json").exists():
            repos.append(repo)
    return repos
