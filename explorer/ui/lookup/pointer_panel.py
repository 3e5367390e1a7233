"""The pointer path (nn.Embedding): compute the address of row i, jump to it,
copy d values. No arithmetic on the values."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import QGraphicsRectItem, QSizePolicy, QVBoxLayout, QWidget
from superqt import QElidingLabel

from explorer.core.lookup import animation as anim
from explorer.core.lookup.ways import RowLayout, StoredBase
from explorer.ui.lookup.plots import (
    GLW_MIN_HEIGHT,
    OutputVector,
    Ranges,
    elastic_label,
    make_plot,
    plot_area,
    small_font,
)
from explorer.ui.style import ACCENT, ERROR, PENDING, SPACING, css_rgba, mono_font, plot_colors, text_color_on

PHASES = ("1. compute the address", "2. jump to it", "3. copy d values", "done")
#: rows drawn around the hot one in "Around the row"
NEAR_ROWS = 5


def hex_address(n: int) -> str:
    return f"0x{n:X}"


class PointerPanel(QWidget):
    """Where row i lies (stride, offset, address: the formula with the real
    numbers), the whole table as one block of memory with the jump, the
    rows around row i, the copied output and the counters."""

    def __init__(self, parent=None):
        super().__init__(parent)
        fg = plot_colors()[1]
        self._fg = fg
        self._layout: RowLayout | None = None
        self._near_first = 0  # the first row drawn in "Around the row"
        self._ranges = Ranges()
        self._formula_lines: list[str] = []
        self._address_line = 3
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING // 2, 0, 0, 0)
        lay.setSpacing(SPACING // 2)
        self.title = elastic_label("nn.Embedding computes the address of row i = base + i × d × itemsize, "
                                   "jumps there and copies d values", rich=True)
        self.title.setText("<b>Pointer offset</b> (nn.Embedding): jump, copy")
        lay.addWidget(self.title)
        self.formula = elastic_label(rich=True, font=mono_font(8))
        self.formula.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.formula.setAlignment(Qt.AlignLeft | Qt.AlignTop)
        lay.addWidget(self.formula)
        self.note = QElidingLabel()  # where the base is: elided when narrow (the tooltip has it all)
        self.note.setFont(small_font(self.font()))
        self.note.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        lay.addWidget(self.note)
        # the formula's stride takes two lines (one was cut at 1024 px): the plots give
        # that line back, or the page would scroll at 1024 x 700
        self.glw = plot_area(GLW_MIN_HEIGHT - QFontMetrics(self.formula.font()).lineSpacing())
        lay.addWidget(self.glw, 1)
        self.counters = elastic_label("The pointer path does no arithmetic on the values: 0 FLOPs.\n"
                                      "It reads one row: d × itemsize bytes.", rich=True, font=mono_font(8))
        lay.addWidget(self.counters)

    def plot_steps(self) -> list:
        """What makes the three plots, for the maker to call one a step (20-35 ms each): the panel
        is made without them (:func:`~explorer.ui.lookup.forward_page.panels_in_steps`)."""
        return [self._build_memory, self._build_near, self._build_output]

    def _build_output(self) -> None:
        self.out_plot = make_plot(self.glw, 2, "", self._fg, labelled=True)
        self.out_plot.getAxis("left").set_labels([(0.5, "", "E[i] =")])
        self.out_plot.getAxis("left").setWidth(50)
        self.out_plot.hideAxis("bottom")
        self.out_plot.setMinimumHeight(40)
        self.out_plot.setMaximumHeight(40)
        self.output = OutputVector(self.out_plot)
        rows = self.glw.ci.layout
        rows.setRowStretchFactor(0, 3)
        rows.setRowStretchFactor(1, 3)
        rows.setRowStretchFactor(2, 2)

    def _build_memory(self) -> None:
        self.mem_plot = make_plot(self.glw, 0, "The whole table: one contiguous block of memory", self._fg)
        self.mem_plot.hideAxis("left")
        self.mem_table = QGraphicsRectItem()
        self.mem_table.setPen(pg.mkPen(self._fg, width=1))
        self.mem_table.setBrush(pg.mkBrush(PENDING))
        self.mem_plot.addItem(self.mem_table)
        self.mem_bounds = pg.PlotDataItem(connect="pairs", pen=pg.mkPen(QColor(PENDING).darker(150), width=1))
        self.mem_plot.addItem(self.mem_bounds)
        self.mem_row = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(ACCENT, width=3))
        self.mem_plot.addItem(self.mem_row)
        self.mem_arrow = pg.ArrowItem(angle=-90, headLen=14, tipAngle=40, brush=pg.mkBrush(ERROR), pen=None)
        self.mem_plot.addItem(self.mem_arrow)
        self.mem_jump = pg.PlotDataItem(pen=pg.mkPen(ERROR, width=2, style=Qt.DashLine))
        self.mem_plot.addItem(self.mem_jump)
        bottom = self.mem_plot.getAxis("bottom")
        bottom.setStyle(showValues=False)
        bottom.setPen(pg.mkPen(None))
        bottom.setHeight(4)
        self.mem_labels = []
        for anchor, color in (((0, 0.5), text_color_on(PENDING)), ((1, 0.5), text_color_on(PENDING)),
                              ((0, 0.5), QColor(ACCENT))):
            t = pg.TextItem(color=color, anchor=anchor)
            t.setFont(small_font(self.font()))
            self.mem_plot.addItem(t, ignoreBounds=True)
            self.mem_labels.append(t)

    def _build_near(self) -> None:
        self.near_plot = make_plot(self.glw, 1, "Around the row: each row is one stride of bytes", self._fg)
        self.near_plot.hideAxis("left")
        self.near_rects, self.near_texts = [], []
        for _ in range(NEAR_ROWS):
            r = QGraphicsRectItem()
            self.near_plot.addItem(r)
            self.near_rects.append(r)
            t = pg.TextItem(anchor=(0.5, 0.5))
            t.setFont(small_font(self.font()))
            t.textItem.document().setDocumentMargin(1)  # Qt's 4 px each side would crowd the boxes
            t.setZValue(6)
            self.near_plot.addItem(t, ignoreBounds=True)
            self.near_texts.append(t)
        self.near_fill = QGraphicsRectItem()
        self.near_fill.setPen(pg.mkPen(None))
        self.near_fill.setBrush(pg.mkBrush(ACCENT))
        self.near_fill.setZValue(3)
        self.near_plot.addItem(self.near_fill)
        self._near_rows: list[int] = []
        self.near_plot.getViewBox().sigResized.connect(self._fit_near_labels)

    # -- one token -----------------------------------------------------------------------
    def show_token(self, row: np.ndarray, lim: float) -> None:
        """The row the copy produces (values and colour limit)."""
        self.output.set_row(row, lim)

    def show_layout(self, lay: RowLayout, base: StoredBase | None, stored: bool) -> None:
        """Stride, offset and address of the row for the chosen dtype.

        ``base`` is the real start of the stored table (None: not known, or
        not for this dtype); ``stored`` says the layout is the table's own.
        """
        self._layout = lay
        v, hot = lay.vocab_size, lay.token_id
        self.mem_table.setRect(QRectF(0, 0.3, lay.table_bytes, 0.9))
        if v <= 64:
            self.mem_bounds.setData(np.repeat(np.arange(1, v) * lay.stride, 2).astype(float),
                                    np.tile([0.3, 1.2], v - 1))
        else:
            self.mem_bounds.setData([], [])
        self.mem_row.setValue(lay.offset + lay.stride / 2)
        self._ranges.set(self.mem_plot, (0, lay.table_bytes), (-0.6, 2.9), padding=0.02)
        self._set_title(self.mem_plot, f"Whole table, one block: {lay.table_bytes:,} B")
        start, end, row_lab = self.mem_labels
        start.setText(" base")
        start.setPos(0, 0.75)
        end.setText(f"base + {lay.table_bytes:,} B ")
        end.setPos(lay.table_bytes, 0.75)
        right_half = lay.offset > lay.table_bytes / 2
        row_lab.setAnchor((1, 0.5) if right_half else (0, 0.5))
        where = f"row {hot:,} at base + {hex_address(lay.offset)}"
        row_lab.setText(f"{where} " if right_half else f"  {where}")
        row_lab.setPos(lay.offset + lay.stride / 2, 2.3)
        self._show_near(lay)
        self._set_formula(lay, base if stored else None, stored)

    def _set_title(self, plot: pg.PlotItem, text: str) -> None:
        if plot.titleLabel.text != text:  # a new title lays the plot out again
            plot.setTitle(text, size="9pt", color=self._fg)

    def _show_near(self, lay: RowLayout) -> None:
        """Rows around row i, one stride each, drawn in strides from the first one shown."""
        v, hot = lay.vocab_size, lay.token_id
        lo = max(0, min(hot - NEAR_ROWS // 2, v - NEAR_ROWS))
        rows = list(range(lo, min(v, lo + NEAR_ROWS)))
        self._near_first = lo
        hot_fill = QColor(ACCENT).lighter(170)
        for k, (rect, text) in enumerate(zip(self.near_rects, self.near_texts)):
            if k >= len(rows):
                rect.hide()
                text.hide()
                continue
            r = rows[k]
            is_hot = r == hot
            fill = hot_fill if is_hot else QColor(PENDING)
            rect.setRect(QRectF(r - lo, 0, 1, 1))
            rect.setBrush(pg.mkBrush(fill))
            rect.setPen(pg.mkPen(ACCENT if is_hot else self._fg, width=2 if is_hot else 1))
            text.setColor(text_color_on(fill))
            text.setPos(r - lo + 0.5, 0.5)
            rect.show()
        self._near_rows = rows
        self._ranges.set(self.near_plot, (0, len(rows)), (-0.1, 1.1))
        self._fit_near_labels()
        self.near_plot.getAxis("bottom").setTicks([[(hot - lo, f"base + {hex_address(lay.offset)}")], []])
        self._set_title(self.near_plot, f"Around row {hot:,}: one row = {lay.stride:,} B")

    def _fit_near_labels(self, *_) -> None:
        """Each row's name inside its box: "row 1,193", else "1,193", else none (at 1024 px
        on SmolLM2 the names ran into each other). The selected row's is always there;
        a neighbour whose name it would touch gives way."""
        lay, rows = self._layout, self._near_rows
        if lay is None or not rows:
            return
        vb = self.near_plot.getViewBox()
        x0, x1 = (vb.mapViewToScene(QPointF(x, 0.5)).x() for x in (0.0, 1.0))
        room = abs(x1 - x0) - 4  # px inside a box, clear of its borders
        hot = rows.index(lay.token_id) if lay.token_id in rows else -1
        taken: list[tuple[float, float]] = []
        for k in sorted(range(len(rows)), key=lambda k: k != hot):  # the selected row first
            text = self.near_texts[k]
            for name in (f"row {rows[k]:,}", f"{rows[k]:,}"):
                text.setText(name)
                width = text.textItem.boundingRect().width()
                if width <= room:
                    break
            middle = x0 + (k + 0.5) * (x1 - x0)
            span = (middle - width / 2, middle + width / 2)
            show = (width <= room or k == hot) and all(span[1] <= a or span[0] >= b for a, b in taken)
            text.setVisible(show)
            if show:
                taken.append(span)

    def _set_formula(self, lay: RowLayout, base: StoredBase | None, stored: bool) -> None:
        d, hot = lay.dim, lay.token_id
        if base is not None:
            base_txt, addr = hex_address(base.address), hex_address(base.address + lay.offset)
        else:
            base_txt, addr = "base", f"base + {hex_address(lay.offset)}"
        # each step on a line of its own, as offset and address have them: one line
        # ("stride  = d / 32 blocks × 34 B = 18 × 34 B = 612 B") was cut at 1024 px
        if not lay.quantised:
            stride_lines = ["stride  = d × itemsize",
                            f"        = {d:,} × {int(lay.itemsize)} B = <b>{lay.stride:,} B</b>"]
        elif lay.block_values and d % lay.block_values == 0:
            stride_lines = [f"stride  = d / {lay.block_values} blocks × {lay.block_bytes} B",
                            f"        = {d // lay.block_values:,} × {lay.block_bytes} B = <b>{lay.stride:,} B</b>"]
        else:
            stride_lines = [f"stride  = row_bytes = <b>{lay.stride:,} B</b>"]
        self._address_line = len(stride_lines) + 2  # the first line of the jump (phase 1)
        self._formula_lines = [
            *stride_lines,
            f"offset  = i × stride = {hot:,} × {lay.stride:,}",
            f"        = <b>{lay.offset:,} B = {hex_address(lay.offset)}</b>",
            "address = base + offset",
            f"        = {base_txt} + {hex_address(lay.offset)}",
            f"        = <b style='color:{ACCENT}'>{addr}</b>",
        ]
        if base is not None:
            note = f"base = {base.description}"
        elif stored:
            note = "base = where the table starts in memory"
        else:
            article = "an" if lay.dtype[:1] in "aeiou" else "a"  # an int8, a float16
            note = f"{article} {lay.dtype} copy of E starts at its own base; the offset is what changes"
        self.note.setText(note)
        self.note.setToolTip(note)
        size_txt = f"{lay.itemsize:g}" if not lay.quantised else f"{lay.stride:,}/{d:,}"
        self.formula.setToolTip(f"itemsize = bytes per value ({size_txt}); {lay.note}")

    # -- one frame -----------------------------------------------------------------------
    def show_frame(self, f: anim.Frame) -> None:
        """Draw the pointer path at frame ``f``: address, jump, copy."""
        lay = self._layout
        if lay is None:
            return
        target = lay.offset + lay.stride / 2
        x = 0.0 if f.gather_phase == 0 else (target * f.gather_progress if f.gather_phase == 1 else target)
        self.mem_arrow.setPos(x, 1.25)
        if f.gather_phase >= 1:
            self.mem_jump.setData([0, x], [1.55, 1.55])
        else:
            self.mem_jump.setData([], [])
        self.near_fill.setRect(QRectF(lay.token_id - self._near_first, 0.0, f.gather_values / lay.dim, 0.14))
        mark = css_rgba(ACCENT, 50)
        lines = []
        for k, line in enumerate(self._formula_lines):
            active = f.gather_phase == 0 or (f.gather_phase == 1 and k >= self._address_line)
            lines.append(f"<span style='background:{mark}'>{line}</span>" if active else line)
        self.formula.setText("<pre style='margin:0'>" + "\n".join(lines) + "</pre>")
        self.output.show(f.gather_values)
        g_bytes = int(round(f.gather_values * lay.itemsize)) if f.gather_phase < 3 else lay.stride
        w = len(f"{lay.stride:,}")
        self.counters.setText(
            "<pre style='margin:0'>"
            f"step           {PHASES[f.gather_phase]}\n"
            f"FLOPs          <b>{0:>{w},}</b>\n"
            f"bytes read     {g_bytes:>{w},} of {lay.stride:,} (one row)</pre>"
        )
