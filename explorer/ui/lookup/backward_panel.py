"""The lookup's backward step on the user's text: an upstream gradient G (one
seeded vector per position) flows back as dL/dE = one_hot(x)ᵀ G, a
scatter-add: the rows the text looked up light up, a repeated token's row
sums its contributions, every other row stays exactly zero."""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from explorer.core.lookup import animation as anim
from explorer.core.lookup.backward import LookupBackward
from explorer.ui.lookup.backward_plots import MAX_LABELS, BackwardPlots
from explorer.ui.lookup.plots import SMALL_D, Ranges, elastic_label, plot_area
from explorer.ui.style import ERROR, GRADIENT_ROWS, SPACING, plot_colors

#: seconds per position at speed 1, and the longest the whole step may take
PER_POSITION_S = 0.6
LONGEST_S = 8.0
#: columns drawn (a wider table shows its first columns, and says so)
DISPLAY_COLUMNS = 256
#: bins of the strip of all V rows
STRIP_BINS = 800
TICK_MS = 33
EMPTY_BACKWARD = "Type some text: its tokens are what the gradient flows back to"


def _percent(part: int, whole: int) -> str:
    """``part`` of ``whole`` in %, never rounded up to 100 or down to 0 when it is not."""
    pct = 100.0 * part / whole
    for digits in (1, 2, 3, 4):
        text = f"{pct:.{digits}f}"
        if (float(text) < 100 or part == whole) and (float(text) > 0 or part == 0):
            return text
    return f"{pct:.4g}"


def _every(n: int) -> int:
    return max(1, math.ceil(n / MAX_LABELS))


