"""The text box and the tokens as clickable chips (piece over id)."""

from __future__ import annotations

import html

from PySide6.QtCore import QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..core.tokens import Token, display_piece
from ..state import AppState
from .style import SPACING, mono_font

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


#: chips drawn at most; a pasted book still tokenizes, but only its start is drawn
MAX_CHIPS = 1000


class FlowLayout(QLayout):
    """Lays widgets left to right and wraps them, like words in a paragraph."""

    def __init__(self, parent=None, spacing: int = 4, word_gap: int = SPACING):
        super().__init__(parent)
        self._items = []
        self._spacing = spacing
        self._word_gap = word_gap

    def addItem(self, item):
        self._items.append(item)

    def count(self):
        return len(self._items)

    def itemAt(self, i):
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i):
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def expandingDirections(self):
        return Qt.Orientation(0)

    def hasHeightForWidth(self):
        return True

    def heightForWidth(self, width):
        return self._do_layout(QRect(0, 0, width, 0), True)

    def setGeometry(self, rect):
        super().setGeometry(rect)
        self._do_layout(rect, False)

    def sizeHint(self):
        return self.minimumSize()

    def minimumSize(self):
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _do_layout(self, rect, test_only):
        m = self.contentsMargins()
        x, y = rect.x() + m.left(), rect.y() + m.top()
        right = rect.right() - m.right()
        line_h = 0
        for item in self._items:
            w = item.widget()
            gap = 0 if (w is not None and w.property("wordStart") is False) else self._word_gap
            hint = item.sizeHint()
            if x > rect.x() + m.left():
                x += gap
            if x + hint.width() > right and line_h > 0:
                x = rect.x() + m.left()
                y += line_h + self._spacing
                line_h = 0
            if not test_only:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width()
            line_h = max(line_h, hint.height())
        return y + line_h - rect.y() + m.bottom()


class Chip(QFrame):
    """One token: its piece above its id."""

    clicked = Signal(int)

    def __init__(self, token: Token, text: str, parent=None):
        super().__init__(parent)
        self.setObjectName("Chip")
        self.position = token.position
        self.token_id = token.id
        self.setCursor(Qt.PointingHandCursor)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(0)
        piece = QLabel(display_piece(token.piece))
        piece.setObjectName("ChipPiece")
        piece.setFont(mono_font())
        piece.setAlignment(Qt.AlignCenter)
        ident = QLabel(f"{token.id:,}" if token.id >= 0 else "?")
        ident.setObjectName("ChipId")
        ident.setAlignment(Qt.AlignCenter)
        lay.addWidget(piece)
        lay.addWidget(ident)
        self.piece_label, self.id_label = piece, ident
        self.setProperty("special", token.special)
        self.setProperty("selected", False)
        self.setProperty("sameRow", False)
        shown = text[token.start : token.end]
        tip = [f"<b>{html.escape(display_piece(token.piece), quote=False)}</b> — id {token.id:,}"]
        if shown and shown != token.piece:
            tip.append(f"text: “{html.escape(shown, quote=False)}” (characters {token.start}–{token.end})")
        if token.special:
            tip.append("special token added by the tokenizer")
        tip.append("Click to see its row")
        self.setToolTip("<br>".join(tip))

    def mouseReleaseEvent(self, event: QMouseEvent):
        if event.button() == Qt.LeftButton and self.rect().contains(event.position().toPoint()):
            self.clicked.emit(self.position)
        super().mouseReleaseEvent(event)

    def set_flags(self, **flags) -> None:
        changed = False
        for k, v in flags.items():
            if self.property(k) != v:
                self.setProperty(k, v)
                changed = True
        if changed:
            self.style().unpolish(self)
            self.style().polish(self)


class _ChipArea(QWidget):
    step_requested = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)

    def keyPressEvent(self, event: QKeyEvent):
        if event.key() == Qt.Key_Left:
            self.step_requested.emit(-1)
        elif event.key() == Qt.Key_Right:
            self.step_requested.emit(+1)
        else:
            super().keyPressEvent(event)


