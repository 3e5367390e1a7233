"""The progress bar paints with the next frame: QProgressBar's synchronous
repaint flushed every pending paint of the window on each progress step."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QProgressBar

from explorer.ui.common.progress import ProgressBar


class PaintCounter(QObject):
    def __init__(self, widget):
        super().__init__(widget)
        self.paints = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802
        if event.type() == QEvent.Paint:
            self.paints += 1
        return False


def _shown(qtbot, bar):
    qtbot.addWidget(bar)
    bar.setRange(0, 1000)
    bar.resize(300, 20)
    bar.show()
    qtbot.waitExposed(bar)
    qtbot.wait(20)
    return PaintCounter(bar)


def test_qt_own_bar_paints_at_once_and_ours_with_the_next_frame(qtbot):
    theirs = QProgressBar()
    counted = _shown(qtbot, theirs)
    theirs.setValue(500)
    assert counted.paints >= 1  # what ProgressBar avoids: a paint inside setValue

    ours = ProgressBar()
    counted = _shown(qtbot, ours)
    ours.setValue(500)
    assert ours.value() == 500 and counted.paints == 0 and ours.updatesEnabled()
    qtbot.waitUntil(lambda: counted.paints >= 1, timeout=5000)
    painted = counted.paints
    ours.setValue(500)  # the same value: nothing to paint
    qtbot.wait(30)
    assert counted.paints == painted


def test_a_hidden_or_frozen_bar_keeps_its_state(qtbot):
    bar = ProgressBar()
    qtbot.addWidget(bar)
    bar.setRange(0, 100)
    bar.setValue(40)
    assert bar.value() == 40 and bar.updatesEnabled()
    bar.setUpdatesEnabled(False)  # someone froze it: it stays frozen
    bar.setValue(70)
    assert bar.value() == 70 and not bar.updatesEnabled()
