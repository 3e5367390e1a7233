"""The column beside the projection's plot: the readouts and the analogy
panel, scrolling when the window is short (usable at 1024 x 700)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from ..style import SPACING
from .analogy_panel import AnalogyPanel
from .controls import ColourControls
from .info_panel import ProjectionInfo
from .show_panel import ShowControls

__all__ = ["SidePanel"]


class SidePanel(QScrollArea):
    """``colour`` (ColourControls), ``show`` (ShowControls) and ``info`` (ProjectionInfo) over ``analogy``."""

    def __init__(self, parent=None):
        super().__init__(parent)
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(SPACING, 0, 0, 0)
        lay.setSpacing(SPACING)
        self.colour = ColourControls()
        self.show = ShowControls()
        self.info = ProjectionInfo()
        self.analogy = AnalogyPanel()
        lay.addWidget(self.colour)
        lay.addWidget(self.show)
        lay.addWidget(self.info)
        lay.addWidget(self.analogy)
        lay.addStretch(1)
        self.setWidget(side)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setMinimumWidth(240)
        self.setMaximumWidth(360)
