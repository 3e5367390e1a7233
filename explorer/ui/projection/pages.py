"""The pages the plot shares its place with: a message (no model, a failure,
a cancelled fit) with a button to fit again, and the progress of the fit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from explorer.ui.common.progress import ProgressBar
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import style_as

__all__ = ["MessagePage", "BusyPage"]


def _centred(page: QWidget, label: WrapLabel, *row: QWidget) -> None:
    lay = QVBoxLayout(page)
    lay.addStretch(1)
    style_as(label, "EmptyState")
    label.setAlignment(Qt.AlignCenter)
    lay.addWidget(label)
    line = QHBoxLayout()
    line.addStretch(1)
    for w in row:
        line.addWidget(w)
    line.addStretch(1)
    lay.addLayout(line)
    lay.addStretch(1)


class MessagePage(QWidget):
    """What to do, or what went wrong; ``retry_button`` fits again."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = WrapLabel()
        self.retry_button = QPushButton("Fit again")
        self.retry_button.setToolTip("Fit the projection again with the chosen method and fit set")
        _centred(self, self.label, self.retry_button)


class BusyPage(QWidget):
    """The fit's progress, with Cancel (a JobBinding drives both)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.label = WrapLabel("Computing the projection…")
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumWidth(320)
        self.progress.setToolTip("The projection is computed in the background; the window stays usable")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop computing the projection")
        _centred(self, self.label, self.progress, self.cancel_button)
