"""A search box for tokens, shared by the views that add tokens by name."""

from __future__ import annotations

import html

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QCompleter, QLineEdit

from explorer.core.tokens.words import find_token_ids

__all__ = ["TokenSearch"]


class TokenSearch(QLineEdit):
    """Type a piece (or #id) and press Enter: the box looks it up in the
    state's table and says what it found. The pieces it offers as the user
    types are listed in a worker when a box first gets the focus on a model
    (a second of Python for a big vocabulary, which the model's opening
    does not wait for).

    Signals
    -------
    token_found(int)
        The id of the first match; the box is cleared.
    not_found(str)
        A sentence (HTML-escaped) saying that nothing matched.
    """

    token_found = Signal(int)
    not_found = Signal(str)

    def __init__(self, state, parent=None):
        super().__init__(parent)
        self._state = state
        self.setPlaceholderText("Find a token…")
        self.setClearButtonEnabled(True)
        self.setToolTip("Type a piece (or #id) and press Enter: the token is added, selected and labelled")
        self.setMinimumWidth(100)
        self._pieces = QStringListModel(self)
        comp = QCompleter(self._pieces, self)
        comp.setCaseSensitivity(Qt.CaseInsensitive)
        comp.setFilterMode(Qt.MatchStartsWith)
        comp.setMaxVisibleItems(12)
        self.setCompleter(comp)
        self.returnPressed.connect(self._on_return_pressed)
        state.model_changed.connect(self._on_state_model_changed)
        state.jobs.completions.finished.connect(self._pieces.setStringList)

    @property
    def offered(self) -> list[str]:
        """The pieces the box offers now (none until it was first used on this model)."""
        return self._pieces.stringList()

    def _on_state_model_changed(self, _table) -> None:
        self._pieces.setStringList([])

    def focusInEvent(self, event) -> None:
        if not self._pieces.rowCount():
            listed = self._state.jobs.completions.value
            if listed is not None:
                self._pieces.setStringList(listed)
            else:
                self._state.request_completions()
        super().focusInEvent(event)

    def _on_return_pressed(self) -> None:
        query = self.text()
        table = self._state.table
        if not query.strip() or table is None:
            return
        hits = find_token_ids(table, query, limit=1)
        if not hits:
            self.not_found.emit(f"No token “{html.escape(query)}” in this vocabulary")
            return
        self.clear()
        self.token_found.emit(int(hits[0]))
