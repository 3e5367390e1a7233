"""The text's tokens as chips (piece over id), painted in one widget.

A widget per chip took seconds to create for a pasted book; here a layout
pass is a loop over widths cached per piece, and a paint draws only the
chips in the exposed rectangle, so thousands of tokens cost milliseconds.
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QMouseEvent, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from explorer.core.tokens.text import TokenizedText
from explorer.core.tokens.tokenize import Token
from explorer.core.units import shorten
from explorer.ui.style import ACCENT, ERROR, SPACING, mono_font

__all__ = ["ChipView", "ChipLayout"]

#: padding inside a chip and the gap between lines of chips
PAD_X, PAD_Y, LINE_GAP = 8, 4, 6
#: characters of a piece on its chip: a typed word that is no id can be 50,000
#: characters long (the tooltip shows it whole)
LABEL_CHARS = 40
RADIUS = 6.0
#: chips a new selection outlines or clears past which the whole strip is painted again (a
#: common word of a book: its chips are all over the strip)
MANY_CHIPS = 64


class ChipLayout:
    """Where each chip goes for one width: parallel lists, one entry per token."""

    def __init__(self) -> None:
        self.x: list[int] = []
        self.y: list[int] = []
        self.w: list[int] = []
        self.line_starts: list[int] = []  # index of the first chip of each line
        self.line_y: list[int] = []
        self.height = 0

    def __len__(self) -> int:
        return len(self.x)


class ChipView(QWidget):
    """Chips for the tokens of a text; click one, or use ←/→.

    Signals
    -------
    chip_clicked(int)
        The position in the text of the clicked chip.
    step_requested(int)
        ←/→ pressed: move the selection by -1/+1.
    """

    chip_clicked = Signal(int)
    step_requested = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setMouseTracking(False)
        sp = QSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
        sp.setHeightForWidth(True)
        self.setSizePolicy(sp)
        self._piece_font = mono_font()
        self._piece_font.setPointSize(13)
        self._id_font = QFont(self.font())
        self._id_font.setPointSize(9)
        self._pm, self._im = QFontMetrics(self._piece_font), QFontMetrics(self._id_font)
        self._chip_h = self._pm.height() + self._im.height() + 2 * PAD_Y
        self._tokenized: TokenizedText | None = None
        self._labels: list[str] = []      # what each chip shows on its first line
        self._ids: list[str] = []         # ... and on its second (the reason, for a bad token)
        self._starts: Sequence[bool] = ()  # the chip starts a word (a gap before it)
        self._ends: Sequence[bool] = ()    # the chip ends a word
        self._bad: Sequence[bool] = ()     # the token names no row of the table
        self._width_of: dict[str, int] = {}
        self._widths: list[int] = []      # each chip's width, measured once per text
        self._layouts: dict[int, ChipLayout] = {}  # by width: Qt asks heightForWidth many times
        self._selected = -1
        self._selected_id = -1
        self._pieces = None
        self._rows = np.zeros(0, np.int64)  # each chip's row (-1: the token names none)

    # -- data ----------------------------------------------------------------------------
    def set_tokens(self, tokenized: TokenizedText) -> None:
        """Show the tokens of ``tokenized``: each piece as what it stands for
        (decoded bytes, visible spaces); a token that names no row keeps its
        chip, with the reason in place of the id."""
        self._tokenized = tokenized
        tokens = tokenized.tokens
        counts = tokenized.counts
        # each kind of token (a row's piece, or a piece and the reason it names no row) has its label,
        # id line and width made once: a pasted book is 13,000 chips over about 1,400 rows, or on a
        # toy table of words 11,000 chips, most of them the same few unknown words (made each anew,
        # they took 13 ms of a model switch). Which chip is of which kind, and where words start and
        # end, came with the tokens (a book's chips looked at one by one here: 30 ms of the pass)
        runs = tokenized.token_runs
        made = []
        for first in runs.kinds:
            t = tokens[first]
            label = tokenized.shown_piece(t).short(LABEL_CHARS)
            if t.problem is None:
                c = counts.get(t.id, 0)
                ident = f"{t.id:,}" + (f" (×{c})" if c > 1 else "")
            else:
                ident = tokenized.problem_label(t)
            made.append((label, ident, self._chip_width(label, ident)))
        labels = [made[k][0] for k in runs.kind_of]
        ids = [made[k][1] for k in runs.kind_of]
        widths = [made[k][2] for k in runs.kind_of]
        bad, starts, ends = (runs.rows < 0).tolist(), runs.word_starts, runs.word_ends
        self._rows = runs.rows
        self._labels, self._ids, self._widths, self._bad = labels, ids, widths, bad
        self._starts, self._ends = starts, ends
        self._layouts.clear()
        self.updateGeometry()
        self.update()

    def set_selection(self, position: int, token_id: int) -> None:
        """Outline the selected chip and every chip that reads the same row; only the chips
        whose outline changes are painted again (every chip painted anew at each selection
        was 11 % of the window's time in selections on the Matrix tab, py-spy)."""
        if (position, token_id) == (self._selected, self._selected_id):
            return
        changed = self._chips_of(self._selected, self._selected_id) | self._chips_of(position, token_id)
        self._selected, self._selected_id = position, token_id
        if len(changed) > MANY_CHIPS or not self._labels:
            self.update()
            return
        for i in changed:  # Qt joins the rects into the region of one paint
            self.update(self.chip_rect(i).toAlignedRect().adjusted(-1, -1, 1, 1))

    def _chips_of(self, position: int, token_id: int) -> set[int]:
        """The chip at ``position`` and every chip that reads row ``token_id`` (those a selection outlines)."""
        chips = {position} if 0 <= position < len(self._labels) else set()
        if token_id < 0:
            return chips
        # a comparison over the chips' rows: a map of every row's chips, made for the first selection
        # of a book, was 25-30 ms of the paste's pass
        return chips.union(np.flatnonzero(self._rows == token_id).tolist())

    def tokens(self) -> tuple[Token, ...]:
        return self._tokenized.tokens if self._tokenized is not None else ()

    def label(self, position: int) -> tuple[str, str]:
        """(piece line, id line) of the chip at ``position``."""
        return self._labels[position], self._ids[position]

    def flags(self, position: int) -> dict[str, bool]:
        """How the chip at ``position`` is drawn: selected, same_row (reads the
        selected row), out_of_range, special, word_start, word_end."""
        t = self._tokenized.tokens[position]
        selected = position == self._selected
        return {
            "selected": selected,
            "same_row": not selected and t.ok and t.id == self._selected_id and t.id >= 0,
            "out_of_range": self._bad[position],
            "special": t.special,
            "word_start": self._starts[position],
            "word_end": self._ends[position],
        }

    def chip_rect(self, position: int) -> QRectF:
        """Where the chip at ``position`` is drawn, in this widget's coordinates."""
        lay = self._current_layout()
        return QRectF(lay.x[position], lay.y[position], lay.w[position], self._chip_h)

    def chip_at(self, point: QPoint) -> int:
        """Position of the chip under ``point``, or -1."""
        lay = self._current_layout()
        if not len(lay):
            return -1
        line = bisect.bisect_right(lay.line_y, point.y()) - 1
        if line < 0 or point.y() > lay.line_y[line] + self._chip_h:
            return -1
        lo = lay.line_starts[line]
        hi = lay.line_starts[line + 1] if line + 1 < len(lay.line_starts) else len(lay)
        i = bisect.bisect_right(lay.x, point.x(), lo, hi) - 1
        if i >= lo and point.x() <= lay.x[i] + lay.w[i]:
            return i
        return -1

    # -- layout ----------------------------------------------------------------------------
    def _chip_width(self, label: str, ident: str) -> int:
        # measured once per distinct text: a book repeats its pieces and ids
        w = self._width_of.get(label)
        if w is None:
            if len(self._width_of) > 100_000:
                self._width_of.clear()
            w = self._width_of[label] = self._pm.horizontalAdvance(label)
        iw = self._width_of.get("\0" + ident)
        if iw is None:
            iw = self._width_of["\0" + ident] = self._im.horizontalAdvance(ident)
        return max(w, iw, 12) + 2 * PAD_X

    def layout_for(self, width: int) -> ChipLayout:
        """Wrap the chips into lines no wider than ``width`` pixels (computed once per width)."""
        lay = self._layouts.get(width)
        if lay is None:
            if len(self._layouts) > 8:
                self._layouts.clear()
            lay = self._layouts[width] = self._wrap(width)
        return lay

    def _wrap(self, width: int) -> ChipLayout:
        """Lines filled greedily: a chip goes on the line if it ends within ``width``, or if it is the
        line's first; words apart by SPACING, pieces of a word touching, no gap at a line's start.

        With the chips' ends along one endless line (``ends``), a line that starts at chip ``s`` holds
        the chips that end within ``width`` of where ``s`` starts: one search a line, not a step a
        chip (a book's 13,000 chips were 19-22 ms a width in a real window, and a paste lays them
        out for two)."""
        lay = ChipLayout()
        n = len(self._widths)
        if not n:
            lay.line_starts.append(0)
            lay.line_y.append(0)
            return lay
        right = max(width, 40)
        w = np.asarray(self._widths, np.int64)
        gap = np.where(np.asarray(self._starts, bool), SPACING, 0)
        gap[0] = 0
        ends = np.cumsum(gap + w)  # where each chip ends on the endless line
        begins = ends - w  # ... and where it begins
        end_at, begin_at = ends.tolist(), begins.tolist()  # searched in Python: a book has 1,100 lines
        line_starts, s = [], 0
        while s < n:
            line_starts.append(s)
            # the line's first chip at x = 0 (the gap before it dropped); the next line begins at the
            # first chip ending past the width
            s = max(s + 1, bisect.bisect_right(end_at, begin_at[s] + right, s))
        firsts = np.asarray(line_starts, np.int64)
        line_of = np.repeat(np.arange(len(firsts)), np.diff(np.append(firsts, n)))
        step = self._chip_h + LINE_GAP
        lay.x = (begins - begins[firsts][line_of]).tolist()
        lay.y = (line_of * step).tolist()
        lay.w = list(self._widths)
        lay.line_starts = line_starts
        lay.line_y = [k * step for k in range(len(line_starts))]
        lay.height = (len(line_starts) - 1) * step + self._chip_h
        return lay

    def _current_layout(self) -> ChipLayout:
        return self.layout_for(self.width())

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self.layout_for(width).height

    def sizeHint(self) -> QSize:
        return QSize(400, self.heightForWidth(max(self.width(), 400)))

    def minimumSizeHint(self) -> QSize:
        return QSize(40, self._chip_h if self._labels else 0)

    # -- painting ---------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        lay = self._current_layout()
        if not len(lay):
            return
        area = event.rect()
        first = max(0, bisect.bisect_right(lay.line_y, area.top() - self._chip_h) - 1)
        last = bisect.bisect_right(lay.line_y, area.bottom())
        lo = lay.line_starts[first]
        hi = lay.line_starts[last] if last < len(lay.line_starts) else len(lay)
        region = event.region()
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        pal = self.palette()
        tokens = self._tokenized.tokens
        h = self._chip_h
        for i in range(lo, hi):
            if region.intersects(QRect(lay.x[i], lay.y[i], lay.w[i], h)):  # not every chip of those lines
                self._paint_chip(p, pal, i, tokens[i], lay)
        p.end()

    def _paint_chip(self, p: QPainter, pal: QPalette, i: int, token: Token, lay: ChipLayout) -> None:
        rect = QRectF(lay.x[i] + 1, lay.y[i] + 1, lay.w[i] - 2, self._chip_h - 2)
        selected = i == self._selected
        same = not selected and token.ok and token.id == self._selected_id and token.id >= 0
        path = QPainterPath()
        path.addRoundedRect(rect, RADIUS, RADIUS)
        # pieces of one word touch: square the inner corners
        if not self._starts[i]:
            sq = QPainterPath()
            sq.addRect(QRectF(rect.left() - 1, rect.top(), rect.width() / 2 + 1, rect.height()))
            path = path.united(sq)
        if not self._ends[i]:
            sq = QPainterPath()
            sq.addRect(QRectF(rect.center().x(), rect.top(), rect.width() / 2 + 1, rect.height()))
            path = path.united(sq)
        fill = pal.color(QPalette.Window if token.special else QPalette.Base)
        if selected:
            accent = QColor(ACCENT)
            accent.setAlpha(48)
            fill = accent
        border = QColor(pal.color(QPalette.Mid))
        width = 1.0
        if self._bad[i]:
            border, width = QColor(ERROR), 2.0
        elif selected or same:
            border, width = QColor(ACCENT), 2.0
        pen = QPen(border, width)
        if token.special:
            pen.setStyle(Qt.DashLine)
        p.setPen(pen)
        p.setBrush(fill)
        p.drawPath(path)
        p.setPen(pal.color(QPalette.Text))
        p.setFont(self._piece_font)
        top = QRectF(rect.left(), rect.top() + PAD_Y - 1, rect.width(), self._pm.height())
        p.drawText(top, Qt.AlignHCenter | Qt.AlignVCenter, self._labels[i])
        p.setPen(QColor(ERROR) if self._bad[i] else pal.color(QPalette.PlaceholderText))
        p.setFont(self._id_font)
        bottom = QRectF(rect.left(), top.bottom(), rect.width(), self._im.height())
        p.drawText(bottom, Qt.AlignHCenter | Qt.AlignVCenter, self._ids[i])

    # -- input ------------------------------------------------------------------------------
    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.LeftButton:
            i = self.chip_at(event.position().toPoint())
            if i >= 0:
                self.chip_clicked.emit(i)
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key_Left:
            self.step_requested.emit(-1)
        elif event.key() == Qt.Key_Right:
            self.step_requested.emit(+1)
        else:
            super().keyPressEvent(event)

    def event(self, event) -> bool:
        if event.type() == event.Type.ToolTip:
            i = self.chip_at(event.pos())
            if i >= 0:
                QToolTip.showText(event.globalPos(), self.tooltip_for(i), self, self.chip_rect(i).toRect())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def tooltip_for(self, i: int) -> str:
        """What the chip at position ``i`` stands for, in a few lines."""
        tok = self._tokenized
        t = tok.tokens[i]
        esc = lambda s: html.escape(s, quote=False)  # noqa: E731
        piece = tok.shown_piece(t)
        lines = [f"<b>{esc(piece.short(120))}</b>" + (f" — id {t.id:,}" if t.ok else "")]
        if piece.decoded:
            lines.append(esc(piece.describe()))
        shown = tok.text[t.start:t.end]
        if shown and shown != t.piece:
            lines.append(f"text: “{esc(shorten(shown, 120))}” (characters {t.start:,}–{t.end:,})")
        if t.special:
            lines.append("special token added by the tokenizer")
        if not t.ok:
            lines.append(f"<span style='color:{ERROR}'>{esc(tok.problem_message(t))}</span>")
            lines.append("Click to see why it has no row")
            return "<br>".join(lines)
        n = tok.counts.get(t.id, 0)
        if n > 1:
            lines.append(f"appears {n:,} times: every occurrence reads the same row")
        lines.append("Click to see its row")
        return "<br>".join(lines)
