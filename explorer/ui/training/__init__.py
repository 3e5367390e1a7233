"""The Training tab: controls, live charts and the view that joins them to ``state.training``."""

from explorer.ui.training.view import TrainingView

__all__ = ["TrainingView"]
