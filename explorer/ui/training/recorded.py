"""The Training tab watching a run recorded by ``explorer.record``
(``python -m explorer --watch LOGDIR``): the toy run's live charts and lesson,
fed from the log directory as the training loop writes it.

The view mirrors a :class:`~explorer.state.recording.RecordingFollower`
(which reads the directory) and draws from a timer; it computes nothing
itself beyond the figures of its readout.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from explorer.core.training.session import LOSS_WINDOW, Readout
from explorer.state.recording import RecordingFollower
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING
from explorer.ui.training.controls import RunReadout
from explorer.ui.training.layout import lay_out_training

__all__ = ["RecordedRunView", "NEVER_MOVED_SHOWN"]

#: the charts redraw at most this often
FRAME_HZ = 10
#: the per-row charts' x axis: a recorded run has no corpus, so rows are counted by the steps that looked them up
COUNTED_AXIS = "recorded steps whose batch held the token (log)"
#: ids of never-moved rows listed by name
NEVER_MOVED_SHOWN = 12


class RecordedRunView(QWidget):
    """Charts, lesson and figures of a recorded run, following it as it grows.

    Signals
    -------
    snapshot_open_requested(str)
        The user wants the latest snapshot opened as the table (its path).
    """

    snapshot_open_requested = Signal(str)

    def __init__(self, follower: RecordingFollower, piece=None, parent=None):
        super().__init__(parent)
        self._follower = follower
        self._piece = piece  # id -> the open table's piece (or None)
        self._drawn = (-1, -1)  # (history object id, its version) last drawn
        self.caption, self.charts, self.lesson = lay_out_training(self, self._build_panel(), "",
                                                                  "The recorded run the charts show")

        self.frame_timer = QTimer(self)
        self.frame_timer.setInterval(int(1000 / FRAME_HZ))
        self.frame_timer.timeout.connect(self._on_frame_timer_timeout)
        follower.restarted.connect(self._on_follower_restarted)
        follower.snapshot_added.connect(self._on_follower_snapshot_added)
        follower.problem.connect(self._on_follower_problem)
        follower.partial_changed.connect(self._show_partial)
        self._on_follower_problem(follower.message)
        self._on_follower_restarted()
        if follower.latest_snapshot is not None:
            self._on_follower_snapshot_added(follower.latest_snapshot[0], str(follower.latest_snapshot[1]))
        self.frame_timer.start()

    def _build_panel(self) -> QWidget:
        panel = QWidget()
        v = QVBoxLayout(panel)
        v.setContentsMargins(SPACING * 1.5, SPACING * 1.5, SPACING, SPACING * 1.5)
        v.setSpacing(SPACING)
        title = WrapLabel(f"<b>Watching</b> {self._follower.logdir}")
        title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.readout = RunReadout(self)
        self.never_moved = WrapLabel()
        self.never_moved.setToolTip("Rows of E that no recorded step changed: no gradient reached them and no "
                                    "optimiser state (momentum, weight decay) moved them")
        self.open_button = QPushButton("Open the latest snapshot")
        self.open_button.setEnabled(False)
        self.open_button.setToolTip("Open the newest snapshot of the table in the other tabs (matrix, "
                                    "neighbours, projection)")
        self.open_button.clicked.connect(self._on_open_clicked)
        v.addWidget(title)
        v.addWidget(self.readout.status)
        v.addWidget(self.never_moved)
        v.addWidget(self.open_button)
        v.addWidget(self.readout.message)
        v.addStretch(1)
        return panel

    # -- the follower ---------------------------------------------------------------------
    def _on_follower_restarted(self) -> None:
        """New axes for the history (first steps, a new snapshot, a longer run)."""
        f = self._follower
        h = f.history
        if f.header is None:
            return
        self.caption.setText(self.run_caption())
        if h is None:
            return
        self.charts.clear_run()
        self.charts.start_axes(f.planned_steps, h.counts, f.header.tied, frame=f.frame, counted=COUNTED_AXIS)
        self._drawn = (-1, -1)
        self.draw()

    def _on_follower_snapshot_added(self, step: int, _path: str) -> None:
        """A newer snapshot: the button names it."""
        self.open_button.setText(f"Open the snapshot of step {step:,}")
        self.open_button.setEnabled(True)

    def _on_follower_problem(self, text: str) -> None:
        """The directory cannot be read yet (or again can)."""
        self.readout.show_message(text[:1].upper() + text[1:] if text else "", bool(text))

    def _on_open_clicked(self) -> None:
        """Open the latest snapshot as the table."""
        if self._follower.latest_snapshot is not None:
            self.snapshot_open_requested.emit(str(self._follower.latest_snapshot[1]))

    def names_changed(self, _table=None) -> None:
        """The open table changed: the never-moved rows are named by its pieces (when it is the run's)."""
        if self._follower.history is not None and self._follower.history.n:
            self._show_never_moved()

    # -- drawing --------------------------------------------------------------------------
    def run_caption(self) -> str:
        """One line about the recorded run: its name, table, optimiser, steps."""
        h = self._follower.header
        parts = [h.name, f"E {h.vocab_size:,} × {h.dim:,} {h.dtype}, {'tied' if h.tied else 'untied'}"
                 + (", sparse gradients" if h.sparse else "")]
        if h.optimizer:
            parts.append(h.optimizer + (f", lr {h.lr:g}" if h.lr is not None else "")
                         + (f", weight decay {h.weight_decay:g}" if h.weight_decay else ""))
        parts.append(f"recorded every {h.every} step{'s' if h.every > 1 else ''}"
                     + (f", of {h.planned_steps:,} planned" if h.planned_steps else ""))
        return " · ".join(parts)

    def _on_frame_timer_timeout(self) -> None:
        """Redraw when new steps arrived and the view is on screen."""
        if self.isVisible():
            self.draw()

    def draw(self) -> bool:
        """Everything from the follower's history, if it moved. Returns whether it drew."""
        f = self._follower
        h = f.history
        if h is None or h.n == 0 or (id(h), h.version) == self._drawn:
            return False
        self._drawn = (id(h), h.version)
        self.charts.draw(f, final=True)
        self.readout.show_readout(self.readout_figures())
        self.lesson.show_lesson(f.cfg, h)
        self._show_never_moved()
        self._show_partial()
        return True

    def _show_partial(self, _bytes: int = 0) -> None:
        """Say so when the step file ends in a step not whole yet (being written, or cut by a crash)."""
        f = self._follower
        partial = f.partial_bytes
        if not f.message and f.history is not None:
            self.readout.show_message(
                f"The last {partial:,} bytes of the step file are a step still being written (or cut by a "
                f"crash): the charts show the steps up to {f.last_step:,}." if partial else "", False)

    def readout_figures(self) -> Readout | None:
        """The latest step's figures, as the toy run's readout shows them."""
        f = self._follower
        h = f.history
        if h is None or h.n == 0:
            return None
        loss = h.series("loss")[-LOSS_WINDOW:]
        loss = loss[np.isfinite(loss)]
        return Readout(step=h.last_step, steps=f.planned_steps, steps_per_second=f.steps_per_second(),
                       loss=float(loss.mean()) if loss.size else math.nan, ln_v=math.log(max(h.vocab_size, 2)),
                       vocab_size=h.vocab_size, dim=f.header.dim, grad_rows=int(h.series("input_grad_rows")[-1]),
                       tied_rows=int(h.series("grad_rows")[-1]) if f.header.tied else None,
                       changed_rows=int(h.series("changed_rows")[-1]))

    def _show_never_moved(self) -> None:
        f = self._follower
        ids = np.asarray(f.never_moved())
        v = f.header.vocab_size
        if ids.size == 0:
            text = f"Every row moved at least once in {f.history.n:,} recorded steps."
        else:
            names = ", ".join(self._name(int(i)) for i in ids[:NEVER_MOVED_SHOWN])
            more = f", … ({ids.size - NEVER_MOVED_SHOWN:,} more)" if ids.size > NEVER_MOVED_SHOWN else ""
            text = (f"<b>{ids.size:,} of {v:,} rows ({100 * ids.size / v:.1f}\u00a0%) have never moved</b> in "
                    f"{f.history.n:,} recorded steps: {names}{more}.")
        if text != self.never_moved.text():
            self.never_moved.setText(text)

    def _name(self, i: int) -> str:
        if self._piece is not None:
            try:
                return html.escape(f"{i} {self._piece(i)!r}", quote=False)
            except (IndexError, KeyError, ValueError):
                pass
        return str(i)
