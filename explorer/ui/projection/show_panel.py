"""The projection's "Show" controls: which points to draw (all, one group of
the colouring, the search hits), "Isolate selection" and "Show all", the
count of points shown, and the offer to run the token health check when
the points are to be coloured by it. Emits what the user asked for."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget
from superqt.utils import signals_blocked

from explorer.ui.common.wrapped_label import WrapLabel

__all__ = ["ShowControls"]


class ShowControls(QWidget):
    """Filter and isolate the projection's points.

    Signals
    -------
    show_chosen(str)
        ``all``, ``hits`` or ``group:<k>`` (the k-th group of the colouring).
    isolate_clicked()
        Show only the selected token, its neighbours and the search hits.
    show_all_clicked()
    health_requested()
        Run the token health check (to colour by its categories).
    """

    show_chosen = Signal(str)
    isolate_clicked = Signal()
    show_all_clicked = Signal()
    health_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.health_note = WrapLabel()
        self.health_button = QPushButton("Run the health check")
        self.health_button.setToolTip("Check every row and the tokenizer's round trips in the background "
                                      "(the Health view shows the full report)")
        self.health_button.clicked.connect(self.health_requested)
        grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(4)
        grid.addWidget(QLabel("Show"), 0, 0)
        self.combo = QComboBox()
        self.combo.setToolTip("Draw only the tokens of one group of the colouring (Colour by), or only the search hits")
        self.combo.setMinimumContentsLength(6)
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        grid.addWidget(self.combo, 0, 1, 1, 2)
        self.isolate_button = QPushButton("Isolate")
        self.isolate_button.setToolTip("Isolate the selection: show only the selected token, its nearest rows and the "
                                       "search hits")
        self.isolate_button.clicked.connect(self.isolate_clicked)
        self.all_button = QPushButton("Show all")
        self.all_button.setToolTip("Show every point again")
        self.all_button.clicked.connect(self.show_all_clicked)
        grid.addWidget(self.isolate_button, 1, 0, 1, 2)
        grid.addWidget(self.all_button, 1, 2)
        for w in (self.combo, self.isolate_button, self.all_button):
            w.setMinimumWidth(0)
        grid.setColumnStretch(1, 1)
        self.count_label = WrapLabel()
        self.search_label = WrapLabel()
        for w in (self.health_note, self.health_button):
            lay.addWidget(w)
        lay.addLayout(grid)
        lay.addWidget(self.count_label)
        lay.addWidget(self.search_label)
        self.set_choices([], 0)
        self.show_health_offer("")

    @property
    def choice(self) -> str:
        return self.combo.currentData() or "all"

    def set_choices(self, groups: list[tuple[str, int]], hits: int | None, current: str = "all") -> None:
        """Offer all points, the ``hits`` search hits (None: no search) and each (label, count) group."""
        with signals_blocked(self.combo):
            self.combo.clear()
            self.combo.addItem("All points", "all")
            if hits is not None:
                self.combo.addItem(f"Search hits ({hits:,})", "hits")
            for k, (label, count) in enumerate(groups):
                self.combo.addItem(f"Only {label} ({count:,})", f"group:{k}")
            self.combo.setCurrentIndex(max(0, self.combo.findData(current)))

    def choose(self, key: str) -> None:
        """As if the user chose ``key`` in the list (emits ``show_chosen``)."""
        self.combo.setCurrentIndex(max(0, self.combo.findData(key)))

    def show_counts(self, shown: int, total: int, isolated: bool) -> None:
        what = "isolated: the selection, its neighbours and the search hits" if isolated else ""
        text = f"Showing <b>{shown:,}</b> of {total:,} points"
        self.count_label.setText(text + (f" ({what})" if what else ""))
        self.all_button.setEnabled(shown < total or isolated)

    def show_search(self, text: str) -> None:
        """The search's count or its error (HTML; "" hides it)."""
        self.search_label.setText(text)
        self.search_label.setVisible(bool(text))

    def show_health_offer(self, note: str, running: bool = False) -> None:
        """Say why the points cannot be coloured by health yet ("" hides the offer)."""
        self.health_note.setText(note)
        self.health_note.setVisible(bool(note))
        self.health_button.setVisible(bool(note))
        self.health_button.setEnabled(not running)
        self.health_button.setText("Checking…" if running else "Run the health check")

    def _on_combo_changed(self, _i: int) -> None:
        self.show_chosen.emit(self.choice)
