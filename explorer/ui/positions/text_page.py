"""The input layer for the typed text: per token its parts and norms, and the
token rows beside the input vectors, so the same word at two positions
visibly differs (or, for a model without positions, visibly does not)."""

from __future__ import annotations

from collections.abc import Generator, Sequence

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from explorer.core.geometry.vectors import cosine, vector_norm
from explorer.core.input_layer import TextInputs
from explorer.core.input_layer.report import symmetric_levels
from explorer.core.units import shorten
from explorer.ui.common.binding import OneATurn
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.positions.image_panel import ImagePanel
from explorer.ui.positions.input_table import InputTable
from explorer.ui.positions.parts_plot import PartsPlot
from explorer.ui.style import SPACING, style_as

__all__ = ["TextInputsPage"]

#: characters of a piece in a heatmap's row label
LABEL_CHARS = 10
#: dimensions drawn in the two heatmaps: few enough that each cell is seen
SHOWN_DIMS = 48


class TextInputsPage(QWidget):
    """Signals
    -------
    position_clicked(int)
    """

    position_clicked = Signal(int)

    @staticmethod
    def plots_in_steps() -> Generator[QWidget, None, None]:
        """The page's three plots, one a step (for a view made over turns of the event loop):
        the token and input heatmaps, then the parts of a row. Pass them as ``plots``."""
        yield ImagePanel()
        yield ImagePanel()
        yield PartsPlot()

    def __init__(self, parent=None, plots: Sequence[QWidget] | None = None):
        super().__init__(parent)
        self._inputs: TextInputs | None = None
        self._tokens: tuple = ()
        self._piece_of = str
        self._maps = OneATurn(self)  # the two heatmaps, each in a turn of its own
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, SPACING // 2, 0, 0)
        lay.setSpacing(SPACING // 2)
        self.formula = WrappedLabel()
        self.formula.setContentsMargins(SPACING, 0, SPACING, 0)
        self.formula.setTextFormat(Qt.RichText)
        lay.addWidget(self.formula)
        self.limit_note = WrappedLabel()
        style_as(self.limit_note, "ErrorLine")
        self.limit_note.setContentsMargins(SPACING, 0, SPACING, 0)
        self.limit_note.hide()
        lay.addWidget(self.limit_note)
        # the page's own cap, not the model's: said quietly (in red beside the limit's note, it read
        # as a fault of the text)
        self.cap_note = WrappedLabel()
        style_as(self.cap_note, "ChipId")
        self.cap_note.setContentsMargins(SPACING, 0, SPACING, 0)
        self.cap_note.hide()
        lay.addWidget(self.cap_note)
        self.table = InputTable()
        self.table.position_clicked.connect(self.position_clicked)
        self.token_map, self.input_map, self.parts = plots or tuple(self.plots_in_steps())
        self.token_map.set_labels("dimension", "")
        self.input_map.set_labels("dimension", "")
        maps = QSplitter(Qt.Horizontal)
        maps.addWidget(self.token_map)
        maps.addWidget(self.input_map)
        maps.addWidget(self.parts)
        maps.setChildrenCollapsible(False)
        self.split = QSplitter(Qt.Vertical)
        self.split.addWidget(self.table)
        self.split.addWidget(maps)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([200, 260])
        lay.addWidget(self.split, 1)

    def set_inputs(self, inputs: TextInputs | None, tokens, piece_of) -> None:
        self._inputs, self._tokens, self._piece_of = inputs, tuple(tokens), piece_of
        self.table.set_inputs(inputs, tokens, piece_of)
        self._maps.cancel()
        if inputs is None:
            self.formula.hold()  # until the new inputs come: what is under it stays put
            self.limit_note.hide()
            self.cap_note.hide()
            self.token_map.clear()
            self.input_map.clear()
            self.parts.set_token(None, None, "", 0)
            return
        self.formula.setText(_formula(inputs) + " " + _same_token_sentence(inputs, tokens, piece_of))
        limit = inputs.limit_message
        self.limit_note.setText(f"Tokens past the limit are marked and get no input vector: {limit}." if limit else "")
        self.limit_note.setVisible(bool(limit))
        shown = len(inputs.vectors.ids)  # the tokens computed: the cap the inputs were made with
        self.cap_note.setText(f"This page shows the text's first {shown:,} tokens; "
                              f"{inputs.not_computed:,} more are not shown." if inputs.not_computed else "")
        self.cap_note.setVisible(bool(inputs.not_computed))
        v = inputs.vectors
        if len(v.ids) == 0:
            self.token_map.clear("Type some text to see its input vectors")
            self.input_map.clear("")
            return
        by_pos = {t.position: t for t in tokens}
        labels = [(i, f"{int(p)} {shorten(piece_of(by_pos[int(p)]), LABEL_CHARS)}")
                  for i, p in enumerate(v.positions) if int(p) in by_pos]
        scale = "" if v.scale == 1.0 else f" × {v.scale:.1f}"
        cols = min(SHOWN_DIMS, v.token_rows.shape[1])
        d = v.token_rows.shape[1]
        axis = f"dimension (0–{cols - 1} of {d:,})" if cols < d else "dimension"

        def draw(panel: ImagePanel, values: np.ndarray, title: str, short: str | None = None) -> None:
            panel.set_title(title, short)
            panel.set_labels(axis, "")
            panel.set_matrix(values[:, :cols], symmetric_levels(values[:, :cols]))
            panel.set_row_labels(labels)

        normed = " (after the LayerNorm)" if v.normed is not None else ""
        # with the table, one turn held the table and both maps: 100-165 ms when the tab came back
        # after a model switch (a real window); the maps follow the table a turn each
        self._maps.run([lambda: draw(self.token_map, v.token_rows, f"Token rows{scale}"),
                        lambda: draw(self.input_map, v.vectors, "Input vectors" + normed, "Input vectors")], now=False)

    def finish_drawing(self) -> None:
        """The maps still waiting for their turn, drawn now."""
        self._maps.finish()

    def select_position(self, position: int) -> None:
        """Mirror the selected token: its row of the table and its parts."""
        self.table.select_position(position)
        inputs = self._inputs
        if inputs is None:
            self.parts.set_token(None, None, "", 0)
            return
        v = inputs.vectors
        hits = np.nonzero(v.positions == position)[0]
        if not len(hits) or not 0 <= position < len(self._tokens):
            self.parts.set_token(None, None, "", 0)
            return
        label = f"{position} {self._piece_of(self._tokens[position])}"
        self.parts.set_token(v, int(hits[0]), label, min(SHOWN_DIMS, v.token_rows.shape[1]))


def _formula(inputs: TextInputs) -> str:
    layer = inputs.layer
    parts = ["E[id]" if layer.scale == 1.0 else f"√{layer.dim}·E[id]"]
    if layer.positions is not None:
        parts.append("P[position]")
    if layer.token_types is not None:
        parts.append("T[0]")
    text = " + ".join(parts)
    if layer.layer_norm is not None:
        text = f"LayerNorm({text})"
    if layer.scheme == "rotary":
        return (f"<b>Input vector = {text}</b>: no position is added (rotary positions act inside attention); "
                "the same token gets the same input vector wherever it stands.")
    if layer.scheme == "none":
        return f"<b>Input vector = {text}</b>: nothing tells positions apart here."
    return f"<b>Input vector = {text}</b>, dropout off, token type 0."


def _same_token_sentence(inputs: TextInputs, tokens, piece_of) -> str:
    """A repeated token of the text, from the live figures: one row, how far apart its inputs are."""
    v = inputs.vectors
    seen: dict[int, int] = {}
    for i, tid in enumerate(v.ids):
        j = seen.setdefault(int(tid), i)
        if j == i:
            continue
        by_pos = {t.position: t for t in tokens}
        piece = piece_of(by_pos[int(v.positions[i])])
        a, b = v.vectors[j].astype(np.float64), v.vectors[i].astype(np.float64)
        dist = vector_norm(a - b)
        cos = cosine(a, b)
        p, q = int(v.positions[j]), int(v.positions[i])
        if dist == 0:
            return f"“{piece}” at positions {p} and {q}: one row, and the same input vector twice."
        return (f"“{piece}” at positions {p} and {q}: one token row, two input vectors {dist:.2f} apart "
                f"(cosine {cos:.3f}).")
    if inputs.layer.scheme in ("learned", "sinusoidal"):
        return "Type a word twice to see one token row become two different input vectors."
    return "Type a word twice: it reads one row and gets the same input vector at both places."
