"""The text box and the text's tokens as clickable chips (piece over id)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from superqt.utils import qdebounced

from explorer.core.tokens.text import TokenizedText
from explorer.core.tokens.tokenize import MAX_TEXT_CHARS, IdTokenizer, NameTokenizer
from explorer.state.app_state import AppState
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import NO_MAXIMUM, SPACING, style_as
from explorer.ui.text.chip_view import ChipView
from explorer.ui.text.text_box import TextBox, qt_length

EXAMPLES = {
    "bundled": [
        "the quick fox chases the sleepy cat in the park .",
        "the pilot drove the red bus to the station .",
        "seven green boats were near the harbour .",
    ],
    "text": [
        "The river bank was quiet; the bank downtown was not.",
        "Unhappiness is unbelievably tokenizable.",
        "king - man + woman = queen",
        "The cat sat on the mat.",
    ],
}

#: lines of chips shown before the strip scrolls, by the window's height: a
#: long text must leave the views and the inspector their room in a short window
VISIBLE_LINES = ((1000, 4), (860, 3), (0, 2))


def visible_lines(window_height: int) -> int:
    """Lines of chips a window of this height shows before the strip scrolls."""
    return next(lines for least, lines in VISIBLE_LINES if window_height >= least)


class TokenStrip(QWidget):
    """Text box plus token chips.

    Signals
    -------
    text_edited(str)
        The user changed the text (debounced; Enter sends it at once).
    token_clicked(int)
        A chip was clicked: its position in the text.
    step_requested(int)
        Left/Right arrow on the chips: move the selection by -1/+1.
    """

    text_edited = Signal(str)
    token_clicked = Signal(int)
    step_requested = Signal(int)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, 0)
        outer.setSpacing(SPACING // 2)

        outer.addLayout(self._build_text_row())

        self.error = WrapLabel()
        style_as(self.error, "ErrorLine")
        self.error.hide()
        outer.addWidget(self.error)

        self.chips = ChipView()
        self.chips.setToolTip("Tokens: piece above, id below. Click one, or use ←/→.")
        self.empty = QLabel("Type some text to see its tokens")
        style_as(self.empty, "EmptyState")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(self.chips)
        scroll.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll = scroll
        outer.addWidget(self.empty)
        outer.addWidget(scroll)
        self.summary = WrapLabel()
        style_as(self.summary, "ChipId")
        outer.addWidget(self.summary)

        self._send_text = qdebounced(self._emit_text, timeout=200, parent=self)
        self.edit.textEdited.connect(self._on_edit_text_edited)
        self.edit.returnPressed.connect(self._on_edit_return_pressed)
        self.chips.chip_clicked.connect(self.token_clicked)
        self.chips.step_requested.connect(self.step_requested)

        state.tokens_changed.connect(self._on_state_tokens_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.text_changed.connect(self._on_state_text_changed)
        state.model_changed.connect(self._on_state_model_changed)
        state.tokenizing_changed.connect(self._on_state_tokenizing_changed)
        self._on_state_tokens_changed(state.tokenized)

    def _build_text_row(self) -> QHBoxLayout:
        """The text box (one limit for the box and the tokenizer) and the Examples menu."""
        row = QHBoxLayout()
        self.edit = TextBox()
        self.edit.setPlaceholderText("Type some text to see its tokens…")
        self.edit.setToolTip(f"Text to tokenize with the model's own tokenizer (Ctrl+L); "
                             f"up to {MAX_TEXT_CHARS:,} characters")
        self.edit.setClearButtonEnabled(True)
        # one limit for the box and the tokenizer: a longer paste is cut, and the summary says so
        self.edit.setMaxLength(MAX_TEXT_CHARS)
        self.examples = QToolButton()
        self.examples.setText("Examples")
        self.examples.setToolTip("Pick an example sentence")
        self.examples.setPopupMode(QToolButton.InstantPopup)
        self._menu = QMenu(self.examples)
        self.examples.setMenu(self._menu)
        row.addWidget(self.edit, 1)
        row.addWidget(self.examples)
        return row

    # -- user ---------------------------------------------------------------------------------
    def _on_edit_text_edited(self, _text: str) -> None:
        self._send_text()

    def _on_edit_return_pressed(self) -> None:
        self._send_text.flush()

    def _emit_text(self) -> None:
        self.text_edited.emit(self.edit.text())

    def _on_example_chosen(self, text: str) -> None:
        self._send_text.cancel()
        self.edit.setText(text)
        self.text_edited.emit(text)

    # -- state --------------------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        self._menu.clear()
        examples = [table.example_text] if table.example_text else []
        if isinstance(table.tokenizer, IdTokenizer):
            examples += ["42", "42 7 42", "0 1 2 3"]
        elif isinstance(table.tokenizer, NameTokenizer):
            examples += [" ".join(table.tokenizer.names)]
        elif table.kind == "bundled":
            examples += EXAMPLES["bundled"]
        else:
            examples += EXAMPLES["text"]
        for ex in dict.fromkeys(examples):
            act = self._menu.addAction(ex)
            act.triggered.connect(lambda _=False, t=ex: self._on_example_chosen(t))
        self.edit.setPlaceholderText(f"Type some text to see its tokens ({table.tokenizer.description})…")
        # the old model's chips go at once; the new ones arrive with tokens_changed, the strip keeping its
        # shape meanwhile: its empty state shown and hidden again within one switch laid the window out
        # twice more (showing a widget lays its parent out at once), every plot resized and repainted
        self.chips.set_tokens(self._state.tokenized)
        self._update_summary()

    def _on_state_text_changed(self, text: str) -> None:
        if self.edit.text() != text:
            self.edit.setText(text)

    def _on_state_tokenizing_changed(self, _busy: bool) -> None:
        self._update_summary()

    def _on_state_tokens_changed(self, tokenized: TokenizedText) -> None:
        err = tokenized.error
        # a failure of the tokenizer, or one sentence per kind of token that names no row
        lines = [str(err)] if err is not None else tokenized.problem_lines()
        self.error.setText(" · ".join(lines))
        self.error.setToolTip("Tokens that name no row of the table are drawn red; "
                              "hover over one, or click it, to see why" if tokenized.problems else "")
        self.error.setVisible(bool(lines))
        table = self._state.table
        self.chips.set_tokens(tokenized)
        has = bool(tokenized.tokens)
        # Showing a widget lays the strip out at once. The chips shown at the scroll area's default
        # height (94 px), the summary shown after them, the strip went 84 -> 140 -> 146 -> 98 px on a
        # model's first tokens, every view under it resized and painted twice in the open's longest turn.
        # Now the summary's words and the chips' height come first, then the one show, and the hide always
        # before the show (a hide waits for the next layout): the strip takes one step either way.
        self._update_summary()
        if has:
            self._fit_height()
            self.empty.hide()
            self.scroll.show()
        else:
            self.scroll.hide()
            self.empty.setVisible(err is None)
        self._fit_height()
        self.chips.set_selection(self._state.selected_position, self._state.selected_id)
        if table is None:
            self.empty.setText("Open a model, then type some text to see its tokens")
        else:
            self.empty.setText("Type some text to see its tokens")

    def _update_summary(self) -> None:
        tok = self._state.tokenized
        parts = []
        if tok.tokens:
            bad = tok.n_bad
            parts.append(f"{len(tok.tokens):,} tokens" + (f" ({bad:,} with no row)" if bad else "")
                         + f" · {tok.n_words:,} words · {tok.rows_read:,} distinct rows read")
        if tok.truncated:
            parts.append(f"only the first {tok.limit:,} of {len(tok.text):,} characters are tokenized")
        elif qt_length(self._state.text) >= MAX_TEXT_CHARS:  # as the box counts: a full box with emoji
            parts.append(f"the text box holds at most {MAX_TEXT_CHARS:,} characters; a longer text is cut there")
        if self._state.tokenizing:
            parts.append("tokenizing…")
        # always shown, no words giving it no height: showing it when its words came laid the strip
        # out at once, a step of its own; a new maximum height waits for the strip's next layout
        self.summary.setText(" · ".join(parts))
        self.summary.setMaximumHeight(NO_MAXIMUM if parts else 0)

    def _fit_height(self) -> None:
        """As tall as the chips need (up to a few lines), no taller."""
        width = max(200, self._chips_width())
        need = self.chips.heightForWidth(width)
        line = self.chips.minimumSizeHint().height() or 48
        lines = visible_lines(self.window().height())
        self.scroll.setFixedHeight(max(line + 4, min(need + 4, lines * (line + 6))))

    def _chips_width(self) -> int:
        """The width the chips are laid out in: the scroll area's viewport, or while it is hidden the
        strip's own width inside its margins, where the scroll area will go (it spans the strip)."""
        if self.scroll.isVisible():
            return self.scroll.viewport().width()
        margins = self.layout().contentsMargins()
        return self.contentsRect().width() - margins.left() - margins.right()

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if self._state.tokenized.tokens:
            self._fit_height()

    def window_resized(self) -> None:
        """The window's height changed: show as many lines of chips as it allows."""
        if self._state.tokenized.tokens:
            self._fit_height()

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        pos = self._state.selected_position
        self.chips.set_selection(pos, self._state.selected_id)
        if 0 <= pos < len(self._state.tokenized.tokens):
            r = self.chips.chip_rect(pos)
            self.scroll.ensureVisible(int(r.center().x()), int(r.center().y()), 0, int(r.height()))
