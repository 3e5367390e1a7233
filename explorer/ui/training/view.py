"""Watch the table learn: a toy next-token model trained in the background,
with live charts of what happens to its embedding table (gradient sparsity,
rows that move without gradient, drift of rare rows, clusters forming).

The run lives in ``state.training`` (a TrainingRunner around a Qt-free
TrainingSession); this view emits the user's intents to it and draws the
session's history from a timer.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Generator
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QVBoxLayout,
    QWidget,
)

from explorer.core.errors import ExplorerError, user_message
from explorer.core.training.config import ConfigError, TrainConfig
from explorer.core.training.corpus import MAX_CORPUS_CHARS, synthetic_corpus, text_corpus
from explorer.core.training.session import ACTIVE, ENDED, Phase, TrainingSession
from explorer.state.app_state import AppState
from explorer.ui.common.binding import ShownGate
from explorer.ui.common.export import export_graphics
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING, style_as
from explorer.ui.training.charts import CHART_COUNT, TrainingCharts
from explorer.ui.training.controls import (
    CORPUS_MODEL,
    CORPUS_SYNTHETIC,
    CorpusControls,
    RunButtons,
    RunReadout,
    SettingsControls,
)
from explorer.ui.training.layout import lay_out_training
from explorer.ui.training.messages import EMPTY_TEXT, run_caption, run_message, sentence

__all__ = ["TrainingView", "FRAME_HZ", "FRAME_DUTY"]

#: charts redraw at this rate from the latest data (not on every step)
FRAME_HZ = 15
#: ... but while training runs flat out, frames (update + paint) take at most
#: this share of the time in CPU time of the GUI thread: while the GUI thread
#: works it holds the GIL, and the worker waits for it
FRAME_DUTY = 0.02
#: and never fewer than one frame a second
MAX_FRAME_MS = 1000
#: the figures beside the charts change at most this often (a label's text
#: layout costs about a millisecond)
READOUT_HZ = 2


class TrainingView(QWidget):
    """Train the toy model and chart what happens to its embedding table.

    Signals
    -------
    model_saved(str)
        A trained model was saved as a folder (its path); the app opens it.
    steps_reached(int)
        The step asked for by :meth:`run_steps_then` was reached (or the run ended).
    """

    model_saved = Signal(str)
    steps_reached = Signal(int)

    @classmethod
    def built_in_steps(cls, state: AppState, per_step: int = 2) -> Generator[QWidget | None, None, TrainingView]:
        """The view made over several turns of the event loop (a generator for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`): its six PlotItems ``per_step`` at a time,
        then its charts ``per_step`` at a time, then the rest. Made in one go, the first show of
        the tab stalled the window 100-140 ms in a real window, and over 300 ms while the warm-up
        still imported."""
        plots: list[pg.PlotItem] = []
        while len(plots) < CHART_COUNT:
            yield
            plots += [pg.PlotItem(enableMenu=False) for _ in range(min(per_step, CHART_COUNT - len(plots)))]
        charts = yield from TrainingCharts.built_in_steps(plots, per_step)
        yield
        return cls(state, charts=charts)

    def __init__(self, state: AppState, parent=None, charts: TrainingCharts | None = None):
        super().__init__(parent)
        self._state = state
        self._training = state.training
        self._target: tuple[int, object] | None = None
        self._frame_ms: deque[float] = deque(maxlen=500)  # chart updates (wall clock), for the bench
        self._frame_cpu_ms: deque[float] = deque(maxlen=500)  # ... and their CPU time, for the governor
        self._costs_ms: deque[float] = deque(maxlen=10)  # recent frame costs: CPU time of update + paint
        self._readout_at = -1.0

        self.caption, self.charts, self.lesson = lay_out_training(self, self._build_controls(), EMPTY_TEXT,
                                                                  "What the charts show", charts)

        self.frame_timer = QTimer(self)
        self.frame_timer.setInterval(int(1000 / FRAME_HZ))
        self.frame_timer.timeout.connect(self._on_frame_timer_timeout)
        self._gate = ShownGate(self, self.synchronize)

        t = self._training
        t.phase_changed.connect(self._on_training_phase_changed)
        t.run_started.connect(self._on_training_run_started)
        t.stepped.connect(self._on_training_stepped)
        t.progressed.connect(self._on_training_progressed)
        state.model_changed.connect(self._on_state_model_changed)
        self._validate()
        self._follow_phase(self.session.phase)

    def _build_controls(self) -> QWidget:
        panel = QWidget()
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setSpacing(SPACING - 2)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self.corpus = CorpusControls(form, self)
        self.settings = SettingsControls(form, self)
        self.config_error = WrapLabel()
        style_as(self.config_error, "ErrorLine")
        self.config_error.setToolTip("Why this combination cannot train")
        self.config_error.hide()
        self.buttons = RunButtons()
        self.readout = RunReadout(self)
        v = QVBoxLayout(panel)
        v.setContentsMargins(SPACING * 1.5, SPACING * 1.5, SPACING, SPACING * 1.5)
        v.setSpacing(SPACING)
        v.addLayout(form)
        v.addWidget(self.config_error)
        v.addWidget(self.buttons)
        v.addWidget(self.readout.status)
        v.addWidget(self.readout.message)
        v.addStretch(1)

        self.corpus.changed.connect(self._on_controls_changed)
        self.corpus.open_requested.connect(self._on_corpus_open_requested)
        self.settings.changed.connect(self._on_controls_changed)
        self.settings.speed_changed.connect(self._training.set_speed)
        b = self.buttons
        b.start_button.clicked.connect(self.start)
        b.pause_button.clicked.connect(self._on_pause_clicked)
        b.stop_button.clicked.connect(self.stop)
        b.reset_button.clicked.connect(self.reset)
        b.save_button.clicked.connect(self._on_save_clicked)
        b.add_export("Charts as PNG…", self._on_export_png_triggered)
        b.add_export("Charts as SVG…", self._on_export_svg_triggered)
        b.add_export("Time series as CSV…", self._on_export_csv_triggered)
        b.add_export("Rows as CSV…", self._on_export_rows_triggered)

        return panel

    # -- read ---------------------------------------------------------------------------
    @property
    def session(self) -> TrainingSession:
        return self._training.session

    @property
    def running(self) -> bool:
        return self.session.running

    @property
    def paused(self) -> bool:
        return self.session.paused

    @property
    def history(self):
        return self.session.history

    def frame_times_ms(self, cpu: bool = False) -> list[float]:
        """Durations of recent chart updates (setData and friends), in ms of
        wall-clock time, or of the GUI thread's CPU time."""
        return list(self._frame_cpu_ms if cpu else self._frame_ms)

    def paint_times_ms(self) -> list[float]:
        """CPU time of recent paints that run Python (the scatter plots), in ms;
        the rest of the charts is painted by Qt without the GIL."""
        return list(self.charts.paint_log.recent)

    # -- settings ------------------------------------------------------------------------
    def config(self) -> TrainConfig:
        """The TrainConfig the controls describe."""
        return self.settings.config()

    def set_config(self, **kw) -> None:
        """Set controls from TrainConfig field names and ``steps_per_second`` (tests, command line)."""
        self.settings.set_config(**kw)

    def set_text_corpus(self, text: str, name: str = "text", use_model_tokenizer: bool = False) -> None:
        """Train on ``text`` (from a file the user opened)."""
        self.corpus.set_text(text, name, use_model_tokenizer)

    def config_problem(self) -> str:
        """Why Start is disabled ('' when it is not)."""
        try:
            self.settings.config().validate()
        except ConfigError as exc:
            return sentence(user_message(exc))
        mode = self.corpus.mode
        if mode != CORPUS_SYNTHETIC and not self.corpus.text:
            return "Open a text file to train on it, or choose the synthetic language."
        if mode == CORPUS_MODEL:
            table = self._state.table
            if table is None or table.tokenizer is None:
                return "The open model has no tokenizer: split the text word by word instead."
        return ""

    def _validate(self) -> None:
        problem = self.config_problem()
        self.config_error.setText(problem)
        self.config_error.setVisible(bool(problem))
        self._update_buttons()

    def _on_controls_changed(self) -> None:
        """Any setting changed: check the combination (and, with no run, name the next run's curves)."""
        self._validate()
        if self.session.phase is Phase.IDLE:
            self.charts.clear_run(self.settings.config().tied)

    def _on_state_model_changed(self, _table) -> None:
        """The model's tokenizer may have come or gone."""
        self._validate()

    def _update_buttons(self) -> None:
        s = self.session
        problem = self.config_problem()
        b = self.buttons
        b.start_button.setEnabled(not s.running and not problem)
        b.start_button.setToolTip(problem or b.START_TIP)
        b.pause_button.setEnabled(s.running)
        b.pause_button.setText("Resume" if s.paused else "Pause")
        b.stop_button.setEnabled(s.running)
        b.reset_button.setEnabled(s.phase is not Phase.IDLE)
        b.save_button.setEnabled(s.can_save)
        b.export_button.setEnabled(s.history is not None and s.history.n > 0)
        self.corpus.set_enabled(not s.active)
        self.settings.set_enabled(not s.active)

    # -- intents -------------------------------------------------------------------------
    def start(self) -> None:
        """Start a new run with the controls' settings (the charts restart)."""
        if self.session.running or self.config_problem():
            return
        mode = self.corpus.mode
        if mode == CORPUS_SYNTHETIC:
            factory = synthetic_corpus
        else:
            tokenizer = self._state.table.tokenizer if mode == CORPUS_MODEL else None
            factory = functools.partial(text_corpus, self.corpus.text, tokenizer)
        self.charts.clear_run()
        self._training.start(self.settings.config(), factory, self.settings.speed, uses_model=mode == CORPUS_MODEL)

    def pause(self) -> None:
        self._training.pause()

    def resume(self) -> None:
        self._training.resume()

    def _on_pause_clicked(self) -> None:
        """Pause or resume."""
        self.resume() if self.paused else self.pause()

    def stop(self) -> None:
        """End the run after its current step; the charts and the model stay."""
        self._training.stop()

    def reset(self) -> None:
        """Stop and clear everything."""
        self._training.reset()

    def set_run_aside(self):
        """Keep the user's run (ended at its last step, with its charts) out of the way
        and show an empty view; returns what :meth:`bring_run_back` takes."""
        return self._training.set_aside()

    def bring_run_back(self, kept) -> None:
        """The run :meth:`set_run_aside` kept is the view's run again."""
        self._training.bring_back(kept)

    def run_steps_then(self, n: int, callback=None) -> None:
        """Train (a new run if none is going) until step ``n``, redraw, then call
        ``callback()`` and emit steps_reached(step). Also when the run ends early."""
        self._target = (int(n), callback)
        if not self.session.running:
            self.settings.set_config(steps=int(n))  # the run ends at step n
            self.start()
            if not self.session.running:  # the settings cannot train
                self._fire_target()
        elif self.session.last_step >= n:
            self._fire_target()

    def _fire_target(self) -> None:
        if self._target is None:
            return
        _n, callback = self._target
        self._target = None
        self._draw(final=True)
        self.steps_reached.emit(self.session.last_step)
        if callback is not None:
            callback()

    # -- the session -----------------------------------------------------------------------
    def _follow_phase(self, phase: Phase) -> None:
        """The frame timer runs while a job steps."""
        if phase in ACTIVE and phase is not Phase.PAUSED:
            if not self.frame_timer.isActive():
                self.frame_timer.setInterval(int(1000 / FRAME_HZ))
                self.frame_timer.start()
        else:
            self.frame_timer.stop()

    def _on_training_phase_changed(self, phase: Phase) -> None:
        """Start, pause, hold, end or reset: buttons, message, a last full frame."""
        self._follow_phase(phase)
        if phase is Phase.IDLE:
            self.charts.clear_run(self.settings.config().tied)
            self.caption.setText(EMPTY_TEXT)
            self.lesson.show_lesson(None, None)
        self._gate.update(self._draw, True)
        self._update_buttons()
        self._show_message()
        if phase in ENDED or phase is Phase.IDLE:
            self._fire_target()

    def _on_training_run_started(self, _run) -> None:
        """The corpus and model are built: classes, planned length."""
        self.charts.start_run(self.session)
        self.caption.setText(run_caption(self.session))
        self._show_message()

    def _on_training_stepped(self, step: int) -> None:
        """New steps (the timer draws them); a target inside a longer run fires now."""
        if self._target is not None and step >= self._target[0] and self.session.cfg is not None \
                and self.session.cfg.steps > self._target[0]:
            self._fire_target()

    def _on_training_progressed(self, _fraction: float, message: str) -> None:
        """Preparing the corpus or the model."""
        if self.session.phase is Phase.PREPARING:
            self._set_message(message)

    def _show_message(self) -> None:
        message = run_message(self.session)
        if message is not None:
            self._set_message(*message)

    def _set_message(self, text: str, error: bool = False) -> None:
        self.readout.show_message(text, error)

    # -- drawing -------------------------------------------------------------------------
    def synchronize(self) -> None:
        """Everything from the session (the view is shown after it was hidden,
        or built while a run goes on)."""
        if self.session.run is not None and self.charts.run is not self.session.run:
            self.charts.start_run(self.session)
            self.caption.setText(run_caption(self.session))
        self._update_buttons()
        self._show_message()
        self._draw(final=True)

    def _on_frame_timer_timeout(self) -> None:
        """Redraw from the latest data, if any arrived, when on screen."""
        self._gate.update(self._draw)

    def _draw(self, final: bool = False) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        s = self.session
        drew = self.charts.draw(s, final)
        if not drew:
            if s.history is None:
                self.readout.show_readout(None)
            return
        if final or t0 - self._readout_at >= 1.0 / READOUT_HZ:
            self._readout_at = t0
            self.readout.show_readout(s.readout())
            self.lesson.show_lesson(s.cfg, s.history)
        self._frame_ms.append(1000 * (time.perf_counter() - t0))
        update_cpu = 1000 * (time.thread_time() - c0)
        self._frame_cpu_ms.append(update_cpu)
        self._govern(update_cpu)

    def _govern(self, update_cpu_ms: float) -> None:
        """Slow the frame rate down while the run goes flat out, so that frames
        take at most FRAME_DUTY of the time in the GUI thread's CPU time with
        the GIL held: their update, and the paints that run Python (Qt paints
        the rest without it). While the GUI thread runs Python the worker
        waits; a frame waiting for the GIL costs the worker nothing. The mean
        of the last frames, spikes included (a slow chart, a new axis range):
        that is what the training pays."""
        self._costs_ms.append(update_cpu_ms + self.charts.take_paint_cpu_ms())
        interval = 1000.0 / FRAME_HZ
        if self.session.speed <= 0:
            interval = max(interval, float(np.mean(self._costs_ms)) / FRAME_DUTY)
        self.frame_timer.setInterval(int(min(interval, MAX_FRAME_MS)))

    # -- files ---------------------------------------------------------------------------
    def _on_corpus_open_requested(self) -> None:
        """Ask for a text file to train on."""
        path, _ = QFileDialog.getOpenFileName(self, "Open a text file to train on", "",
                                              "Text (*.txt *.md *.csv);;All files (*)")
        if not path:
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(MAX_CORPUS_CHARS)
        except OSError as exc:
            self._set_message(f"Cannot read {path}: {exc.strerror or exc}", error=True)
            return
        self.set_text_corpus(text, Path(path).name, use_model_tokenizer=self.corpus.mode == CORPUS_MODEL)

    def save_model(self, folder: str) -> str:
        """Save the run's model as a folder the explorer opens; emits model_saved.

        Raises NothingToSave while the run steps (pause or stop it first).
        """
        self._training.save(folder)
        self.model_saved.emit(str(folder))
        return str(folder)

    def _on_save_clicked(self) -> None:
        """Ask for a folder name and save the model there."""
        cfg = self.session.cfg
        default = f"toy-lm-{cfg.optimizer}-{'tied' if cfg.tied else 'untied'}-{self.session.last_step}"
        path, _ = QFileDialog.getSaveFileName(self, "Save the trained model as a folder", default, "Folder (*)")
        if not path:
            return
        try:
            self.save_model(path)
            self._set_message(f"Saved to {path}.")
        except (OSError, ExplorerError) as exc:
            self._set_message(f"Could not save: {user_message(exc)}", error=True)

    def export_image(self, path: str) -> None:
        """Save all six charts as one PNG or SVG (by the file's suffix)."""
        self._draw(final=True)
        self.charts.set_cached(False)  # axes as vectors in an SVG, at full resolution in a PNG
        try:
            export_graphics(self.charts.ci, path)
        finally:
            self.charts.set_cached(True)
        if not Path(path).is_file():
            raise OSError(f"cannot write {path}")

    def export_csv(self, path: str, rows: bool = False) -> None:
        """Save the per-step time series (or the per-row data) as CSV."""
        h = self.session.history
        if h is None:
            raise OSError("nothing to export yet")
        names = self.session.run.corpus.words if self.session.run is not None else None
        Path(path).write_text(h.rows_csv(names) if rows else h.to_csv(), encoding="utf-8")

    def _ask_export(self, title: str, default: str, suffix: str, write) -> None:
        path, _ = QFileDialog.getSaveFileName(self, title, default, f"{suffix.upper()} (*.{suffix})")
        if not path:
            return
        if Path(path).suffix.lower() != "." + suffix:
            path += "." + suffix  # the format asked for, whatever the name typed ends with
        try:
            write(path)
            self._set_message(f"Exported {Path(path).name}.")
        except OSError as exc:
            self._set_message(f"Could not export: {user_message(exc)}", error=True)

    def _on_export_png_triggered(self) -> None:
        """Charts as PNG."""
        self._ask_export("Export the charts as PNG", "training-charts.png", "png", self.export_image)

    def _on_export_svg_triggered(self) -> None:
        """Charts as SVG."""
        self._ask_export("Export the charts as SVG", "training-charts.svg", "svg", self.export_image)

    def _on_export_csv_triggered(self) -> None:
        """Time series as CSV."""
        self._ask_export("Export the time series as CSV", "training-steps.csv", "csv", self.export_csv)

    def _on_export_rows_triggered(self) -> None:
        """Per-row data as CSV."""
        self._ask_export("Export the per-row data as CSV", "training-rows.csv", "csv",
                         functools.partial(self.export_csv, rows=True))
