"""The projection's readouts beside the plot: what the PCA was fitted on, the
explained variance, the colour legend and the point under the pointer."""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.core.projection.job import ProjectionResult
from explorer.core.projection.manifold import PLACE_NEIGHBORS, ManifoldResult
from explorer.ui.style import ACCENT, EXTRA, NEIGHBORS, TEXT_TOKENS

__all__ = ["ProjectionInfo", "HOVER_HINT"]

HOVER_HINT = "Hover a point to see its piece and id; click it to select it"


def _wrapping_label(tip: str = "", name: str = "") -> QLabel:
    lab = QLabel()
    lab.setWordWrap(True)
    lab.setToolTip(tip)
    if name:
        lab.setObjectName(name)
    return lab


class ProjectionInfo(QWidget):
    """Text readouts; each setter replaces one, :meth:`clear` empties them all."""

    def __init__(self, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.fit_label = _wrapping_label("The rows the PCA was fitted on; tokens outside them are projected with the "
                                         "same components: (row − mean) · componentsᵀ")
        self.variance_label = _wrapping_label("Explained variance ratio: the variance along a component divided by "
                                              "the total variance of the fitted rows (sum over all d directions)")
        self.legend = _wrapping_label("Colours: the selected token, the text's tokens, their neighbours, added "
                                      "tokens, and what the points are coloured by (Colour by)")
        self.hover_label = _wrapping_label(name="ChipId")
        for lab in (self.fit_label, self.variance_label, self.legend, self.hover_label):
            lay.addWidget(lab)
        self.clear()

    def clear(self) -> None:
        """No model, or a new one: nothing of the old one stays."""
        self.fit_label.setText("")
        self.variance_label.setText("")
        self.hover_label.setText(HOVER_HINT)
        self.show_legend("", [])

    def show_pending(self, text: str) -> str:
        """A new fit or layout is on its way: the last one's time, variance and
        trustworthiness go (returns ``text``, said in their place)."""
        self.fit_label.setText(html.escape(text))
        self.variance_label.setText("")
        return text

    def show_fit(self, result: ProjectionResult | ManifoldResult) -> None:
        if not result.linear:
            self._show_layout(result)
            return
        ev = result.explained
        self.fit_label.setText(f"<b>Fitted on</b> the {html.escape(result.description)}. {result.seconds:.2f} s. "
                               "Other tokens are projected with the same components.")
        parts = ", ".join(f"{html.escape(result.axis_name(i))} {v:.1%}" for i, v in enumerate(ev))
        self.variance_label.setText(f"<b>Explained variance</b> (share of the total): {parts}; "
                                    f"the first {len(ev)} together {float(np.sum(ev)):.1%}.")

    def _show_layout(self, result: ManifoldResult) -> None:
        when = f"{result.seconds:.1f} s" if result.done else f"iteration {result.iteration:,} of {result.n_iter:,}"
        self.fit_label.setText(
            f"<b>{result.name}</b> of the {html.escape(result.description)}, cosine distance, seed {result.seed}. "
            f"{when}. Other tokens are placed among their {PLACE_NEIGHBORS} nearest laid-out rows.")
        if result.trustworthiness is None:
            self.variance_label.setText("<b>Trustworthiness</b> is measured once the layout is done.")
            return
        self.variance_label.setText(
            f"<b>Trustworthiness</b> {result.trustworthiness:.3f} (cosine, 5 neighbours, {result.trust_rows:,} "
            "rows): 1 means each token's nearest points on the map are among its nearest rows in the table. "
            "Distances between clusters and their sizes mean little here.")

    def show_stopped(self, result: ManifoldResult) -> None:
        """The user stopped a layout: it stays as it was, unscored."""
        self.variance_label.setText(f"Stopped at iteration {result.iteration:,} of {result.n_iter:,}: the layout has "
                                    "not converged and was not scored. Choose the method again to start over.")

    def show_legend(self, title: str, entries, note: str = "") -> None:
        """The highlights' colours, then ``title`` and its (colour, label[, count]) entries (what colours
        the points), or ``note`` saying why there are none yet."""
        dot = '<span style="white-space:nowrap"><span style="color:{c}; font-size:13pt">●</span>&nbsp;{t}</span>'
        items = [dot.format(c=ACCENT, t="selected"), dot.format(c=TEXT_TOKENS, t="text"),
                 dot.format(c=NEIGHBORS, t="neighbours"), dot.format(c=EXTRA, t="added")]
        text = " &nbsp; ".join(items)
        if entries:
            text += f"<br><b>{html.escape(title)}</b><br>" + " &nbsp; ".join(
                dot.format(c=e[0], t=html.escape(e[1]) + (f" <small>({e[2]:,})</small>" if len(e) > 2 else ""))
                for e in entries)
        elif note:
            text += f"<br><b>{html.escape(title)}</b>: {html.escape(note)}"
        self.legend.setText(text)

    def show_hover(self, text: str) -> None:
        self.hover_label.setText(text)
