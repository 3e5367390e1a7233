"""A thin strip over the plot while a t-SNE or UMAP layout converges: what
it is doing, how far it got, and Cancel. The layout itself is already on
the plot, moving; a JobBinding drives the progress, the text and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from explorer.ui.common.elided_label import ElidedLabel
from explorer.ui.common.progress import ProgressBar
from explorer.ui.style import SPACING

__all__ = ["RunStrip"]


class RunStrip(QWidget):
    """Status, progress and Cancel in one row; hidden when nothing runs."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING)
        self.label = ElidedLabel()  # a long status must not widen the page (at 1024 px it scrolled sideways)
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(240)
        self.progress.setToolTip("The layout is optimised in the background; the window stays usable")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the layout where it is (the points stay as they are now)")
        lay.addWidget(self.label, 1)
        lay.addWidget(self.progress)
        lay.addWidget(self.cancel_button)
        self.hide()
