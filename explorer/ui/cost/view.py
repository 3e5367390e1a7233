"""The Cost view: four pages, each its own widget that follows the state only
while it is on screen."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from explorer.state.app_state import AppState
from explorer.ui.cost.card_page import CardPage
from explorer.ui.cost.compare_page import ComparePage
from explorer.ui.cost.context_page import ContextPage
from explorer.ui.cost.tiles import TILE_STYLE
from explorer.ui.cost.why_page import WhyPage

PAGES = [
    ("card_page", "Cost card", "Parameters and bytes of the loaded table, with their formulas"),
    ("compare_page", "Famous models", "The same figures for GPT-2, BERT, Llama 3, Gemma and the original Transformer"),
    ("why_page", "Why vectors", "The same tokens as ids, as one-hot vectors and as learned vectors"),
    ("context_page", "Context-free", "One word in two sentences reads one row; only later layers add context"),
]


class CostView(QWidget):
    """What the table costs and why it is built this way.

    Signals
    -------
    token_selected(int)
        That of :class:`WhyPage`: the user clicked a token on its number line.
    """

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setStyleSheet(TILE_STYLE)
        lay = QVBoxLayout(self)  # its pages want their full height: the tab page scrolls
        lay.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        lay.addWidget(self.pages)
        self.card_page = CardPage(state)
        self.compare_page = ComparePage(state)
        self.why_page = WhyPage(state)
        self.context_page = ContextPage(state)
        for key, title, tip in PAGES:
            self.pages.addTab(getattr(self, key), title)
            self.pages.setTabToolTip(self.pages.count() - 1, tip)
        self.token_selected = self.why_page.token_selected

    def show_page(self, name: str) -> None:
        """Bring page ``name`` (card, compare, why, context) to the front."""
        self.pages.setCurrentWidget(getattr(self, f"{name}_page"))

    def current_page(self) -> str:
        """The name :meth:`show_page` takes for the page in front."""
        return next(key.removesuffix("_page") for key, _, _ in PAGES
                    if getattr(self, key) is self.pages.currentWidget())

    def comparison_csv(self) -> str:
        return self.compare_page.comparison_csv()

    def export_chart(self, path: str) -> None:
        """Write the famous-models charts to ``path`` (.png or .svg)."""
        self.compare_page.export_chart(path)