class TokenStrip(QWidget):
    """Text box plus token chips.

    Signals
    -------
    text_edited(str)
        The user changed the text (debounced).
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
        self._chips: list[Chip] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, 0)
        outer.setSpacing(SPACING // 2)

        row = QHBoxLayout()
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("Type some text to see its tokens…")
        self.edit.setToolTip("Text to tokenize with the model's own tokenizer (Ctrl+L)")
        self.edit.setClearButtonEnabled(True)
        self.edit.setMaxLength(20000)
        self.examples = QToolButton()
        self.examples.setText("Examples")
        self.examples.setToolTip("Pick an example sentence")
        self.examples.setPopupMode(QToolButton.InstantPopup)
        self._menu = QMenu(self.examples)
        self.examples.setMenu(self._menu)
        row.addWidget(self.edit, 1)
        row.addWidget(self.examples)
        outer.addLayout(row)

        self.error = QLabel()
        self.error.setObjectName("ErrorLine")
        self.error.setWordWrap(True)
        self.error.hide()
        outer.addWidget(self.error)

        self.area = _ChipArea()
        self.area.setToolTip("Tokens: piece above, id below. Click one, or use ←/→.")
        self.flow = FlowLayout(self.area, spacing=6)
        self.flow.setContentsMargins(0, 2, 0, 2)
        self.empty = QLabel("Type some text to see its tokens")
        self.empty.setObjectName("EmptyState")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setWidget(self.area)
        scroll.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.scroll = scroll
        outer.addWidget(self.empty)
        outer.addWidget(scroll)
        self.summary = QLabel()
        self.summary.setObjectName("ChipId")
        outer.addWidget(self.summary)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self._on_debounce_timeout)
        self.edit.textEdited.connect(self._on_edit_text_edited)
        self.edit.returnPressed.connect(self._on_debounce_timeout)
        self.area.step_requested.connect(self.step_requested)

        state.tokens_changed.connect(self._on_state_tokens_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)
        state.text_changed.connect(self._on_state_text_changed)
        state.tokenize_failed.connect(self._on_state_tokenize_failed)
        state.model_changed.connect(self._on_state_model_changed)
        self._on_state_tokens_changed(state.tokens)

    # -- user ---------------------------------------------------------------------
    def _on_edit_text_edited(self, _text: str) -> None:
        self._debounce.start()

    def _on_debounce_timeout(self) -> None:
        self._debounce.stop()
        self.text_edited.emit(self.edit.text())

    def _on_example_chosen(self, text: str) -> None:
        self.edit.setText(text)
        self.text_edited.emit(text)

    # -- state ----------------------------------------------------------------------
    def _on_state_model_changed(self, table) -> None:
        self._menu.clear()
        from ..core.tokens import IdTokenizer, NameTokenizer

        examples = []
        if table.example_text:
            examples.append(table.example_text)
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
        hint = table.tokenizer.description
        self.edit.setPlaceholderText(f"Type some text to see its tokens ({hint})…")

    def _on_state_text_changed(self, text: str) -> None:
        if self.edit.text() != text:
            self.edit.setText(text)

    def _on_state_tokenize_failed(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()

    def _on_state_tokens_changed(self, tokens: list) -> None:
        if not self._state.tokenize_error:
            self.error.hide()
        for chip in self._chips:
            self.flow.removeWidget(chip)
            chip.deleteLater()
        self._chips = []
        text = self._state.text
        counts: dict[int, int] = {}
        for t in tokens:
            counts[t.id] = counts.get(t.id, 0) + 1
        prev_word = None
        shown_tokens = tokens[:MAX_CHIPS]
        for i, t in enumerate(shown_tokens):
            chip = Chip(t, text, self.area)
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            starts = t.word is None or t.word != prev_word
            ends = nxt is None or t.word is None or nxt.word != t.word
            chip.setProperty("wordStart", starts)
            chip.setProperty("wordEnd", ends)
            chip.setProperty("outOfRange", not self._state.in_range(t.id))
            if not self._state.in_range(t.id):
                chip.setToolTip(chip.toolTip() + f"<br><span style='color:#D1495B'>id {t.id:,} is outside the table "
                                f"({self._state.table.vocab_size if self._state.table else 0:,} rows)</span>")
            if counts[t.id] > 1:
                chip.id_label.setText(f"{t.id:,} (×{counts[t.id]})")
                chip.setToolTip(chip.toolTip() + f"<br>appears {counts[t.id]} times — every occurrence reads the same row")
            chip.clicked.connect(self.token_clicked)
            self.flow.addWidget(chip)
            self._chips.append(chip)
            prev_word = t.word
        has = bool(tokens)
        self.scroll.setVisible(has)
        self.empty.setVisible(not has and not self._state.tokenize_error)
        if has:
            n_words = len({t.word for t in tokens if t.word is not None})
            distinct = len(counts)
            more = f" · showing the first {MAX_CHIPS:,}" if len(tokens) > MAX_CHIPS else ""
            self.summary.setText(
                f"{len(tokens):,} tokens · {n_words:,} words · {distinct:,} distinct ids (rows read){more}"
            )
        else:
            self.summary.setText("")
        self.area.updateGeometry()
        self._fit_height()
        self._restyle()

    def _fit_height(self) -> None:
        """As tall as the chips need (up to four lines), no taller."""
        width = max(200, self.scroll.viewport().width())
        need = self.flow.heightForWidth(width) + 4
        self.scroll.setFixedHeight(max(56, min(need, 4 * 52)))

    def resizeEvent(self, event):
        super().resizeEvent(event)
        if self._chips:
            self._fit_height()

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._restyle()

    def _restyle(self) -> None:
        pos = self._state.selected_position
        sel_id = self._state.selected_id
        for chip in self._chips:
            chip.set_flags(selected=chip.position == pos, sameRow=chip.position != pos and chip.token_id == sel_id)
        if 0 <= pos < len(self._chips):
            self.scroll.ensureWidgetVisible(self._chips[pos])

    def chips(self) -> list[Chip]:
        return list(self._chips)
