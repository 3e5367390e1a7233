"""The tokens added to the similarity matrix besides the text's, shown with
the rule that adds them, a remove button on each, and an explicit Add for a
token selected elsewhere."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QWidget
from superqt import QElidingLabel

from explorer.core.tokens.pieces import DisplayPiece
from explorer.ui.style import EXTRA, SPACING, style_as

#: the rule, in the panel's words
RULE = ("The matrix compares the text's tokens and the added ones. A token is added when you search it here, "
        "Find it in the Projection or click it among the inspector's neighbours. Selecting a token elsewhere "
        "(a chip, a matrix row, a point) only selects it: press Add to compare it too. "
        "Added tokens are marked in purple in every view.")
EMPTY_TEXT = "none yet: search, Find and neighbour clicks add; a selection alone does not."
#: the rule beside the added tokens (shortened when the line is full; the tooltip has it all)
SHORT_RULE = "by search, Find or a neighbour click; a selection alone does not (use Add)"
#: at most this many of the newest added tokens are buttons (fewer when the line is
#: narrow); the older ones are in the "more" menu
MAX_CHIPS = 6
#: pixels the rule keeps beside the buttons, at least
RULE_MIN_PX = 48
#: characters of a piece on its button
CHIP_CHARS = 10


class _ChipRow(QWidget):
    """The token buttons shown and the "more" menu after them; it may shrink to
    nothing (the bar decides how many buttons its width holds)."""

    def __init__(self, more_button: QToolButton, parent=None):
        super().__init__(parent)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(SPACING // 2)
        self.more_button = more_button
        self.row.addWidget(more_button)

    def add_chip(self, chip: QToolButton) -> None:
        self.row.insertWidget(self.row.indexOf(self.more_button), chip)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())


class AddedTokensBar(QWidget):
    """One line: the added tokens (each with ×), Add for the selected token, Clear.

    Signals
    -------
    remove_requested(int)
        The user removed an added token (its id).
    clear_requested()
        The user removed every added token.
    add_requested(int)
        The user asked to add the selected token (its id).
    """

    remove_requested = Signal(int)
    clear_requested = Signal()
    add_requested = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setStyleSheet(f"QToolButton#AddedChip {{ border: 1px solid {EXTRA}; border-radius: 6px; "
                           "padding: 1px 6px; }")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(SPACING, 0, SPACING, 0)
        lay.setSpacing(SPACING // 2)
        self.caption = QLabel("Added:")
        self.caption.setToolTip(RULE)
        lay.addWidget(self.caption)
        self.more_button = QToolButton()
        self.more_button.setPopupMode(QToolButton.InstantPopup)
        self.more_button.setMenu(QMenu(self.more_button))
        self.more_button.menu().triggered.connect(self._on_more_menu_triggered)
        self.more_button.menu().aboutToShow.connect(self._fill_more_menu)
        self.more_button.setToolTip("Older added tokens: choose one to remove it")
        self.more_button.hide()
        self._row = _ChipRow(self.more_button)
        lay.addWidget(self._row)
        self.rule = QElidingLabel(EMPTY_TEXT)  # the rule, quiet, shortened only when the line is full
        style_as(self.rule, "TileFormula")
        self.rule.setToolTip(RULE)
        self.rule.setMinimumWidth(RULE_MIN_PX)
        lay.addWidget(self.rule, 1)
        self.add_button = QToolButton()
        self.add_button.setText("Add selected")
        self.add_button.clicked.connect(self._on_add_button_clicked)
        lay.addWidget(self.add_button)
        self.clear_button = QToolButton()
        self.clear_button.setText("Clear")
        self.clear_button.setToolTip("Remove every added token (the text's tokens stay)")
        self.clear_button.clicked.connect(self.clear_requested)
        lay.addWidget(self.clear_button)
        # as tall as its buttons when none is shown: Add comes with a selection not compared yet and
        # goes when it is (both within one new text), and each time the plot under the bar moved
        self.setMinimumHeight(max(b.sizeHint().height() for b in (self.add_button, self.clear_button)))
        self.chips: list[QToolButton] = []
        self._tokens: list[tuple[int, DisplayPiece]] = []
        self._used: list[QToolButton] = []  # the buttons that carry a token, shown or not
        self._older: list[tuple[int, DisplayPiece]] = []  # the tokens in the "more" menu
        self._candidate = -1
        self.set_tokens([])
        self.set_candidate(-1, None)

    def set_tokens(self, tokens: list[tuple[int, DisplayPiece]]) -> None:
        """The added tokens as (id, shown piece), oldest first."""
        self._tokens = list(tokens)
        newest = self._tokens[-MAX_CHIPS:]
        while len(self.chips) < len(newest):
            chip = QToolButton()
            chip.setObjectName("AddedChip")
            chip.clicked.connect(self._on_chip_clicked)
            self._row.add_chip(chip)
            self.chips.append(chip)
        # newest first along the line, so the ones that do not fit are the oldest
        for chip, (tid, piece) in zip(self.chips, reversed(newest)):
            chip.setText(f"{piece.short(CHIP_CHARS)} ×")
            chip.setToolTip(f"“{piece.text}” (id {tid:,}): click to remove it from the added tokens")
            chip.setProperty("token_id", int(tid))
            chip.ensurePolished()  # the style sheet's padding counts in its size
        self._used = self.chips[: len(newest)]
        self.rule.setText(SHORT_RULE if tokens else EMPTY_TEXT)
        self.clear_button.setEnabled(bool(tokens))
        self.clear_button.setVisible(bool(tokens))
        self._fit_chips()

    def _fit_chips(self) -> None:
        """As many of the newest tokens as buttons as the bar's width holds (the rule
        keeps RULE_MIN_PX), the rest in the menu after them."""
        lay = self.layout()
        gap = self._row.row.spacing()
        total = len(self._tokens)
        self.more_button.setText(f"+{total} more")  # its widest text: the room it may need
        fixed = [w for w in (self.caption, self.add_button, self.clear_button) if not w.isHidden()]
        room = (self.width() - lay.contentsMargins().left() - lay.contentsMargins().right() - RULE_MIN_PX
                - sum(w.sizeHint().width() for w in fixed) - lay.spacing() * (len(fixed) + 1))
        widths = [c.sizeHint().width() + gap for c in self._used]
        more = self.more_button.sizeHint().width()
        shown = max((k for k in range(len(widths) + 1)
                     if sum(widths[:k]) + (more if k < total else 0) <= room), default=0)
        for k, chip in enumerate(self.chips):
            chip.setVisible(k < shown)
        self._older = self._tokens[: total - shown]
        self.more_button.setText(f"+{len(self._older)} more")
        self.more_button.setVisible(bool(self._older))

    def _fill_more_menu(self) -> None:
        """The older added tokens, newest first, each a Remove action (built when opened)."""
        menu = self.more_button.menu()
        menu.clear()
        for tid, piece in reversed(self._older):
            menu.addAction(f"Remove “{piece.text}” (id {tid:,})").setData(int(tid))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_chips()

    def set_candidate(self, token_id: int, piece: DisplayPiece | None) -> None:
        """The selected token when it is not compared yet (Add is offered), else -1."""
        self._candidate = int(token_id) if piece is not None else -1
        if self._candidate >= 0:
            self.add_button.setText(f"Add “{piece.short(CHIP_CHARS)}”")
            self.add_button.setToolTip(f"Compare the selected token “{piece.text}” (id {token_id:,}) too: "
                                       "it is not in the matrix")
            self.add_button.setEnabled(True)
        else:
            self.add_button.setText("Add selected")
            self.add_button.setToolTip("Select a token that is not in the matrix (a matrix row, a point) to add it")
            self.add_button.setEnabled(False)
        self.add_button.setVisible(self._candidate >= 0)  # shown only when it can add
        if self._tokens:
            self._fit_chips()  # the button's width changed with its text

    @property
    def candidate(self) -> int:
        return self._candidate

    def _on_chip_clicked(self) -> None:
        tid = self.sender().property("token_id")
        if tid is not None:
            self.remove_requested.emit(int(tid))

    def _on_more_menu_triggered(self, action) -> None:
        self.remove_requested.emit(int(action.data()))

    def _on_add_button_clicked(self) -> None:
        if self._candidate >= 0:
            self.add_requested.emit(self._candidate)
