"""Recently opened model specs, shared by the GUI and the command line.

Kept as a JSON list in the user's config folder (platformdirs). No Qt here.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

MAX_RECENT = 10


def _path() -> Path:
    override = os.environ.get("EXPLORER_CONFIG_DIR")
    if override:
        return Path(override) / "recent.json"
    import platformdirs

    return Path(platformdirs.user_config_dir("embedding-explorer")) / "recent.json"


def load() -> list[str]:
    """The recent specs, newest first (an unreadable file gives [])."""
    try:
        data = json.loads(_path().read_text())
    except (OSError, ValueError):
        return []
    return [s for s in data if isinstance(s, str)][:MAX_RECENT] if isinstance(data, list) else []


def with_first(specs: list[str], spec: str) -> list[str]:
    """``specs`` with ``spec`` first, once, at most :data:`MAX_RECENT` long (no file touched)."""
    return ([spec] + [s for s in specs if s != spec])[:MAX_RECENT]


def add(spec: str) -> list[str]:
    """Put ``spec`` first in the list and save it; returns the new list."""
    specs = with_first(load(), spec)
    p = _path()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        # a whole file or none: a reader (the picker's listing, another window) never sees it half written
        tmp = p.with_name(f".{p.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_text(json.dumps(specs, indent=1))
            os.replace(tmp, p)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only config folder must not break opening a model
    return specs
