"""The Similarity view: the chosen tokens compared three ways, and the
random-vector check; each page works only while it is on screen."""

from __future__ import annotations

from collections.abc import Generator, Sequence

from PySide6.QtWidgets import QTabWidget, QWidget

from explorer.state.app_state import AppState
from explorer.ui.similarity.heatmap import Heatmap
from explorer.ui.similarity.random_page import RandomPage
from explorer.ui.similarity.regimes_page import MAPS, RegimesPage, make_heatmap
from explorer.ui.style import SPACING, FitLayout


class SimilarityView(QWidget):
    """Similarity of the text's and the added tokens next to the scalar-id and
    one-hot regimes, and random vectors against the table's rows.

    Signals
    -------
    token_selected, pair_selected, token_added
        Those of :class:`RegimesPage` (a cell clicked, a token searched).
    """

    @classmethod
    def built_in_steps(cls, state: AppState) -> Generator[None, None, SimilarityView]:
        """The view made over several turns of the event loop (a generator for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`): its three heatmaps one a step (each two
        plots), then the rest. Made in one go, the view was 170-290 ms of a turn in a real window."""
        maps: list[Heatmap] = []
        for k in range(len(MAPS)):
            yield
            maps.append(make_heatmap(k))
        yield
        return cls(state, maps=maps)

    def __init__(self, state: AppState, parent=None, maps: Sequence[Heatmap] = ()):
        super().__init__(parent)
        lay = FitLayout(self)  # the heatmaps shrink to the page rather than scroll
        lay.setContentsMargins(SPACING, 0, SPACING, SPACING)
        self.pages = QTabWidget()
        self.pages.setDocumentMode(True)
        lay.addWidget(self.pages)
        self.regimes_page = RegimesPage(state, maps=maps)
        self.random_page = RandomPage(state)
        self.pages.addTab(self.regimes_page, "Three ways to compare tokens")
        self.pages.setTabToolTip(0, "Learned vectors next to scalar ids and one-hot vectors")
        self.pages.addTab(self.random_page, "Random vectors")
        self.pages.setTabToolTip(1, "Cosines of random Gaussian vectors at the table's d against its real rows")
        self.token_selected = self.regimes_page.token_selected
        self.pair_selected = self.regimes_page.pair_selected
        self.token_added = self.regimes_page.token_added

    def idle_parts(self) -> list:
        """Parts made on demand, for the app to make while the user is idle (the random page's plots, a
        part a look: made at its first show, they were about 25 ms of the tour's step 6 in a real window)."""
        return self.random_page.idle_parts()

    def show_page(self, name: str) -> None:
        """Bring page ``name`` (regimes, random) to the front."""
        self.pages.setCurrentWidget(getattr(self, f"{name}_page"))

    def current_page(self) -> str:
        """The name :meth:`show_page` takes for the page in front."""
        return "random" if self.pages.currentWidget() is self.random_page else "regimes"

    def export_plot(self, path: str, what: str = "matrix") -> None:
        """Save the matrices (``matrix``) or the histograms (``random``) as PNG or SVG."""
        page = self.random_page if what == "random" else self.regimes_page
        page.export_plot(path)

    def export_matrix_csv(self, path: str) -> int:
        """Write the learned-vector matrix as CSV; returns rows written."""
        return self.regimes_page.export_matrix_csv(path)
