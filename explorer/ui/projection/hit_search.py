"""The projection's search box: the token search (Enter selects and adds a
token) that also highlights, as the user types, every piece containing the
text or matching a regular expression (the ``.*`` button)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget
from superqt.utils import qdebounced

from explorer.ui.common.token_search import TokenSearch
from explorer.ui.style import ERROR

__all__ = ["HitSearch"]

#: milliseconds of no typing before the hits are searched again
TYPING_MS = 150


class _Box(TokenSearch):
    """Enter selects the first hit when there are hits; otherwise it looks the token up as before."""

    def __init__(self, state, first_hit, parent=None):
        super().__init__(state, parent)
        self._first_hit = first_hit

    def _on_return_pressed(self) -> None:
        first = self._first_hit()
        if first is None:
            super()._on_return_pressed()
        elif first >= 0:
            self.token_found.emit(first)  # the text stays: its hits stay highlighted


class HitSearch(QWidget):
    """``box`` (a TokenSearch) and ``regex`` (a toggle).

    Signals
    -------
    query_changed(str, bool)
        The text to search for and whether it is a regular expression (debounced).
    """

    query_changed = Signal(str, bool)

    def __init__(self, state, first_hit, parent=None):
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.box = _Box(state, first_hit)
        self.box.setPlaceholderText("Find tokens…")
        self.box.setMinimumWidth(76)  # with the .* button, as narrow as the token search it replaces
        self.box.setToolTip("Type part of a piece: every token containing it is ringed and counted (.* for a "
                            "regular expression, e.g. ^un or ing$). Enter selects the first hit")
        self.regex = QToolButton()
        self.regex.setText(".*")
        self.regex.setCheckable(True)
        self.regex.setToolTip("Search with a regular expression (Python syntax, case ignored)")
        lay.addWidget(self.box, 1)
        lay.addWidget(self.regex)
        self._emit_later = qdebounced(self._emit_query, timeout=TYPING_MS, parent=self)
        self.box.textChanged.connect(self._emit_later)
        self.regex.toggled.connect(self._emit_query)

    @property
    def query(self) -> tuple[str, bool]:
        return self.box.text(), self.regex.isChecked()

    def search(self, text: str, regex: bool = False) -> None:
        """As if the user typed ``text`` (emits at once, without waiting for the debounce)."""
        self.regex.setChecked(regex)
        self.box.setText(text)
        self._emit_query()

    def show_error(self, bad: bool) -> None:
        """Frame the box in the error colour while its pattern is not valid."""
        self.box.setStyleSheet(f"QLineEdit {{ border: 1px solid {ERROR}; }}" if bad else "")

    def _emit_query(self, *_args) -> None:
        self.query_changed.emit(*self.query)
