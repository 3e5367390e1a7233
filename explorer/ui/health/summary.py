"""What the check found, in words: the verdict and the lesson, then the
counts per tokenizer category (with the scatter's colours) and per row
condition, and which reference the score used."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.core.health import CATEGORY_LABELS, HealthReport
from explorer.core.health.text import (
    SIDE_NOTES,
    apart_lines,
    candidates_line,
    category_line,
    lesson,
    side_line,
    verdict,
)
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.style import HEALTH_CATEGORY_COLORS, SPACING, style_as

__all__ = ["SummaryPanel"]

_ROW_WORDS = {
    "zero": "all zero",
    "non_finite": "non-finite",
    "exact_duplicate": "exact duplicates",
    "near_duplicate": "near",
}


class SummaryPanel(QWidget):
    """Two labels: the sentences, and the counts."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(SPACING, 0, SPACING, 0)
        lay.setSpacing(4)
        self.caption = WrappedLabel("")
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.counts = WrappedLabel("")
        self.counts.setTextFormat(Qt.RichText)
        self.apart = WrappedLabel("")
        style_as(self.apart, "ChipId")
        self.apart.setToolTip("Tokens no text selects (unreachable, partial UTF-8) or only the tokenizer writes "
                              "(special) are listed here, never ranked among the tokens a text can reach")
        lay.addWidget(self.caption)
        lay.addWidget(self.counts)
        lay.addWidget(self.apart)

    def show_message(self, text: str, hold: bool = False) -> None:
        """``text`` alone; with ``hold``, in the room the last report had (a new one is on its
        way: the plots under the panel do not move twice)."""
        if hold:
            self.caption.hold(html.escape(text))
            self.counts.hold()
            self.apart.hold()
            return
        self.caption.setText(html.escape(text))
        self.counts.setText("")
        self.apart.setText("")

    def set_report(self, report: HealthReport, table) -> None:
        self.caption.setText(f"<b>{html.escape(verdict(report))}</b> {html.escape(lesson(report, table))}")
        cats = " ".join(
            f"<span style='color:{HEALTH_CATEGORY_COLORS[name]}'>●</span>&nbsp;{CATEGORY_LABELS[name]}&nbsp;{n:,}"
            for name, n in report.category_counts().items() if n or name == "ok") \
            if report.round_trip_checked else html.escape(category_line(report))
        rows = report.flag_counts()
        conditions = " · ".join(f"{rows[k]:,} {w}" for k, w in _ROW_WORDS.items())
        self.counts.setText(
            f"Tokenizer round trip: {cats}<br>"
            f"Rows: {report.flagged_count:,} flagged (ringed) · {conditions} · score against "
            f"{html.escape(report.reference.description)} · {report.seconds:.1f} s<br>"
            f"Scored on {html.escape(side_line(report))}. {html.escape(candidates_line(report))}."
            + "".join(f"<br>Note: {html.escape(n)}" for n in report.notes if n not in SIDE_NOTES.values()))
        self.apart.setText("<br>".join(html.escape(line) for line in apart_lines(report, table, shown=8)))
