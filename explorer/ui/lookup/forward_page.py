"""The lookup's forward page: the one-hot product and the pointer jump side
by side, the real check's verdict under them and the measurement."""

from __future__ import annotations

from collections.abc import Generator, Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from explorer.ui.lookup.measure_panel import MeasurePanel
from explorer.ui.lookup.onehot_panel import OneHotPanel
from explorer.ui.lookup.plots import elastic_label
from explorer.ui.lookup.pointer_panel import PointerPanel
from explorer.ui.style import SPACING

__all__ = ["ForwardPage", "panels_in_steps"]


def panels_in_steps() -> Generator[QWidget, None, tuple[OneHotPanel, PointerPanel]]:
    """The page's two panels, a plot a step of a view made over turns (a panel a step was
    75-106 ms, the idle builder's longest turn after SmolLM2 opened from the command line);
    each panel is yielded for the tab's page to hold until the view is done."""
    panels = []
    for kind in (OneHotPanel, PointerPanel):
        panel = kind()
        panels.append(panel)
        yield panel
        for make in panel.plot_steps():
            make()
            yield None
    onehot, pointer = panels
    return onehot, pointer


class ForwardPage(QWidget):
    """The two ways to read row i, the verdict of the real check and the measurement."""

    def __init__(self, parent=None, panels: Sequence[QWidget] = ()):
        """``panels``: the one-hot and pointer panels made beforehand (:func:`panels_in_steps`)."""
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        # made here, all at once: every step taken, the two panels are what the steps held out
        self.onehot, self.pointer = panels or [made for made in panels_in_steps() if made is not None]
        self.splitter.addWidget(self.onehot)
        self.splitter.addWidget(self.pointer)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 4)
        self.splitter.setSizes([500, 400])
        lay.addWidget(self.splitter, 1)
        # no word wrap: a height-for-width label makes the scroll area size the view by its size hint
        self.verdict = elastic_label("A real check on the loaded table: one_hot(i) @ E compared with E[i], "
                                     "value by value", rich=True)
        lay.addWidget(self.verdict)
        self.measure_panel = MeasurePanel()
        lay.addWidget(self.measure_panel)
