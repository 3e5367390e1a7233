"""The lesson under the training charts: two sentences from the live figures.

The text comes from :func:`explorer.core.training.lessons.training_lesson`;
this label only shows it. Its height is fixed (a word-wrapped label that
grew by a line would re-lay out the charts above it, milliseconds of the
GUI thread), and it changes its text only when the text changed.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSizePolicy

from explorer.core.training.lessons import Lesson, training_lesson
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING

__all__ = ["LessonCaption", "LESSON_LINES", "IDLE_LESSON"]

#: lines of text the caption has room for
LESSON_LINES = 4
IDLE_LESSON = ("Start a run: this caption then says, from the live figures, which rows got a gradient this step, "
               "which changed, and why.")


class LessonCaption(WrapLabel):
    """What the charts show at the latest step, in words."""

    def __init__(self, parent=None):
        super().__init__(IDLE_LESSON, parent)
        self.setObjectName("LessonCaption")
        self.setContentsMargins(SPACING, SPACING // 2, SPACING, SPACING // 2)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setFixedHeight(self._min_height())
        self.lesson: Lesson | None = None

    def _min_height(self) -> int:
        return self.fontMetrics().lineSpacing() * LESSON_LINES + SPACING

    def _fit(self, shrink: bool) -> None:
        """Room for the whole text at this width: grow when it needs more lines (rare: the
        figures keep their widths), shrink back only on a resize or a new run."""
        need = max(self._min_height(), self.heightForWidth(max(1, self.width())))
        if need > self.height() or (shrink and need < self.height()):
            self.setFixedHeight(need)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._fit(shrink=True)

    def show_lesson(self, cfg, history) -> None:
        """The lesson of ``history``'s latest step under ``cfg`` (the idle text without a step)."""
        lesson = training_lesson(cfg, history) if cfg is not None and history is not None else None
        self.lesson = lesson
        text = lesson.text if lesson is not None else IDLE_LESSON
        if text != self.text():
            self.setText(text)
            self._fit(shrink=lesson is None)
