"""A progress bar that paints with the next frame instead of at once."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar

__all__ = ["ProgressBar"]


class ProgressBar(QProgressBar):
    """QProgressBar whose ``setValue`` schedules its paint.

    QProgressBar repaints synchronously whenever the bar or its percentage
    moves, and a synchronous repaint flushes every pending paint of the
    window with it (the plots a job has just changed): a job reporting
    progress often paid for whole frames on the GUI thread, once per step.
    Here the value changes at once and the paint joins the next frame.
    """

    def setValue(self, value: int) -> None:  # noqa: N802 (Qt's name)
        if value == self.value():
            return
        enabled = self.updatesEnabled()
        self.setUpdatesEnabled(False)  # QProgressBar's repaint() is then a no-op
        try:
            super().setValue(value)
        finally:
            self.setUpdatesEnabled(enabled)  # back on: schedules one update()
