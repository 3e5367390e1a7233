"""The analogy panel: three tokens a, b, c, the target (unit rows â − b̂ + ĉ
or the rows as stored, a − b + c), a Solve button, and the answers that the
state's analogy job published."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import user_message
from explorer.core.geometry.analogy import ANALOGY_K, AnalogyForm, AnalogyResult
from explorer.core.tokens.word_row import NotOneRow, word_row
from explorer.core.tokens.words import resolve_word
from explorer.ui.common.progress import ProgressBar
from explorer.ui.common.table_fit import fit_to_contents
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import mono_font, style_as

__all__ = ["AnalogyPanel"]

HINT = "Type three tokens, e.g. from the text"
#: words tried, in order, to fill the boxes with an example the vocabulary has
EXAMPLES = (("king", "man", "woman"), ("cat", "dog", "car"), ("robot", "arm", "box"))


class AnalogyPanel(QWidget):
    """Inputs and answers of a − b + c.

    Signals
    -------
    solve_requested(int, int, int, str)
        The user asked to solve the analogy (token ids a, b, c and the :class:`AnalogyForm`'s value).
    answer_clicked(int)
        The user clicked an answer (its token id).
    """

    solve_requested = Signal(int, int, int, str)
    answer_clicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._table = None
        self._answers: list[int] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        self.title = QLabel()
        lay.addWidget(self.title)
        lay.addLayout(self._build_inputs())
        busy = QHBoxLayout()
        self.progress = ProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the search (a table too big to hold is read block by block)")
        self.cancel_button.hide()
        busy.addWidget(self.progress, 1)
        busy.addWidget(self.cancel_button)
        lay.addLayout(busy)
        self.status = WrapLabel(HINT)
        style_as(self.status, "ChipId")
        lay.addWidget(self.status)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["answer", "id", "cosine"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
        self.table.setToolTip(f"The top {ANALOGY_K} answers; click one to select it")
        self.table.cellClicked.connect(self._on_table_cell_clicked)
        self.table.setMinimumHeight(90)
        self.table.setMaximumHeight(170)
        lay.addWidget(self.table)

    def _build_inputs(self) -> QGridLayout:
        """The three boxes, the choice of target (unit rows or as stored) and Solve."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(4)
        grid.setVerticalSpacing(4)
        self.edits: list[QLineEdit] = []
        for col, (name, hint) in enumerate(zip("abc", EXAMPLES[0])):
            e = QLineEdit()
            e.setPlaceholderText(f"{name}: {hint}")
            e.setToolTip(f"Token {name} of a − b + c (a piece or #id)")
            e.returnPressed.connect(self._on_solve_clicked)
            grid.addWidget(e, 0, col)
            self.edits.append(e)
        self.form_box = QComboBox()
        for form, text in ((AnalogyForm.UNIT, "unit rows"), (AnalogyForm.PLAIN, "rows as stored")):
            self.form_box.addItem(f"{form.formula}: {text}", form.value)
        self.form_box.setToolTip("Unit rows: each row is scaled to length 1 before the sum, so a long row does not "
                                 "outweigh the others (the usual form). Rows as stored: the plain sum of the rows.")
        self.form_box.currentIndexChanged.connect(self._on_form_changed)
        grid.addWidget(self.form_box, 1, 0, 1, 2)
        self.solve_button = QPushButton("Solve")
        self.solve_button.clicked.connect(self._on_solve_clicked)
        grid.addWidget(self.solve_button, 1, 2)
        self._on_form_changed()
        return grid

    @property
    def form(self) -> AnalogyForm:
        """The target chosen: unit rows (â − b̂ + ĉ) or the rows as stored (a − b + c)."""
        return AnalogyForm(self.form_box.currentData())

    def set_form(self, form: AnalogyForm | str) -> None:
        """Choose the target (as the user would)."""
        self.form_box.setCurrentIndex(self.form_box.findData(AnalogyForm(form).value))

    def _on_form_changed(self, *_args) -> None:
        form = self.form
        self.title.setText(f"<b>Analogy</b>  {form.formula}")
        self.title.setToolTip(f"Answers are the rows with the highest cosine to {form.words}; the three inputs "
                              "are excluded. Drawn as arrows on the projection (between the rows as stored).")
        self.solve_button.setToolTip(f"Find the {ANALOGY_K} tokens nearest to {form.formula} by cosine")

    # -- the table -----------------------------------------------------------------------
    def set_table(self, table) -> None:
        """A new model: answers cleared, the boxes filled with an example it has (or emptied)."""
        self._table = table
        self.clear_answers()
        words = self._example(table) if table is not None else None
        for e, w in zip(self.edits, words or ("", "", "")):
            e.setText(w)

    @staticmethod
    def _example(table) -> tuple[str, str, str] | None:
        for words in EXAMPLES:
            ids = [resolve_word(table.tokenizer, w, rows=table.vocab_size) for w in words]
            if all(i is not None and table.piece(i).lower().lstrip("ġ▁") == w for i, w in zip(ids, words)):
                return words
        return None

    # -- results ---------------------------------------------------------------------------
    def clear_answers(self) -> None:
        self._answers = []
        self.table.clearSelection()
        self.table.setRowCount(0)
        self.status.setText(HINT)

    def show_result(self, result: AnalogyResult) -> None:
        table = self._table
        if table is None:
            return
        self._answers = result.ids()
        p = [table.shown_piece(i).text for i in (result.a, result.b, result.c)]
        best = table.shown_piece(result.best.id).text if result.best is not None else "?"
        self.status.setText(f"{p[0]} − {p[1]} + {p[2]} ≈ {best}  ({result.form.words}; "
                            f"{result.rows_searched:,} rows searched)")
        self.table.clearSelection()
        self.table.setRowCount(len(result.answers))
        for r, nb in enumerate(result.answers):
            cells = [table.shown_piece(nb.id).text, f"{nb.id:,}", f"{nb.cosine:+.3f}"]
            for col, text in enumerate(cells):
                it = QTableWidgetItem(text)
                if col:
                    it.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                    it.setFont(mono_font())
                self.table.setItem(r, col, it)
        fit_to_contents(self.table, (1, 2))

    def show_error(self, exc: BaseException) -> None:
        self.clear_answers()
        self.status.setText(f"The analogy failed: {user_message(exc)}")

    def answers(self) -> list[int]:
        return list(self._answers)

    # -- intents (the user, the tour) ---------------------------------------------------------
    def set_words(self, a: str, b: str, c: str) -> None:
        """Fill in a − b + c (as if typed)."""
        for edit, word in zip(self.edits, (a, b, c)):
            edit.setText(word)

    def words(self) -> tuple[str, str, str]:
        """a, b and c as typed (what :meth:`set_words` takes)."""
        return tuple(e.text() for e in self.edits)

    def solve(self) -> None:
        """Solve the analogy typed (as the Solve button does)."""
        self._on_solve_clicked()

    # -- the user ----------------------------------------------------------------------------
    def _on_solve_clicked(self) -> None:
        table = self._table
        if table is None:
            return
        ids = []
        for e, name in zip(self.edits, "abc"):
            if not e.text().strip():
                self.status.setText(f"Type token {name}")
                return
            try:  # the rows the analogy command would take, or its reason why not
                ids.append(word_row(table, e.text()))
            except NotOneRow as exc:
                self.status.setText(f"Token {name}: {user_message(exc)}")
                return
        self.solve_requested.emit(*ids, self.form.value)

    def _on_table_cell_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._answers):
            self.answer_clicked.emit(self._answers[row])
