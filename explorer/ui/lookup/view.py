"""The two ways to get row i of E, side by side and in step: a one-hot vector
times E (walks through every row, multiplying almost all of them by zero)
versus a pointer offset (one address, one jump, d values copied). Below, the
real check and measurement of both on the loaded table, from the state."""

from __future__ import annotations

import html
import time
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QStackedLayout,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from explorer.core.bench import LookupMeasurement
from explorer.core.errors import user_message
from explorer.core.lookup import animation as anim
from explorer.core.lookup.ways import PathComparison, RowLayout, row_layout
from explorer.core.units import format_size
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, ShownGate
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.lookup.backward_panel import EMPTY_BACKWARD, BackwardPanel
from explorer.ui.lookup.controls import PlaybackControls, StoredAsChoice
from explorer.ui.lookup.forward_page import ForwardPage, panels_in_steps
from explorer.ui.style import ACCENT, CUE_STYLE, ERROR, SPACING, style_as

#: milliseconds between animation frames (the frame itself comes from the clock)
TICK_MS = 33


class LookupView(QWidget):
    """One-hot product versus pointer offset, animated, then checked and measured.

    Parameters
    ----------
    state : AppState
    clock : callable () -> float, optional
        Seconds for the animation (``time.perf_counter``); tests pass one they move by hand.

    Signals
    -------
    animation_finished()
        The one-hot walk reached the last row.
    training_requested()
        The user asked for the training view (from the backward step).
    """

    animation_finished = Signal()
    training_requested = Signal()
    PAGE_NAMES = ("forward", "backward")  # the pages show_page and --view lookup:PAGE take

    @classmethod
    def built_in_steps(cls, state: AppState):
        """Made over turns (the tab's LazyPage): its two panels a step each, then the rest (one turn was 190-250 ms)."""
        return cls(state, panels=(yield from panels_in_steps()))

    def __init__(self, state: AppState, clock: Callable[[], float] = time.perf_counter, parent=None, panels=()):
        super().__init__(parent)
        self._state = state
        self._playhead = anim.Playhead(clock=clock)
        self._schedule: anim.WalkSchedule | None = None
        self._hot = -1
        self._shown_table: tuple | None = None  # (id, spec) of the table the controls are for
        self._row_layout: RowLayout | None = None
        self._last_frame: anim.Frame | None = None
        self._emitted_finished = False
        self._resume_after_measure = False

        stack = QStackedLayout(self)
        self.empty = WrapLabel()
        style_as(self.empty, "EmptyState")
        self.empty.setAlignment(Qt.AlignCenter)
        stack.addWidget(self.empty)
        self._content = QWidget()
        stack.addWidget(self._content)
        self._stack = stack
        outer = QVBoxLayout(self._content)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)

        outer.addLayout(self._build_top(clock))
        self.pages = QStackedWidget()
        outer.addWidget(self.pages, 1)
        self.forward = ForwardPage(panels=panels)
        self.pages.addWidget(self.forward)
        self.pages.addWidget(self.backward)
        self.backward.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Ignored)
        f = self.forward
        self.splitter, self.onehot, self.pointer = f.splitter, f.onehot, f.pointer
        self.verdict, self.measure_panel = f.verdict, f.measure_panel

        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.advance)

        self.controls.play_clicked.connect(self._on_controls_play_clicked)
        self.controls.step_clicked.connect(self.step)
        self.controls.restart_clicked.connect(self.restart)
        self.controls.speed_changed.connect(self.set_speed)
        self.stored_as.dtype_changed.connect(self._on_stored_as_dtype_changed)
        self.measure_panel.measure_clicked.connect(self.measure)
        self.direction_button.clicked.connect(self._on_direction_button_clicked)
        self.backward.new_gradient_clicked.connect(self._on_backward_new_gradient_clicked)
        self.backward.training_clicked.connect(self.training_requested)
        self._show_direction_button()

        self._bind(state)
        self._show_model()

    def idle_parts(self) -> list:
        """Parts made on demand, for the app to make while the user is idle (the backward plots' parts)."""
        return self.backward.idle_parts()

    def _build_top(self, clock) -> QHBoxLayout:
        """Playback, the stored dtype, the backward step's bar and the direction button."""
        top = QHBoxLayout()
        top.setSpacing(SPACING)
        self.controls = PlaybackControls()
        self.stored_as = StoredAsChoice()
        top.addWidget(self.controls)
        top.addWidget(self.stored_as)
        top.addStretch(1)
        self.backward = BackwardPanel(clock=clock)
        top.addWidget(self.backward.bar, 100)
        self.backward.bar.hide()
        self.direction_button = QPushButton()
        self.direction_button.setToolTip("Forward: how row i is read. Backward: how the gradient of a loss "
                                         "reaches the rows of E, on your text")
        top.addWidget(self.direction_button)
        return top

    def _bind(self, state: AppState) -> None:
        """The state's computations this view follows (check, stored base, measurement, backward step)."""
        self._gate = ShownGate(self, self._synchronize)
        self._gate.shown.connect(self._on_gate_shown)
        self._gate.hidden.connect(self._on_gate_hidden)
        self._check = JobBinding(self._gate, state.jobs.lookup_check, on_reset=self._on_check_reset,
                                 on_result=self._on_check_result, on_error=self._on_check_failed)
        # without a base (yet, or it failed) offsets are shown from a symbolic one
        self._base = JobBinding(self._gate, state.jobs.stored_base, on_reset=self._relayout,
                                on_result=self._relayout, on_error=self._relayout)
        panel = self.measure_panel
        self._measure = JobBinding(self._gate, state.jobs.measurement, on_reset=panel.clear,
                                   on_result=self._on_measurement_result, on_error=panel.show_error,
                                   progress=panel.progress, status=panel.status, cancel=panel.cancel_button)
        state.jobs.measurement.started.connect(self._on_measurement_started)
        state.jobs.measurement.cancelled.connect(self._on_measurement_cancelled)
        state.jobs.measurement.running_changed.connect(self._on_measurement_running_changed)
        self._backward = JobBinding(self._gate, state.jobs.backward, on_reset=self._on_backward_reset,
                                    on_result=self._on_backward_result, on_error=self._on_backward_failed)
        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)

    # -- reading ---------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self._playhead.playing

    @property
    def schedule(self) -> anim.WalkSchedule | None:
        return self._schedule

    @property
    def frame(self) -> anim.Frame | None:
        """The frame on screen (None without a selected token)."""
        return self._last_frame

    @property
    def layout_info(self) -> RowLayout | None:
        """The pointer path's RowLayout for the chosen dtype."""
        return self._row_layout

    @property
    def measurement(self) -> LookupMeasurement | None:
        """The measurement drawn (None when there is none for this table)."""
        return self.measure_panel.measurement

    # -- the state -------------------------------------------------------------------------
    def _synchronize(self) -> None:
        """Everything from the state (first show, or shown after changes while hidden)."""
        self._show_model()
        self._show_token()
        check = self._state.jobs.lookup_check
        if check.value is not None:
            self._on_check_result(check.value)
        elif check.error is not None:
            self._on_check_failed(check.error)
        else:
            self._on_check_reset()
        m = self._state.jobs.measurement
        if m.value is not None:
            self._on_measurement_result(m.value)
        elif not m.running:
            self.measure_panel.clear()
        back = self._state.jobs.backward
        if back.value is not None and self.backward.result is not back.value:
            self._on_backward_result(back.value)
        elif back.value is None:
            self._on_backward_failed(back.error) if back.error is not None else self._on_backward_reset()

    def _on_state_model_changed(self, _table) -> None:
        self._gate.update(self._show_model)

    def _on_state_selected_token_changed(self, token_id: int) -> None:
        self._gate.update(self._show_token)
        self._gate.update(self.backward.select_token, token_id)

    def _show_model(self) -> None:
        """A new table: dtype choices back to "as stored", no walk until a token is selected."""
        key = self._table_key()
        if key == self._shown_table:
            return
        self._shown_table = key
        table = self._state.table
        self._resume_after_measure = False
        self.stored_as.set_table_dtype(None if table is None else table.dtype)
        self.measure_panel.set_chosen_dtype("stored")
        self.measure_panel.measure_button.setEnabled(table is not None and not self._state.jobs.measurement.running)
        self._clear_walk()

    def _table_key(self) -> tuple | None:
        table = self._state.table
        return None if table is None else (id(table), table.spec)

    def _clear_walk(self) -> None:
        self._schedule = None
        self._hot = -1
        self._row_layout = None
        self._last_frame = None
        self.pause()
        self.verdict.setText("")
        table, tokenized, pos = self._state.table, self._state.tokenized, self._state.selected_position
        bad = tokenized.tokens[pos] if 0 <= pos < len(tokenized.tokens) else None
        if table is None:
            self.empty.setText("Open a model to see how a row of E is looked up (Ctrl+O)")
        elif bad is not None and not bad.ok:  # the selected chip names no row: nothing to look up
            self.empty.setText(f"Token {pos + 1:,} has no row to look up: {tokenized.problem_message(bad)}.")
        else:
            self.empty.setText("Click a token to see the two ways of looking up its row of E")
        self._stack.setCurrentWidget(self.empty)

    def _show_token(self) -> None:
        """Follow the selected token: new hot row, new walk, started from the top."""
        table, token_id = self._state.table, self._state.selected_id
        if table is None or not 0 <= token_id < table.vocab_size:
            self._clear_walk()
            return
        v, d = table.vocab_size, table.dim
        self._hot = int(token_id)
        self._schedule = anim.make_schedule(v, d, self._hot)
        window = anim.row_window(v, self._hot)
        rows = table.rows(window.ids)
        finite = np.abs(rows[np.isfinite(rows)])
        lim = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        pieces = [table.shown_piece(int(i)).text for i in window.ids]
        token = table.shown_piece(self._hot).text
        self.onehot.show_token(v, d, self._hot, token, window, rows, pieces, lim)
        self.pointer.show_token(rows[int(np.nonzero(window.ids == self._hot)[0][0])], lim)
        self._stack.setCurrentWidget(self._content)
        self._emitted_finished = False
        self._show_direction_button()
        self._playhead.reset(self._schedule.total_s)
        self._update_layout()
        if self._state.jobs.measurement.running:
            self._resume_after_measure = True  # the walk starts when the measurement ends
            self._render()
        elif not self.showing_backward:
            self.play()
        else:
            self._render()

    def _update_layout(self) -> None:
        """The pointer path's numbers for the chosen dtype (stride, offset, address)."""
        table = self._state.table
        if table is None or self._hot < 0 or self._shown_table != self._table_key():
            return  # nothing shown yet, or still the last table's walk (a new model is on its way)
        dtype = self.stored_as.dtype
        lay = row_layout(table.vocab_size, table.dim, self._hot, dtype, table.dtype, table.row_bytes)
        self._row_layout = lay
        stored = dtype == "stored"
        self.pointer.show_layout(lay, self._state.jobs.stored_base.value if stored else None, stored)

    def _relayout(self, *_args) -> None:
        """The dtype or the base changed: the pointer path's numbers, then the frame."""
        self._update_layout()
        self._render()

    def _on_stored_as_dtype_changed(self, dtype: str) -> None:
        self.measure_panel.set_chosen_dtype(dtype)
        self._relayout()

    # -- the check of one-hot @ E against E[i] ----------------------------------------------
    def _on_check_reset(self) -> None:
        table = self._state.table
        if table is None or self._state.selected_id < 0:
            self.verdict.setText("")
        elif not table.fits_in_memory:
            self.verdict.setText(f"Not checked per token: E is too big to hold ({format_size(table.params * 4)} as "
                                 "float32). <b>Measure</b> compares the paths on it.")
        else:
            self.verdict.setText("Checking one_hot(i) @ E against E[i] on the loaded table…")

    def _on_check_result(self, c: PathComparison | None) -> None:
        table, hot = self._state.table, self._state.selected_id
        if c is None or table is None:
            self._on_check_reset()
        elif c.equal:
            self.verdict.setText(
                f"<b style='color:{ACCENT}'>✔ Identical</b>: one_hot({hot:,}) @ E == E[{hot:,}] "
                f"in all {table.dim:,} values (checked on this table)")
        else:
            self.verdict.setText(f"<b style='color:{ERROR}'>✘ The outputs differ</b>: "
                                 f"{html.escape(c.message, quote=False)}")

    def _on_check_failed(self, exc: BaseException) -> None:
        self.verdict.setText(f"The check of one_hot(i) @ E failed: {html.escape(user_message(exc), quote=False)}")

    # -- measuring ---------------------------------------------------------------------------
    def measure(self) -> None:
        """Time the three ways on the loaded table (the state runs it in a worker)."""
        self._state.measure_lookup()

    def cancel_measure(self) -> None:
        self._state.cancel_measurement()

    def _on_measurement_started(self) -> None:
        self.measure_panel.status.setText("Starting… (the animation waits)")

    def _on_measurement_result(self, m: LookupMeasurement) -> None:
        self.measure_panel.show_measurement(m)

    def _on_measurement_cancelled(self) -> None:
        self.measure_panel.show_cancelled()

    def _on_measurement_running_changed(self, running: bool) -> None:
        """The animation would compete for the GIL and distort microsecond timings: it waits."""
        self.measure_panel.set_running(running)
        self.controls.set_held(running)
        if running:
            self._resume_after_measure = self._resume_after_measure or self.playing
            self.pause()
        elif self._resume_after_measure:
            self._resume_after_measure = False
            self.play()

    # -- animation ---------------------------------------------------------------------------
    def play(self) -> None:
        if self._schedule is None:
            return
        if self._playhead.finished:
            self._emitted_finished = False
        self._playhead.play()
        self.controls.set_playing(True)
        if self._gate.visible:
            self._timer.start()
        self._render()

    def pause(self) -> None:
        self._playhead.pause()
        self._timer.stop()
        self.controls.set_playing(False)
        self._render()

    def seek(self, fraction: float) -> None:
        """Show the animation at ``fraction`` (0..1) of its length; keeps playing or paused."""
        if self._schedule is not None:
            self.seek_time(self._schedule.time_at_fraction(fraction))

    def seek_time(self, seconds: float) -> None:
        """Show the animation ``seconds`` (at speed 1) after its start."""
        if self._schedule is None:
            return
        self._playhead.seek(seconds)
        if not self._playhead.finished:
            self._emitted_finished = False
        self._render()

    def step(self) -> None:
        """Pause and move on by one row (or one block of fast rows)."""
        if self._schedule is None:
            return
        self.pause()
        self.seek_time(self._schedule.next_stop(self._playhead.time()))

    def restart(self) -> None:
        self.seek_time(0.0)
        self.play()

    def set_speed(self, speed: float) -> None:
        self._playhead.set_speed(speed)

    def advance(self) -> None:
        """Draw the frame of the clock's current time (the timer calls this)."""
        if self._schedule is None or not self._playhead.playing:
            self._timer.stop()
            return
        self._render()
        if self._playhead.finished:
            self.pause()

    def _on_controls_play_clicked(self) -> None:
        self.pause() if self.playing else self.play()

    def _on_gate_shown(self) -> None:
        self._playhead.resume()  # carry on from where it was hidden, no jump
        if self._playhead.playing:
            self._timer.start()
        self.backward.resume()

    def _on_gate_hidden(self) -> None:
        self._playhead.suspend()
        self._timer.stop()
        self.backward.suspend()

    # -- the backward step -------------------------------------------------------------------
    @property
    def showing_backward(self) -> bool:
        return self.pages.currentWidget() is self.backward

    def show_backward(self, backward: bool = True) -> None:
        """Show the backward step (True) or the forward paths (False)."""
        if backward == self.showing_backward:
            return
        if backward:
            self.pause()
            self.pages.setCurrentWidget(self.backward)
            self.backward.play()
        else:
            self.backward.pause()
            self.pages.setCurrentIndex(0)
        # the stack asks for the room of the page on screen only (an Ignored page adds no minimum)
        for k in range(self.pages.count()):
            page = self.pages.widget(k)
            policy = QSizePolicy.Preferred if page is self.pages.currentWidget() else QSizePolicy.Ignored
            page.setSizePolicy(policy, policy)
        self.pages.updateGeometry()
        self.controls.setVisible(not backward)  # the backward step has its own Play and Step
        self.stored_as.setVisible(not backward)
        self.backward.bar.setVisible(backward)
        self._show_direction_button()

    def show_page(self, name: str) -> None:
        """Bring page ``name`` (one of ``PAGE_NAMES``) to the front."""
        self.show_backward(name == "backward")

    def current_page(self) -> str:
        """The name :meth:`show_page` takes for the page in front."""
        return "backward" if self.showing_backward else "forward"

    def _on_direction_button_clicked(self) -> None:
        self.show_backward(not self.showing_backward)

    def _show_direction_button(self, cue: bool = False) -> None:
        """"Backward ▸" (stressed once the forward walk is done), or "◂ Forward"."""
        b = self.direction_button
        b.setText("◂ Forward" if self.showing_backward else ("Next: backward ▸" if cue else "Backward ▸"))
        b.setMinimumWidth(b.sizeHint().width())  # the row squeezes the others, never this text ("Backwa")
        stressed = bool(cue) and not self.showing_backward
        b.setProperty("cue", stressed)
        b.setStyleSheet(CUE_STYLE if stressed else "")

    def _on_backward_new_gradient_clicked(self) -> None:
        self._state.request_backward(self._state.backward_seed + 1)

    def _on_backward_reset(self) -> None:
        waiting = self._state.table is not None and self._state.tokenized.rows_read > 0
        self.backward.clear("Sending the gradient back…" if waiting else EMPTY_BACKWARD)

    def _on_backward_result(self, back) -> None:
        text_positions = len(self._state.tokenized.tokens) - self._state.tokenized.n_bad  # no walk of a book
        if self.backward.show_for(self._state.table, back, self._state.selected_id, text_positions) \
                and self.showing_backward:
            self.backward.play()

    def _on_backward_failed(self, exc: BaseException) -> None:
        self.backward.clear(f"The backward step failed: {user_message(exc)}")

    def _render(self) -> None:
        s, lay = self._schedule, self._row_layout
        if s is None or lay is None:
            return
        f = s.frame(self._playhead.time())
        self._last_frame = f
        self.onehot.show_frame(f, lay)
        self.pointer.show_frame(f)
        if f.finished and not self._emitted_finished:
            self._emitted_finished = True
            self._show_direction_button(cue=True)
            self.animation_finished.emit()
