"""The widgets a tour step can point at, by the names :mod:`explorer.core.tour.steps` uses."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

__all__ = ["resolve_target", "TARGETS"]

#: name -> (view to build first or None, how to reach the widget from the window and that view)
TARGETS: dict[str, tuple[str | None, Callable]] = {
    "token_strip": (None, lambda window, view: window.token_strip),
    "lookup_panels": ("lookup", lambda window, view: view.splitter),
    "lookup_pointer": ("lookup", lambda window, view: view.pointer),
    "lookup_backward": ("lookup", lambda window, view: view.backward),
    "cost_card": ("cost", lambda window, view: view.card_page),
    "why_page": ("cost", lambda window, view: view.why_page),
    "context_page": ("cost", lambda window, view: view.context_page),
    "random_page": ("similarity", lambda window, view: view.random_page),
    "projection": ("projection", lambda window, view: view.plot),
    "training_lesson": ("training", lambda window, view: view.lesson),
}


def resolve_target(name: str, window, view_of: Callable[[str], QWidget]) -> QWidget:
    """The widget called ``name``; ``view_of(view name)`` builds and returns a view."""
    view_name, reach = TARGETS[name]
    return reach(window, view_of(view_name) if view_name else None)
