"""The lookup view's controls: playback of the animation, and the element
type the pointer path lays the table out in."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget
from superqt.utils import signals_blocked

from explorer.core.lookup.ways import DTYPE_CHOICES
from explorer.ui.style import SPACING

SPEEDS = ((0.25, "¼×"), (0.5, "½×"), (1.0, "1×"), (2.0, "2×"), (5.0, "5×"), (20.0, "20×"))


def _row(widget: QWidget) -> QHBoxLayout:
    lay = QHBoxLayout(widget)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(SPACING)
    return lay


class PlaybackControls(QWidget):
    """Play/Pause, Step, Restart and the speed.

    Signals
    -------
    play_clicked(), step_clicked(), restart_clicked()
    speed_changed(float)
        Animation seconds per second.
    """

    play_clicked = Signal()
    step_clicked = Signal()
    restart_clicked = Signal()
    speed_changed = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = _row(self)
        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Play or pause the animation of both paths")
        self.play_button.clicked.connect(self.play_clicked)
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Pause and move on by one row (a block of rows where they race by)")
        self.step_button.clicked.connect(self.step_clicked)
        self.restart_button = QPushButton("Restart")
        self.restart_button.setToolTip("Start both paths again from the first row")
        self.restart_button.clicked.connect(self.restart_clicked)
        self.speed_combo = QComboBox()
        for value, text in SPEEDS:
            self.speed_combo.addItem(text, value)
        self.speed_combo.setCurrentIndex(2)
        self.speed_combo.setToolTip("Animation speed (1× walks 50,000 rows in about 15 s)")
        self.speed_combo.currentIndexChanged.connect(self._on_speed_combo_changed)
        for w in (self.play_button, self.step_button, self.restart_button):
            lay.addWidget(w)
        lay.addSpacing(SPACING)
        lay.addWidget(QLabel("Speed"))
        lay.addWidget(self.speed_combo)

    def set_playing(self, playing: bool) -> None:
        self.play_button.setText("Pause" if playing else "Play")

    def set_held(self, held: bool) -> None:
        """While a measurement runs the animation waits: Play and Restart are off."""
        for button in (self.play_button, self.restart_button):
            button.setEnabled(not held)
        tip = "The animation waits while the measurement runs" if held else "Play or pause the animation of both paths"
        self.play_button.setToolTip(tip)

    def _on_speed_combo_changed(self, _index: int) -> None:
        self.speed_changed.emit(float(self.speed_combo.currentData() or 1.0))


class StoredAsChoice(QWidget):
    """The element type of the table for the pointer path: as stored, or
    another dtype (stride, offsets and bytes read follow).

    Signals
    -------
    dtype_changed(str)
        ``"stored"`` or a dtype name.
    """

    dtype_changed = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = _row(self)  # no "Stored as" label: the choices say it ("as stored (Q8_0)", "as float16")
        self.combo = QComboBox()
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)  # "as stored (Q8_0)" whole, never clipped
        self.combo.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        self.combo.setToolTip(
            "Stored as: the element type of the table, which changes bytes per value, the row stride d × itemsize, "
            "the offset of the row and the bytes read")
        self.combo.currentIndexChanged.connect(self._on_combo_changed)
        lay.addWidget(self.combo)

    @property
    def dtype(self) -> str:
        return self.combo.currentData() or "stored"

    def set_table_dtype(self, stored: str | None) -> None:
        """Offer the choices for a table stored as ``stored`` (None: no table); back to "as stored"."""
        with signals_blocked(self.combo):
            self.combo.clear()
            if stored is not None:
                for name in DTYPE_CHOICES:
                    if name == "stored":
                        self.combo.addItem(f"as stored ({stored})", "stored")
                    elif name != stored:
                        self.combo.addItem(f"as {name}", name)
                self.combo.setCurrentIndex(0)
        self.setEnabled(stored is not None)

    def _on_combo_changed(self, _index: int) -> None:
        self.dtype_changed.emit(self.dtype)
