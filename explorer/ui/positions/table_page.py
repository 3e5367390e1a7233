"""The position table page: the table as a heatmap, the cosine of every pair
of positions and the PCA path through them, for the model's own table or the
sinusoidal table of its d."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from explorer.core.input_layer import PositionsReport
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.positions.image_panel import ImagePanel
from explorer.ui.positions.path_panel import PathPanel
from explorer.ui.style import SPACING

__all__ = ["PositionTablePage", "MODEL_TABLE", "SINUSOIDAL"]

MODEL_TABLE = "model"
SINUSOIDAL = "sinusoidal"


class PositionTablePage(QWidget):
    """Three panels over one source: the model's position table or the sinusoidal one."""

    @staticmethod
    def part_makers() -> list:
        """What :meth:`__init__` takes as ``parts``, each made by a call (a turn's worth: its plots)."""
        return [ImagePanel, lambda: ImagePanel("cosine"), PathPanel]

    def __init__(self, parent=None, parts: tuple[ImagePanel, ImagePanel, PathPanel] | None = None):
        super().__init__(parent)
        self._report: PositionsReport | None = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, SPACING // 2, 0, 0)
        lay.setSpacing(SPACING // 2)
        row = QHBoxLayout()
        row.setContentsMargins(SPACING, 0, SPACING, 0)
        row.addWidget(QLabel("Show:"))
        self.source = QComboBox()
        self.source.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        self.source.setToolTip("The model's own position table, or the fixed sinusoidal table of the original "
                               "Transformer computed for this model's d")
        self.source.currentIndexChanged.connect(self._on_source_changed)
        row.addWidget(self.source)
        row.addStretch(1)
        lay.addLayout(row)
        self.caption = WrapLabel("")
        self.caption.setContentsMargins(SPACING, 0, SPACING, 0)
        lay.addWidget(self.caption)
        self.heatmap, self.cosine, self.path = parts or tuple(make() for make in self.part_makers())
        self.heatmap.set_labels("dimension", "position")
        self.cosine.set_labels("position", "position")
        self.split = QSplitter(Qt.Horizontal)
        for w in (self.heatmap, self.cosine, self.path):
            self.split.addWidget(w)
        self.split.setChildrenCollapsible(False)
        lay.addWidget(self.split, 1)

    @property
    def shown_source(self) -> str | None:
        return self.source.currentData()

    def set_report(self, report: PositionsReport | None) -> None:
        self._report = report
        self.source.blockSignals(True)
        self.source.clear()
        if report is not None:
            if report.learned is not None:
                self.source.addItem(f"The model's position table ({report.total_positions:,} × {report.layer.dim:,})",
                                    MODEL_TABLE)
            self.source.addItem(f"Sinusoidal table for d = {report.layer.dim:,} (original Transformer)", SINUSOIDAL)
        self.source.blockSignals(False)
        self._draw()

    def _on_source_changed(self, _index: int) -> None:
        self._draw()

    def _draw(self) -> None:
        r = self._report
        if r is None:
            for p in (self.heatmap, self.cosine):
                p.clear()
            self.path.set_path(None)
            self.caption.setText("")
            return
        learned = self.shown_source == MODEL_TABLE
        # as the heatmaps draw them, made in the job (the sinusoidal ones are finite float32 by construction)
        rows = r.learned_image if learned else r.sinusoidal
        cos = r.learned_cosine_image if learned else r.sinusoidal_cosine
        path = r.learned_path if learned else r.sinusoidal_path
        n = rows.shape[0]
        cut = f" (the first {n:,} of {r.total_positions:,})" if learned and n < r.total_positions else ""
        what = "Learned" if learned else "Sinusoidal"
        self.heatmap.set_title(f"{what} position rows 0–{n - 1:,}{cut}", f"{what} position rows 0–{n - 1:,}")
        self.heatmap.set_matrix(rows, r.learned_levels if learned else r.sinusoidal_levels, finite=True)
        self.cosine.set_title(f"Cosine of positions ({n:,} × {n:,})")
        self.cosine.set_matrix(cos, (-1.0, 1.0), finite=True)
        self.path.set_path(path, "PCA path of positions 0, 1, 2, …", "PCA path of positions")
        self.caption.setText(self._caption(r, learned))

    @staticmethod
    def _caption(r: PositionsReport, learned: bool) -> str:
        d = r.layer.dim
        if learned:
            near = _mean_diagonal(r.learned_cosine, 1)
            far = _mean_diagonal(r.learned_cosine, min(64, r.learned_cosine.shape[0] - 1))
            norms = r.learned_norms
            pattern = ("bands along the diagonal: nearby positions were trained to look alike" if near >= 0.5 else
                       "no band along the diagonal: the rows look unrelated, as in an untrained table")
            return (f"Learned: one trained row per position. Neighbouring positions have cosine {near:.2f} on "
                    f"average, positions 64 apart {far:.2f}: {pattern}. Position rows have norm "
                    f"{norms.mean():.2f} on average (position 0: {norms[0]:.2f}); token rows {r.token_norm:.2f}.")
        near = _mean_diagonal(r.sinusoidal_cosine, 1)
        return (f"Sinusoidal: fixed sin/cos waves, no training. Each diagonal of the cosine matrix is constant "
                f"(a Toeplitz pattern: only the distance between positions matters; neighbours {near:.2f}). "
                f"Every row has norm √(d/2) = {math.sqrt(d / 2):.2f}. This model's token rows have norm "
                f"{r.token_norm:.2f} on average: the original Transformer multiplies token rows by "
                f"√d = {math.sqrt(d):.1f} (which would make them {r.scaled_token_norm:.1f}) so that the positions "
                "added to them do not drown them.")


def _mean_diagonal(m, k: int) -> float:
    import numpy as np

    if m is None or k < 1 or k >= m.shape[0]:
        return float("nan")
    return float(np.diagonal(m, offset=k).mean())
