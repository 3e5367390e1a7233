"""Token Embedding Explorer: see and understand token embedding matrices.

``explorer.show(obj)`` opens a tensor, an array, an ``nn.Embedding``, a
transformers model or a model spec in the window (see
:func:`explorer.viewer.show`). Importing this package stays cheap: Qt,
torch and the window are imported by ``show`` itself, and ``__version__`` is
read from the package metadata when first asked for.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.viewer import show

__all__ = ["show", "__version__"]

#: the distribution's name on PyPI and in the installed metadata
DISTRIBUTION = "embedding-explorer"


def _version() -> str:
    """The installed version, from the package metadata; run from a source
    tree that was never installed, the version its pyproject.toml names."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return "0+unknown"
    found = re.search(r'^\[project\][^\[]*?^version\s*=\s*"([^"]+)"', text, flags=re.M | re.S)
    return f"{found.group(1)}+source" if found else "0+unknown"


def __getattr__(name: str):
    if name == "show":  # Qt and the window are imported on first use, not with the package
        from explorer.viewer import show

        return show
    if name == "__version__":
        value = _version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
