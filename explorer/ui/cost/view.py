"""The Cost view: four pages, each its own widget that follows the state only
while it is on screen."""

from __future__ import annotations

from collections.abc import Generator

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from explorer.state.app_state import AppState
from explorer.ui.cost.card_page import CardPage
from explorer.ui.cost.compare_page import ComparePage
from explorer.ui.cost.context_page import ContextPage
from explorer.ui.cost.why_page import WhyPage

#: each page: its attribute, tab title and tooltip (its class in PAGE_CLASSES)
PAGES = [
    ("card_page", "Cost card", "Parameters and bytes of the loaded table, with their formulas"),
    ("compare_page", "Famous models", "The same figures for GPT-2, BERT, Llama 3, Gemma and the original Transformer"),
    ("why_page", "Why vectors", "The same tokens as ids, as one-hot vectors and as learned vectors"),
    ("context_page", "Context-free", "One word in two sentences reads one row; only later layers add context"),
]
PAGE_CLASSES = {"card_page": CardPage, "compare_page": ComparePage, "why_page": WhyPage, "context_page": ContextPage}


class CostView(QWidget):
    """What the table costs and why it is built this way.

    Signals
    -------
    token_selected(int)
        That of :class:`WhyPage`: the user clicked a token on its number line.
    """

    @classmethod
    def built_in_steps(cls, state: AppState) -> Generator[QWidget | None, None, CostView]:
        """The view made over several turns of the event loop (a generator for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`): the view first, which the page holds,
        then one page a step, each put in the view as it is made. Made in one go, it was
        96-142 ms of the tab's first show in a real window, and 347 ms in a monkey walk."""
        view = cls(state, with_pages=False)
        for key, title, tip in PAGES:
            yield view
            view._add_page(key, title, tip, PAGE_CLASSES[key](state))
        return view

    def __init__(self, state: AppState, parent=None, with_pages: bool = True):
        super().__init__(parent)
        lay = QVBoxLayout(self)  # its pages want their full height: the tab page scrolls
        lay.setContentsMargins(0, 0, 0, 0)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        lay.addWidget(self.pages)
        if with_pages:  # else built_in_steps adds them
            for key, title, tip in PAGES:
                self._add_page(key, title, tip, PAGE_CLASSES[key](state))

    def _add_page(self, key: str, title: str, tip: str, page: QWidget) -> None:
        setattr(self, key, page)
        self.pages.addTab(page, title)
        self.pages.setTabToolTip(self.pages.count() - 1, tip)

    @property
    def token_selected(self):
        """That of :class:`WhyPage`: the user clicked a token on its number line."""
        return self.why_page.token_selected

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
