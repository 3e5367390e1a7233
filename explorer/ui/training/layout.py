"""The Training tab's layout, shared by the toy run's view and the recorded run's:
a fixed-width side panel that scrolls, and beside it one caption line, the six
charts and the lesson under them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QScrollArea, QVBoxLayout, QWidget

from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import SPACING, style_as
from explorer.ui.training.charts import ChartsArea, TrainingCharts
from explorer.ui.training.lesson import LessonCaption

__all__ = ["lay_out_training", "PANEL_WIDTH"]

PANEL_WIDTH = 272


def _scrolled(panel: QWidget) -> QScrollArea:
    scroll = QScrollArea()
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    scroll.setFixedWidth(PANEL_WIDTH)
    return scroll


def lay_out_training(view: QWidget, panel: QWidget, caption: str, caption_tip: str, charts=None):
    """Lay ``view`` out: ``panel`` (scrolling) on the left, the caption, charts and
    lesson on the right (``charts``: the TrainingCharts, made beforehand, else made here).
    Returns (caption label, TrainingCharts, LessonCaption)."""
    lay = QHBoxLayout(view)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(0)
    lay.addWidget(_scrolled(panel))
    right = QVBoxLayout()
    right.setContentsMargins(0, 0, 0, 0)
    right.setSpacing(0)
    # one line above the charts, always there (showing or hiding it would
    # resize the charts and rebuild every axis)
    label = WrapLabel(caption)
    style_as(label, "ChipId")  # the quiet caption style
    label.setContentsMargins(SPACING, SPACING // 2, SPACING, 0)
    label.setToolTip(caption_tip)
    charts = charts if charts is not None else TrainingCharts()
    right.addWidget(label)
    right.addWidget(ChartsArea(charts), 1)
    # the lesson, from the live figures, under the charts
    lesson = LessonCaption()
    right.addWidget(lesson)
    lay.addLayout(right, 1)
    return label, charts, lesson
