"""Finished t-SNE and UMAP layouts kept on disk, so the same request a second
time is drawn at once instead of recomputed for a minute.

The key is everything a layout depends on: the digest of the laid-out rows'
values (:func:`~explorer.core.projection.manifold.knn.rows_digest`; a model
retrained at the same path has other rows, hence another key), their token
ids, the method and every parameter, the seed, and a version of this code's
algorithms. A layout is never served for rows it was not made of.

Entries are ``.npz`` files (plain arrays, read with ``allow_pickle=False``) in
the user's cache folder (``EXPLORER_LAYOUT_CACHE``, else ``layouts/`` in
the app's cache folder), written to a temporary file and renamed, so a
crash or a cancel leaves no half-written entry. The folder is bounded in
size: the least recently used entries go first. Any error reading an entry
means it is ignored (and the layout recomputed); any error writing one means
the layout is not cached, and the result says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CACHE_VERSION", "MAX_CACHE_BYTES", "LayoutCache", "CachedLayout", "layout_key"]

#: bump when an algorithm change makes old layouts differ from what the code would compute now
CACHE_VERSION = 4  # 2: UMAP's own epochs, bfloat16 graph; 3: classes, bfloat16 margin; 4: capped pull, PCA start
#: the folder's bound: about 40 whole-vocabulary layouts of MiniLM
MAX_CACHE_BYTES = 64 << 20


def layout_key(digest: str, ids: np.ndarray, method: str, params: dict) -> str:
    """The key of a layout of rows with ``digest`` (their values) and token ``ids``,
    by ``method`` with ``params`` (every setting and the seed, JSON-serialisable)."""
    h = hashlib.sha256()
    h.update(json.dumps({"v": CACHE_VERSION, "rows": digest, "method": method, "params": params},
                        sort_keys=True).encode())
    h.update(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
    return h.hexdigest()[:40]


@dataclass(frozen=True)
class CachedLayout:
    """A stored layout: its coordinates (n, k) float32 and what was measured when it was made."""

    coords: np.ndarray
    trustworthiness: float | None
    trust_rows: int
    iteration: int
    n_iter: int
    seconds: float


class LayoutCache:
    """A folder of finished layouts, bounded to ``max_bytes``."""

    def __init__(self, folder: Path | str, max_bytes: int = MAX_CACHE_BYTES):
        self.folder = Path(folder)
        self.max_bytes = int(max_bytes)

    @classmethod
    def default(cls) -> LayoutCache:
        """The user's cache folder (``EXPLORER_LAYOUT_CACHE`` overrides it)."""
        override = os.environ.get("EXPLORER_LAYOUT_CACHE")
        if override:
            return cls(override)
        from explorer.core.sources import tokenizer_cache_dir

        return cls(tokenizer_cache_dir() / "layouts")

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.npz"

    def get(self, key: str, n: int, dims: int) -> CachedLayout | None:
        """The layout stored under ``key`` if it is whole and has ``n`` × ``dims``
        finite coordinates; None otherwise (missing, unreadable, or not what it should be)."""
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as z:
                coords = np.asarray(z["coords"], np.float32)
                meta = json.loads(str(z["meta"]))
            if coords.shape != (n, dims) or not np.isfinite(coords).all():
                return None
            trust = meta.get("trustworthiness")
            layout = CachedLayout(coords, None if trust is None else float(trust), int(meta.get("trust_rows", 0)),
                                  int(meta.get("iteration", 0)), int(meta.get("n_iter", 0)),
                                  float(meta.get("seconds", 0.0)))
        except Exception:  # noqa: BLE001 - missing, truncated (BadZipFile), corrupt, foreign: recompute
            return None
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass
        return layout

    def put(self, key: str, layout: CachedLayout) -> str:
        """Store ``layout`` under ``key``. Returns "" when stored, or a sentence
        saying why it could not be (the layout itself is unaffected)."""
        meta = {"trustworthiness": layout.trustworthiness, "trust_rows": layout.trust_rows,
                "iteration": layout.iteration, "n_iter": layout.n_iter, "seconds": layout.seconds}
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".layout-", suffix=".npz.part", dir=self.folder)
            with os.fdopen(fd, "wb") as f:
                np.savez(f, coords=np.asarray(layout.coords, np.float32), meta=np.array(json.dumps(meta)))
            os.replace(tmp, self._path(key))
            tmp = None
        except OSError as e:
            return f"The layout was not cached ({self.folder}: {e.strerror or e}); it will be computed again next time."
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        self._bound()
        return ""

    def _bound(self) -> None:
        """Remove the least recently used entries until the folder fits ``max_bytes``
        (and temporary files a killed process left over an hour ago)."""
        import time

        try:
            for p in self.folder.glob(".layout-*.part"):
                if time.time() - p.stat().st_mtime > 3600:
                    p.unlink()
            entries = []
            for p in self.folder.glob("*.npz"):
                st = p.stat()
                entries.append((st.st_mtime_ns, st.st_size, p))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, p in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            try:
                p.unlink()
                total -= size
            except OSError:
                pass
