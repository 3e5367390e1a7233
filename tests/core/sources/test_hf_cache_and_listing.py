"""Models in the local Hugging Face cache, and the picker's listing of every
source (which reads headers, never tables)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.core import sources
from explorer.core.sources import SourceError, open_table
from explorer.core.tokens.tokenize import HFTokenizer


def _fake_hf_cache(root: Path, repo: str, current: Path, stale: Path | None = None) -> Path:
    """The hub cache layout: blobs, snapshots/<hash>/ with symlinks, refs/main."""
    base = root / ("models--" + repo.replace("/", "--"))
    (base / "blobs").mkdir(parents=True)
    (base / "refs").mkdir()
    for n, (src, commit) in enumerate(((stale, "0" * 40), (current, "a1b2c3" + "d" * 34))):
        if src is None:
            continue
        snap = base / "snapshots" / commit
        snap.mkdir(parents=True)
        for f in src.iterdir():
            blob = base / "blobs" / f"{n}-{f.name}"
            shutil.copy(f, blob)
            os.symlink(os.path.relpath(blob, snap), snap / f.name)
    (base / "refs" / "main").write_text("a1b2c3" + "d" * 34)
    return base


# --------------------------------------------------------------------------
# Hugging Face cache
# --------------------------------------------------------------------------


def test_hf_cache_repo(zoo, tmp_path, monkeypatch):
    current = zoo[("llama", "bfloat16", True, True)]
    stale = zoo[("gpt2", "float32", True, False)]
    cache = tmp_path / "hub"
    _fake_hf_cache(cache, "org/name", current.folder, stale.folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    for spec in ("org/name", "hf:org/name"):
        t = open_table(spec)
        assert t.kind == "cache"
        assert t.name == "org/name"
        # refs/main picks the current snapshot, not the other one
        np.testing.assert_array_equal(t.matrix(), current.embedding)
        assert t.dtype == "bfloat16" and t.tied is True
        assert isinstance(t.tokenizer, HFTokenizer)
        # the spec it reports opens the same table again
        np.testing.assert_array_equal(open_table(t.spec).matrix(), current.embedding)
    assert "org/name" in sources.cached_repos()
    with pytest.raises(SourceError, match="not a file, a folder or a model in the local Hugging Face cache"):
        open_table("org/other")
    with pytest.raises(SourceError, match="Hugging Face cache"):
        open_table("hf:nobody/nothing")


# --------------------------------------------------------------------------
# Listing
# --------------------------------------------------------------------------


def test_list_sources(minilm_dir, smollm2_path, zoo, tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    _fake_hf_cache(cache, "org/tiny", zoo[("bert", "float16", False, False)].folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    recent_folder = str(zoo[("gpt2", "float16", False, True)].folder)
    infos = {i.spec: i for i in sources.list_sources([recent_folder, str(tmp_path / "gone")])}
    assert infos["default"].origin == "bundled" and infos["default"].error is None
    for n in sources.TOY_NAMES:
        assert infos[f"toy:{n}"].vocab_size == open_table(f"toy:{n}").vocab_size
    assert (infos["minilm"].vocab_size, infos["minilm"].dim, infos["minilm"].dtype) == (30_522, 384, "float32")
    sm = infos["smollm2"]
    assert (sm.vocab_size, sm.dim, sm.dtype, sm.tied) == (49_152, 576, "Q8_0", True)
    assert infos["org/tiny"].origin == "cache" and infos["org/tiny"].dtype == "float16"
    assert infos["org/tiny"].tied is False
    assert infos[recent_folder].origin == "recent" and infos[recent_folder].dtype == "float16"
    gone = infos[str(tmp_path / "gone")]
    assert gone.error and "no such file" in gone.error


def _bytes_read() -> int:
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux's per-process I/O counters")
def test_peek_reads_headers_not_rows(tmp_path):
    """The picker's listing must not read tables or build tokenizers: a
    32 MB table is listed with a few kB read, and a folder whose
    tokenizer.json is broken is still listed (opening it says why not)."""
    from safetensors.torch import save_file

    w = torch.zeros(2048, 4096)  # 32 MB of float32, small enough that opening reads it all
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    (tmp_path / "tokenizer.json").write_text("{not a tokenizer")
    before = _bytes_read()
    info = sources.peek(str(tmp_path), "recent")
    read = _bytes_read() - before
    assert info.error is None and (info.vocab_size, info.dim, info.dtype) == (2048, 4096, "float32")
    assert read < 1024 * 1024
    with pytest.raises(SourceError, match="tokenizer file cannot be read"):
        open_table(str(tmp_path))
    (tmp_path / "tokenizer.json").unlink()
    before = _bytes_read()
    open_table(str(tmp_path)).matrix()
    assert _bytes_read() - before >= w.numel() * 4  # opening does read the rows
