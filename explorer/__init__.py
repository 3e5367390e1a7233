"""Token Embedding Explorer: see and understand token embedding matrices.

``explorer.show(obj)`` opens a tensor, an array, an ``nn.Embedding``, a
transformers model or a model spec in the window (see
:func:`explorer.viewer.show`). Importing this package stays cheap: Qt,
torch and the window are imported by ``show`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.viewer import show

__all__ = ["show"]

__version__ = "0.1.0"


def __getattr__(name: str):
    if name == "show":  # Qt and the window are imported on first use, not with the package
        from explorer.viewer import show

        return show
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
