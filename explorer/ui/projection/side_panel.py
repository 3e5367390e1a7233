"""The column beside the projection's plot: the readouts and the analogy
panel, scrolling when the window is short (usable at 1024 x 700)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHBoxLayout, QScrollArea, QVBoxLayout, QWidget

from explorer.ui.projection.analogy_panel import AnalogyPanel
from explorer.ui.projection.controls import ColourControls
from explorer.ui.projection.info_panel import ProjectionInfo
from explorer.ui.projection.lasso import LassoPanel
from explorer.ui.projection.show_panel import ShowControls
from explorer.ui.style import SPACING

__all__ = ["SidePanel"]


class SidePanel(QScrollArea):
    """``colour`` (ColourControls), ``show`` (ShowControls), ``lasso`` (LassoPanel) and ``info``
    (ProjectionInfo) over ``analogy``; with ``state``, the readouts' intents go to it."""

    def __init__(self, state=None, parent=None):
        super().__init__(parent)
        side = QWidget()
        lay = QVBoxLayout(side)
        lay.setContentsMargins(SPACING, 0, 0, 0)
        lay.setSpacing(SPACING)
        self.colour = ColourControls()
        self.show = ShowControls()
        self.info = ProjectionInfo()
        if state is not None:  # "Compute again" under a layout read from the layout cache
            self.info.recompute_requested.connect(state.recompute_projection)
        self.lasso = LassoPanel()
        self.analogy = AnalogyPanel()
        lay.addWidget(self.colour)
        self._map_options = QHBoxLayout()  # how the cloud is drawn (density map, cluster labels)
        self._map_options.setSpacing(SPACING)
        lay.addLayout(self._map_options)
        lay.addWidget(self.show)
        lay.addWidget(self.lasso)
        lay.addWidget(self.info)
        lay.addWidget(self.analogy)
        lay.addStretch(1)
        self.setWidget(side)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setMaximumWidth(360)

    def minimumSizeHint(self) -> QSize:
        """As wide as the column's widest row of buttons (and the scroll bar), never
        narrower, so nothing in it is cut at the window's right edge (1024 px wide)."""
        hint = super().minimumSizeHint()
        inner = self.widget().minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
        return QSize(min(self.maximumWidth(), max(240, inner)), hint.height())

    def add_map_options(self, *widgets) -> None:
        """Toggles of how the cloud is drawn, in a row under the colour choice."""
        for w in widgets:
            self._map_options.addWidget(w)
        self._map_options.addStretch(1)
