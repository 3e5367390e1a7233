"""AppState: the single source of truth shared by every view.

Holds the loaded table, the text and its tokens, the selected token and the
tokens the user added. Setters return early when nothing changed, so views
can call them from their own signals without feedback loops.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from .core.sources import EmbeddingTable
from .core.tokens import Token, TokenizeError

__all__ = ["AppState"]

MAX_EXTRA_TOKENS = 200


class AppState(QObject):
    """Shared state with change signals.

    Signals
    -------
    model_changed(object)
        A new EmbeddingTable is loaded.
    text_changed(str)
    tokens_changed(list)
        The tokens of the text (list of Token) after a text or model change.
    tokenize_failed(str)
        The text cannot be tokenized for this table; the message says why.
    selected_token_changed(int)
        The selected token id (-1: none).
    extra_tokens_changed(list)
        Token ids the user added (neighbours clicked, searches).
    """

    model_changed = Signal(object)
    text_changed = Signal(str)
    tokens_changed = Signal(list)
    tokenize_failed = Signal(str)
    selected_token_changed = Signal(int)
    extra_tokens_changed = Signal(list)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._table: EmbeddingTable | None = None
        self._text = ""
        self._tokens: list[Token] = []
        self._tokenize_error = ""
        self._selected_id = -1
        self._selected_position = -1
        self._extra: list[int] = []

    # -- read --------------------------------------------------------------------
    @property
    def table(self) -> EmbeddingTable | None:
        return self._table

    @property
    def text(self) -> str:
        return self._text

    @property
    def tokens(self) -> list[Token]:
        return list(self._tokens)

    @property
    def tokenize_error(self) -> str:
        return self._tokenize_error

    @property
    def selected_id(self) -> int:
        return self._selected_id

    @property
    def selected_position(self) -> int:
        """Position of the selected token in the text, or -1 (e.g. a neighbour)."""
        return self._selected_position

    @property
    def extra_ids(self) -> list[int]:
        return list(self._extra)

    def in_range(self, token_id: int) -> bool:
        return self._table is not None and 0 <= token_id < self._table.vocab_size

    # -- write -------------------------------------------------------------------
    def set_table(self, table: EmbeddingTable) -> None:
        """Install a newly loaded table; re-tokenizes the text and keeps the
        selected position when it still exists."""
        if table is self._table:
            return
        position = self._selected_position
        self._table = table
        self._extra = []
        self._selected_id = -1
        self._selected_position = -1
        self.model_changed.emit(table)
        self.extra_tokens_changed.emit([])
        self._retokenize()
        if self._tokens:
            pos = position if 0 <= position < len(self._tokens) else self._first_selectable()
            self.select_position(pos)
        else:
            self.selected_token_changed.emit(-1)

    def set_text(self, text: str) -> None:
        if text == self._text:
            return
        self._text = text
        self.text_changed.emit(text)
        old_pos = self._selected_position
        self._retokenize()
        if self._tokens:
            pos = old_pos if 0 <= old_pos < len(self._tokens) else self._first_selectable()
            self._selected_position = -2  # force a fresh emit for the new tokens
            self.select_position(pos)
        elif self._selected_position != -1:
            self._selected_position = -1
            if self._selected_id != -1 and self._selected_id not in self._extra:
                self._selected_id = -1
                self.selected_token_changed.emit(-1)

    def select_position(self, position: int) -> None:
        """Select the token at ``position`` in the text."""
        if not 0 <= position < len(self._tokens):
            return
        tid = self._tokens[position].id
        if position == self._selected_position and tid == self._selected_id:
            return
        self._selected_position = position
        if not self.in_range(tid):
            tid = -1
        self._selected_id = tid
        self.selected_token_changed.emit(tid)

    def set_selected_token(self, token_id: int) -> None:
        """Select a token id (from a chip, a neighbour, a matrix row, a point).

        The first occurrence in the text becomes the selected position, if any.
        """
        if not self.in_range(token_id):
            return
        if token_id == self._selected_id:
            return
        pos = next((t.position for t in self._tokens if t.id == token_id), -1)
        if pos == -1 and 0 <= self._selected_position < len(self._tokens):
            pos = -1
        self._selected_position = pos
        self._selected_id = int(token_id)
        self.selected_token_changed.emit(self._selected_id)

    def add_extra_token(self, token_id: int) -> None:
        if not self.in_range(token_id) or token_id in self._extra:
            return
        self._extra = (self._extra + [int(token_id)])[-MAX_EXTRA_TOKENS:]
        self.extra_tokens_changed.emit(list(self._extra))

    def step_selection(self, delta: int) -> None:
        """Move the selection by ``delta`` tokens along the text (arrow keys)."""
        if not self._tokens:
            return
        pos = self._selected_position if self._selected_position >= 0 else (-1 if delta > 0 else len(self._tokens))
        self.select_position(max(0, min(len(self._tokens) - 1, pos + delta)))

    # -- helpers -----------------------------------------------------------------
    def _first_selectable(self) -> int:
        for t in self._tokens:
            if not t.special and self.in_range(t.id):
                return t.position
        return 0

    def _retokenize(self) -> None:
        tokens: list[Token] = []
        error = ""
        if self._table is not None and self._text:
            try:
                tokens = self._table.tokenizer.encode(self._text)
            except TokenizeError as exc:
                error = str(exc)
            except Exception as exc:  # a broken tokenizer must not take the app down
                error = f"the tokenizer failed on this text: {exc}"
        self._tokens = tokens
        self._tokenize_error = error
        self.tokens_changed.emit(list(tokens))
        if error:
            self.tokenize_failed.emit(error)
