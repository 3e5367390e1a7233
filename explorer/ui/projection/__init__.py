"""The Projection view, one widget per panel: controls, the plot and its
items, the label layer, the analogy panel and the readouts."""

from explorer.ui.projection.view import ProjectionView

__all__ = ["ProjectionView"]