class BackwardPanel(BackwardPlots, QWidget):
    """G, dL/dE's rows and the strip of all V rows, animated position by
    position; the repeated row's contributions and their sum; the counts and
    what they mean for training.

    Signals
    -------
    new_gradient_clicked()
        The user wants another seeded G.
    training_clicked()
        The user wants the training view.
    """

    new_gradient_clicked = Signal()
    training_clicked = Signal()

    def __init__(self, clock: Callable[[], float] = time.perf_counter, parent=None):
        super().__init__(parent)
        self._fg = plot_colors()[1]
        self._playhead = anim.Playhead(clock=clock)
        self._back: LookupBackward | None = None
        self._pieces: list[str] = []
        self._row_pieces: list[str] = []
        self._focus = -1  # index into rows of the row whose contributions are shown
        self._shown_step = -1
        self._per = PER_POSITION_S
        self._ranges = Ranges()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(SPACING // 2)
        self.title = elastic_label("L = Σ_t ⟨G_t, E[x_t]⟩: G is the gradient the layers above would send back to "
                                   "each looked-up vector; here it is drawn at random with a seed", rich=True)
        self.title.setText("<b>Backward step</b>: dL/dE = one_hot(x)ᵀ G, a scatter-add: G<sub>t</sub> is "
                           "added into row x<sub>t</sub>, and into no other row")
        lay.addWidget(self.title)
        # the buttons and the running commentary: the view puts this bar in its top row
        self.bar = QWidget()
        bar = QHBoxLayout(self.bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(SPACING)
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Send G back position by position, or pause")
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Pause and add the next position's G_t")
        self.new_button = QPushButton("New G")
        self.new_button.setToolTip("Draw another upstream gradient (the next seed)")
        for b in (self.play_button, self.step_button, self.new_button):
            bar.addWidget(b)
        self.now_label = elastic_label("What the backward step is doing at this moment", rich=True)
        self.now_label.setWordWrap(True)  # at 1024 x 700 one line was cut at the Forward button
        bar.addWidget(self.now_label, 1)
        self.glw = plot_area(240)
        lay.addWidget(self.glw, 1)
        self._init_plots()
        self.counts = elastic_label("Rows of dL/dE with a non-zero value, against the distinct ids of the text",
                                    rich=True)
        lay.addWidget(self.counts)
        lesson = QHBoxLayout()
        lesson.setSpacing(SPACING)
        self.lesson = elastic_label(rich=True)
        self.lesson.setWordWrap(True)
        self.training_button = QPushButton("Training view ▸")
        self.training_button.setToolTip("Train the toy model and watch which rows get a gradient at every step")
        lesson.addWidget(self.lesson, 1)
        lesson.addWidget(self.training_button, 0, Qt.AlignTop)
        lay.addLayout(lesson)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.advance)
        self.play_button.clicked.connect(self._on_play_button_clicked)
        self.step_button.clicked.connect(self.step)
        self.new_button.clicked.connect(self.new_gradient_clicked)
        self.training_button.clicked.connect(self.training_clicked)
        self.clear("")

    # -- reading -------------------------------------------------------------------------------
    @property
    def result(self) -> LookupBackward | None:
        return self._back

    @property
    def positions_done(self) -> int:
        """Positions whose G_t has been added so far (the frame on screen)."""
        return max(self._shown_step, 0)

    @property
    def focus_row(self) -> int:
        """The token id whose contributions are shown side by side (-1: none)."""
        return -1 if self._back is None or self._focus < 0 else int(self._back.rows[self._focus])

    @property
    def playing(self) -> bool:
        return self._playhead.playing

    # -- content -------------------------------------------------------------------------------
    def clear(self, message: str) -> None:
        """No result (yet): say why, draw nothing."""
        self.pause()
        self._back = None
        self._shown_step = -1
        self.now_label.setText(html.escape(message, quote=False))
        self.counts.setText("")
        self.lesson.setText("")
        for b in (self.play_button, self.step_button):
            b.setEnabled(False)
        if self.plots_built:
            self._clear_plots()

    def show_for(self, table, back: LookupBackward, selected_id: int, text_positions: int = 0) -> bool:
        """Show ``back`` if it is for ``table``, labelled with its pieces; False when there is nothing to show.

        ``text_positions``: tokens with a row in the whole text (more than ``back`` took: say so)."""
        if table is None or back.vocab_size != table.vocab_size:
            return False
        if not back.ids.size:
            self.clear(EMPTY_BACKWARD)
            return False
        pieces = [table.shown_piece(int(i)).text for i in back.ids]
        self.show_result(back, pieces, [table.shown_piece(int(i)).text for i in back.rows], selected_id)
        if text_positions > back.ids.size:
            self.counts.setText(self.counts.text() + f" · the first {back.ids.size:,} of the text's "
                                f"{text_positions:,} tokens")
        return True

    def show_result(self, back: LookupBackward, pieces: list[str], row_pieces: list[str], selected_id: int) -> None:
        """A new backward step: ``pieces`` label the positions, ``row_pieces`` the rows hit;
        the repeated row shown is the selected token's if it repeats, else the most repeated."""
        self._back, self._pieces, self._row_pieces = back, pieces, row_pieces
        t, d = back.ids.size, back.upstream.shape[1]
        cols = min(d, DISPLAY_COLUMNS)
        shown = np.abs(back.upstream[:, :cols])
        lim = float(max(shown.max() if shown.size else 0.0, np.abs(back.grad[:, :cols]).max() if back.rows.size else 0))
        self._lim = lim if lim > 0 else 1.0
        self._cols = cols
        self._choose_focus(selected_id)
        self._write_counts()
        self._per = min(PER_POSITION_S, LONGEST_S / max(t, 1))
        self._playhead.reset(self._per * t + self._per)
        self._shown_step = -1
        for b in (self.play_button, self.step_button):
            b.setEnabled(t > 0)
        self._draw_result()
        self.render()

    def _draw_result(self) -> None:
        """The parts of a result that stay while it plays: G, the labels, titles and ranges."""
        if not self.plots_built:
            return
        back, pieces, row_pieces, cols = self._back, self._pieces, self._row_pieces, self._cols
        t, d = back.ids.size, back.upstream.shape[1]
        self.g_img.setImage(back.upstream[:, :cols].astype(np.float32), levels=(-self._lim, self._lim),
                            autoLevels=False)
        self.g_img.setRect(QRectF(0, 0, cols, t))
        self._ranges.set(self.g_plot, (0, cols), (0, max(t, 1)), padding=0)
        self._ranges.set(self.grad_plot, (0, cols), (0, max(back.rows.size, 1)), padding=0)
        step = _every(t)
        self.g_plot.getAxis("left").set_labels([(k + 0.5, f"{pieces[k]} ", f"t={k}") for k in range(0, t, step)])
        counts = [len(p) for p in back.positions]
        step = _every(back.rows.size)
        self.grad_plot.getAxis("left").set_labels(
            [(r + 0.5, f"{row_pieces[r]} ", f"{int(back.rows[r]):,} ×{counts[r]}")
             for r in range(0, back.rows.size, step)])
        self._fit_label_axes()
        self.g_title.set("G: upstream gradient, one row per position")
        self.grad_title.set(f"dL/dE: the {back.rows.size} rows the text looked up")
        for plot in (self.g_plot, self.grad_plot, self.sum_plot):  # a wide table: say which columns are drawn
            plot.setLabel("bottom", f"columns 0–{cols - 1} of {d:,}" if cols < d else None)
        self._ranges.set(self.strip_plot, (0, back.vocab_size), (0, 1), padding=0.01)
        self.strip_img.setRect(QRectF(0, 0, back.vocab_size, 1))

    def select_token(self, token_id: int) -> None:
        """The selected token changed: show its row's contributions if it repeats."""
        if self._back is not None:
            self._choose_focus(token_id)
            self._shown_step = -1
            self.render()

    def _choose_focus(self, selected_id: int) -> None:
        back = self._back
        counts = [len(p) for p in back.positions]
        ids = back.rows.tolist()
        if selected_id in ids and counts[ids.index(selected_id)] > 1:
            self._focus = ids.index(selected_id)
        elif counts:
            self._focus = int(np.argmax(counts))
        else:
            self._focus = -1

    def _write_counts(self) -> None:
        back = self._back
        r, v, t, distinct = back.rows.size, back.vocab_size, back.ids.size, back.distinct_ids
        repeated = len(back.repeated())
        same = "=" if r == distinct else "≠"
        self.counts.setText(
            f"<b style='color:{GRADIENT_ROWS}'>{r:,}</b> non-zero rows {same} {distinct:,} distinct ids "
            f"({t:,} positions; {repeated:,} {'id repeats' if repeated == 1 else 'ids repeat'}) · "
            f"{back.zero_rows:,} of {v:,} rows exactly 0 "
            f"({_percent(back.zero_rows, v)} %)")
        self.lesson.setText(
            f"For training: an SGD step (E[k] −= lr · dL/dE[k]) moves only these {r:,} rows. The "
            f"{back.zero_rows:,} rows of tokens absent from the text get nothing this step; a rare token waits "
            "for a batch that holds it.")

    # -- animation -----------------------------------------------------------------------------
    def play(self) -> None:
        if self._back is None or not self._back.ids.size:
            return
        if self._playhead.finished:
            self._playhead.seek(0.0)
        self._playhead.play()
        self.play_button.setText("Pause")
        if self.isVisible():
            self._timer.start()
        self.render()

    def pause(self) -> None:
        self._playhead.pause()
        self._timer.stop()
        self.play_button.setText("Play")

    def step(self) -> None:
        """Pause and add one more position."""
        if self._back is None:
            return
        self.pause()
        self._playhead.seek(min(self._playhead.end, (self.positions_done + 1) * self._per))
        self.render()

    def seek_end(self) -> None:
        """Every position added (tests, and a user who wants the result at once)."""
        if self._back is not None:
            self.pause()
            self._playhead.seek(self._playhead.end)
            self.render()

    def suspend(self) -> None:
        self._playhead.suspend()
        self._timer.stop()

    def resume(self) -> None:
        self._playhead.resume()
        if self._playhead.playing:
            self._timer.start()

    def advance(self) -> None:
        """Draw the frame of the clock's time (the timer calls this)."""
        if not self._playhead.playing:
            self._timer.stop()
            return
        self.render()
        if self._playhead.finished:
            self.pause()

    def _on_play_button_clicked(self) -> None:
        self.pause() if self.playing else self.play()

    def render(self) -> None:
        back = self._back
        if back is None or not self.plots_built:
            return  # nothing to draw, or the page was never shown (its first show draws)
        t = back.ids.size
        done = min(t, int(self._playhead.time() / self._per + 1e-9))
        if done == self._shown_step:
            return
        self._shown_step = done
        cols, lim = self._cols, self._lim
        partial = back.partial(done, cols)
        self.grad_img.setImage(partial.astype(np.float32), levels=(-lim, lim), autoLevels=False)
        self.grad_img.setRect(QRectF(0, 0, cols, back.rows.size))
        hit = np.zeros(back.vocab_size, bool)
        hit[back.ids[:done]] = True
        bins = min(STRIP_BINS, back.vocab_size)
        lit = np.zeros(bins, np.intp)
        lit[np.flatnonzero(hit) * bins // back.vocab_size] = 1
        self.strip_img.setImage(self._lut[lit][None, :, :], autoLevels=False)
        self.strip_img.setRect(QRectF(0, 0, back.vocab_size, 1))
        # mid-walk the counts are of the positions sent back so far: the counts line under
        # the page gives the whole batch's, and without "so far" the two disagreed
        so_far = f" so far ({done} of {t} positions)" if done < t else ""
        self.strip_plot.setTitle(f"All {back.vocab_size:,} rows of dL/dE: <span style='color:{GRADIENT_ROWS}'>"
                                 f"{int(hit.sum()):,} non-zero</span>, {back.vocab_size - int(hit.sum()):,} exactly 0"
                                 f"{so_far}", color=self._fg, size="9pt")
        last = done - 1
        if 0 <= last < t:
            self.g_now.setRect(QRectF(0, last, cols, 1))
            self.g_now.show()
            r = back.row_of_position(last)
            self.grad_now.setRect(QRectF(0, r, cols, 1))
            self.grad_now.setVisible(r >= 0)
            k = back.positions[r].index(last) + 1 if r >= 0 else 0
            n = len(back.positions[r]) if r >= 0 else 0
            what = f", {k} of {n}" if n > 1 else ""
            self.now_label.setText(
                f"t = {last}: G<sub>{last}</sub> <span style='color:{ERROR}'>■</span> → row "
                f"<b style='color:{GRADIENT_ROWS}'>{int(back.ids[last]):,}</b> "
                f"({html.escape(self._pieces[last], quote=False)}){what}")
            self.now_label.setToolTip(f"Position {last}'s upstream gradient G_{last} is added into row "
                                      f"{int(back.ids[last]):,}, the row it looked up, and nowhere else")
        else:
            self.g_now.hide()
            self.grad_now.hide()
            self.now_label.setText("Press Play: each position's G<sub>t</sub> goes back into its own row"
                                   if done == 0 else "")
        if done == t and t:
            self.now_label.setText(f"Done: {t} positions → {back.rows.size} rows; {back.zero_rows:,} rows stay 0")
        self._draw_sum(done, partial)

    def _draw_sum(self, done: int, partial: np.ndarray) -> None:
        """The focus row's contributions side by side (one per line) and their sum so far."""
        back, r = self._back, self._focus
        if r < 0:
            self.sum_title.set("")
            return
        where = back.positions[r][:MAX_LABELS]
        cols, lim, d = self._cols, self._lim, back.upstream.shape[1]
        added = [t for t in where if t < done]
        rows = np.zeros((len(where) + 1, cols), np.float32)
        for k, t in enumerate(where):
            rows[k] = back.upstream[t, :cols]
        rows[-1] = partial[r]
        self.sum_img.setImage(rows, levels=(-lim, lim), autoLevels=False)
        self.sum_img.setRect(QRectF(0, 0, cols, rows.shape[0]))
        self._ranges.set(self.sum_plot, (0, cols), (0, rows.shape[0]), padding=0)
        piece = self._row_pieces[r]
        labels = [(k + 0.5, "", f"{'+' if t in added else ' '} G_{t} (t={t})") for k, t in enumerate(where)]
        labels.append((len(where) + 0.5, "", f"= dL/dE[{int(back.rows[r]):,}]"))
        self.sum_plot.getAxis("left").set_labels(labels)
        self._fit_label_axes()
        self.sum_line.setRect(QRectF(0, len(where), cols, 1))
        self.sum_line.show()
        n = len(back.positions[r])
        title = (f"Row {int(back.rows[r]):,} ({piece}) appears {n} times: its gradient is the sum of {n} "
                 f"contributions ({len(added)} added so far)" if n > 1 else
                 f"No token repeats: row {int(back.rows[r]):,} ({piece}) gets one contribution")
        self.sum_title.set(title)
        small = d <= SMALL_D
        cells = [(c + 0.5, k + 0.5, f"{rows[k, c]:+.2f}", float(rows[k, c]))
                 for k in range(rows.shape[0]) for c in range(cols)] if small else []
        self.sum_texts.show(cells, lim)
