"""What this model does with order, in plain sentences from its own files."""

from __future__ import annotations

from explorer.core.input_layer import PositionsReport
from explorer.ui.common.wrapped_label import WrappedLabel
from explorer.ui.style import SPACING

__all__ = ["SummaryLabel", "HEADLINES"]

HEADLINES = {
    "learned": "This model adds a learned position row to each token row.",
    "sinusoidal": "This model adds fixed sinusoidal positions to each token row.",
    "rotary": "This model adds no position to its input vectors: rotary positions turn queries and keys inside "
              "attention.",
    "none": "Nothing here tells positions apart: the input vector of a token is its row wherever it stands.",
}


class SummaryLabel(WrappedLabel):
    """The headline for the model's scheme and the notes its input layer carries."""

    def __init__(self, parent=None):
        super().__init__(parent=parent)
        self.setContentsMargins(SPACING, SPACING // 2, SPACING, 0)

    def set_report(self, report: PositionsReport | None, message: str = "") -> None:
        if report is None:
            self.hold(message)  # "Reading…" in the last summary's room: the pages under it stay put
            return
        layer = report.layer
        notes = " ".join(layer.notes)
        self.setText(f"<b>{HEADLINES[layer.scheme]}</b> {notes}")
