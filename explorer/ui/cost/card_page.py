"""The cost card: parameters, share of the model, one row as stored, tying,
bytes per dtype, Adam, the factorised alternative, √d scaling and random
directions, each with its formula."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QVBoxLayout, QWidget
from superqt.utils import signals_blocked

from explorer.core import units
from explorer.core.cost import parameters as cost
from explorer.core.geometry.vectors import random_cosine_bound, random_cosine_std, shell_volume_fraction
from explorer.core.sources.output import tying_word
from explorer.state.app_state import AppState
from explorer.ui.common.binding import ShownGate
from explorer.ui.cost.tiles import ReflowGrid, Tile, note_label, plain_label
from explorer.ui.style import SPACING, mono_font, style_as

EMPTY_TITLE = "Open a model to see what its embedding table costs (Ctrl+O)"

#: (key, caption, tooltip) of each tile, row by row
TILES = [
    ("params", "Embedding parameters", "Learned numbers in the embedding table E alone: V × d "
                                       "(the model's other layers are not counted here)"),
    ("share", "Share of the model", "The embedding's parameters divided by the model's total: every tensor of "
                                    "the checkpoint, E included"),
    ("row", "One row", "Bytes read for one token as the table is stored: the row stride"),
    ("tying", "Weight tying", "Whether the output projection (d → V) reuses E, and what that saves"),
    ("float32", "float32", "V × d × 4 bytes (1 MB = 1000² bytes, 1 MiB = 1024² bytes)"),
    ("float16", "float16", "V × d × 2 bytes (1 MB = 1000² bytes, 1 MiB = 1024² bytes)"),
    ("bfloat16", "bfloat16", "V × d × 2 bytes: same size as float16, wider exponent, fewer mantissa bits"),
    ("int8", "int8", "V × d × 1 byte, plus a few scale factors that quantisation needs (not counted)"),
    ("adam", "Training with Adam", "Weights + gradient + Adam's two moment estimates: 4 float32 copies"),
    ("factor", "Factorised E ≈ A·B", "A is V × k, B is k × d: V·k + k·d parameters. Move the slider to choose k"),
    ("scale", "√d scaling", "The original Transformer multiplies embeddings by √d_model so they match the scale "
                            "of sinusoidal positions"),
    ("random", "Random directions", "Cosine of two random Gaussian vectors in d dimensions ≈ N(0, 1/d)"),
]
#: most tile columns, and the width a tile needs (pixels) before the grid drops a column
COLUMNS = 4
TILE_WIDTH = 190


def default_rank(dim: int) -> int:
    """The slider's first position: 128 for wide tables, d/4 for narrow ones."""
    return max(1, min(dim, 128 if dim > 256 else dim // 4))


class CardPage(QWidget):
    """The loaded table's figures as tiles, with a slider for the factorisation rank."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self._state = state
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING * 2, SPACING * 2, SPACING * 2, SPACING * 2)
        lay.setSpacing(SPACING)
        self.title = plain_label(EMPTY_TITLE)
        style_as(self.title, "CardTitle")
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        lay.addWidget(self.title)
        self._grid = ReflowGrid(TILE_WIDTH, COLUMNS, min_columns=2)
        self._grid.setSpacing(SPACING + 4)
        self.tiles: dict[str, Tile] = {key: Tile(caption, tip) for key, caption, tip in TILES}
        for tile in self.tiles.values():
            self._grid.add(tile)
        lay.addLayout(self._grid)

        krow = QHBoxLayout()
        klab = QLabel("Factorisation rank k")
        klab.setToolTip("Inner size k of the factorisation E ≈ A (V × k) · B (k × d)")
        self.k_slider = QSlider(Qt.Horizontal)
        self.k_slider.setToolTip("k for the factorised alternative V·k + k·d; it has fewer parameters than E "
                                 "while k < V·d / (V + d)")
        self.k_slider.setRange(1, 1)
        self.k_slider.valueChanged.connect(self._on_k_slider_value_changed)
        self.k_value = QLabel("k = 1")
        self.k_value.setFont(mono_font())
        self.k_value.setMinimumWidth(90)
        krow.addWidget(klab)
        krow.addWidget(self.k_slider, 1)
        krow.addWidget(self.k_value)
        lay.addLayout(krow)
        self.stored_note = note_label()
        lay.addWidget(self.stored_note)
        lay.addStretch(1)

        self._gate = ShownGate(self, self._synchronize)
        state.model_changed.connect(self._on_state_model_changed)

    # -- layout ------------------------------------------------------------------------
    @property
    def columns(self) -> int:
        """Tile columns in use (fewer in a narrow window)."""
        return self._grid.columns

    def resizeEvent(self, event) -> None:
        """Reflow the tiles: four columns when wide, down to two when narrow."""
        self._grid.reflow(self, event.size().width())
        super().resizeEvent(event)

    # -- state -------------------------------------------------------------------------
    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._synchronize)

    def _synchronize(self) -> None:
        """Every figure from the state's table."""
        table = self._state.table
        if table is None:
            self._clear()
            return
        with signals_blocked(self.k_slider):
            self.k_slider.setRange(1, max(1, table.dim))
            self.k_slider.setValue(default_rank(table.dim))
        self._draw(table)
        self._draw_factor()

    def _on_k_slider_value_changed(self, _value: int) -> None:
        """The factorisation rank moved."""
        self._draw_factor()

    # -- drawing -----------------------------------------------------------------------
    def _clear(self) -> None:
        self.title.setText(EMPTY_TITLE)
        for tile in self.tiles.values():
            tile.clear()
        self.stored_note.setText("")

    def _draw(self, table) -> None:
        v, d = table.vocab_size, table.dim
        c = cost.table_cost(v, d, table.model_params)
        self.title.setText(f"{table.name}: E is V × d = {v:,} × {d:,}")
        t = self.tiles
        t["params"].set(f"{c.params:,}", f"{units.format_count(c.params)} parameters of the embedding table",
                        f"V × d = {v:,} × {d:,}")
        if c.model_share is not None:
            t["share"].set(f"{100 * c.model_share:.1f} %", f"of {table.model_params:,} model parameters (total)",
                           f"V·d / all parameters = {c.params:,} / {table.model_params:,}")
        else:
            t["share"].set("unknown", "the whole model's size is not known", "this table has no checkpoint around it")
        self._draw_row(cost.row_layout(table.dtype, d, table.row_bytes))
        self._draw_tying(table.tied, c.tying_saves, table.kind)
        for db in cost.bytes_per_dtype(v, d):
            t[db.dtype].set(units.format_size(db.bytes),
                            f"{units.format_size(db.bytes, binary=True)} · {db.bytes:,} bytes",
                            f"V × d × {db.itemsize} byte{'s' if db.itemsize > 1 else ''}")
        t["adam"].set(units.format_size(c.adam_bytes_float32),
                      f"{units.format_size(c.adam_bytes_float32, binary=True)} · ≈ 4 × float32",
                      "weights + gradient + 2 Adam moments, float32")
        t["scale"].set(f"× {cost.embedding_scale(d):.1f}", f"√d = √{d:,}",
                       f"original Transformer: √512 = {cost.embedding_scale(512):.1f}")
        inside = shell_volume_fraction(d)
        t["random"].set(f"σ = {random_cosine_std(d):.4f}", f"99.7 % of pairs: |cos| ≤ {random_cosine_bound(d):.3f}",
                        f"1/√d; {units.format_percent(1 - inside, rest=inside)} of a ball's volume lies in its "
                        "outer 1 % shell")
        note = f"Stored as {table.dtype}: {table.stored_bytes:,} bytes ({units.format_bytes(table.stored_bytes)})."
        if table.disk_bytes:
            note += f" The checkpoint's files: {units.format_bytes(table.disk_bytes)}."
        note += " 1 MB = 1,000,000 bytes; 1 MiB = 1,048,576 bytes."
        self.stored_note.setText(note)

    def _draw_row(self, layout: cost.RowLayout) -> None:
        """One row as stored first (the stride offsets use), float32 second."""
        if layout.quantised:
            sub = (f"{layout.blocks:,} {layout.dtype} blocks of {layout.block_values} values, "
                   f"{layout.block_bytes} bytes each")
        else:
            plural = "s" if layout.block_bytes > 1 else ""
            sub = f"{layout.dim:,} values × {layout.block_bytes} byte{plural} ({layout.dtype})"
        formula = f"offset of row i = i × {layout.row_bytes:,}"
        if layout.row_bytes != layout.float32_row_bytes:
            formula += f"; as float32 (what a lookup returns) {layout.float32_row_bytes:,} bytes"
        self.tiles["row"].set(f"{layout.row_bytes:,} bytes", sub, formula)

    def _draw_tying(self, tied: bool | None, saves: int, kind: str) -> None:
        word = tying_word(tied, kind)
        if tied is True:
            self.tiles["tying"].set(word, f"saves {saves:,} parameters",
                                    "the output projection d → V reuses E (same tensor)")
        elif tied is False:
            self.tiles["tying"].set(word, f"tying would save {saves:,}",
                                    "the output projection d → V is a second V × d matrix")
        elif word == "no output layer":
            self.tiles["tying"].set(word, f"a tied one would reuse these {saves:,} parameters",
                                    "the checkpoint has no output projection d → V (an encoder), or it cannot be told")
        else:
            self.tiles["tying"].set("unknown", f"a tied output layer would reuse these {saves:,} parameters",
                                    "a toy or random table has no model around it")

    def _draw_factor(self) -> None:
        table = self._state.table
        if table is None:
            return
        f = cost.factorisation(table.vocab_size, table.dim, self.k_slider.value())
        self.k_value.setText(f"k = {f.k:,}")
        verdict = f"{100 * f.ratio:.1f} % of V·d" if f.saves else f"{f.ratio:.2f} × V·d (no saving)"
        if f.largest_saving_k:
            limit = (f"fewer parameters than E while k ≤ {f.largest_saving_k:,} "
                     f"(break-even V·d / (V + d) = {f.break_even:,.1f})")
        else:
            limit = f"no k ≥ 1 saves here (break-even V·d / (V + d) = {f.break_even:,.2f})"
        self.tiles["factor"].set(f"{f.params:,}", verdict,
                                 f"V·k + k·d = {f.vocab_size:,}·{f.k:,} + {f.k:,}·{f.dim:,}; {limit}")
