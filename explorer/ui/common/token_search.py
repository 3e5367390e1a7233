"""A search box for tokens, shared by the views that add tokens by name."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QCompleter, QLineEdit

from explorer.core.sources import EmbeddingTable
from explorer.core.tokens.words import find_token_ids

__all__ = ["TokenSearch"]


class TokenSearch(QLineEdit):
    """Type a piece (or #id) and press Enter: the box looks it up in the
    table ``table_of()`` gives and says what it found.

    Signals
    -------
    token_found(int)
        The id of the first match; the box is cleared.
    not_found(str)
        A sentence (HTML-escaped) saying that nothing matched.
    """

    token_found = Signal(int)
    not_found = Signal(str)

    def __init__(self, table_of: Callable[[], EmbeddingTable | None], parent=None):
        super().__init__(parent)
        self._table_of = table_of
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
        self._source = None
        self.returnPressed.connect(self._on_return_pressed)

    def set_completions(self, source) -> None:
        """``source()`` gives the pieces to offer; called the first time the box gets the focus."""
        self._source = source
        self._pieces.setStringList([])

    def focusInEvent(self, event) -> None:
        if self._source is not None:
            source, self._source = self._source, None
            self._pieces.setStringList(source())
        super().focusInEvent(event)

    def _on_return_pressed(self) -> None:
        query = self.text()
        table = self._table_of()
        if not query.strip() or table is None:
            return
        hits = find_token_ids(table, query, limit=1)
        if not hits:
            self.not_found.emit(f"No token “{html.escape(query)}” in this vocabulary")
            return
        self.clear()
        self.token_found.emit(int(hits[0]))
