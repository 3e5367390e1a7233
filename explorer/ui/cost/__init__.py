"""The Cost view: the cost card, famous models compared, why vectors rather
than ids, and the context-free lookup; one widget per page."""

from explorer.ui.cost.view import CostView

__all__ = ["CostView"]
