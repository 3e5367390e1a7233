"""The projection's readouts beside the plot: what the PCA was fitted on, the
explained variance, the colour legend and the point under the pointer."""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from explorer.core.projection.job import ProjectionResult
from explorer.core.projection.manifold import PLACE_NEIGHBORS, ManifoldResult
from explorer.ui.common.wrapped_label import WrapLabel
from explorer.ui.style import ACCENT, EXTRA, NEIGHBORS, TEXT_TOKENS, style_as

__all__ = ["ProjectionInfo", "HOVER_HINT", "legend_entry"]

HOVER_HINT = "Hover a point to see its piece and id; click it to select it"


def _wrapping_label(tip: str = "", name: str = "") -> QLabel:
    lab = WrapLabel()
    lab.setToolTip(tip)
    if name:
        style_as(lab, name)
    return lab


def legend_entry(k: int, entry, off: bool, text_colour: str) -> str:
    """One group of the legend as a link (``group:k``): its colour's dot, its label and count;
    faded and struck through when its points are hidden."""
    label = html.escape(entry[1]) + (f" <small>({entry[2]:,})</small>" if len(entry) > 2 else "")
    colour = entry[0]
    if off:
        label, colour = f"<s>{label}</s>", "#9a9a9a"
    return (f'<a href="group:{k}" style="color:{text_colour if not off else colour}; text-decoration:none">'
            f'<span style="white-space:nowrap"><span style="color:{colour}; font-size:13pt">●</span>'
            f"&nbsp;{label}</span></a>")


class ProjectionInfo(QWidget):
    """Text readouts; each setter replaces one, :meth:`clear` empties them all.

    Signals
    -------
    group_clicked(int, bool)
        A legend entry was clicked (its group) and whether Shift was held (show it alone).
    recompute_requested()
        "Compute again" was clicked under a layout read from the layout cache.
    """

    group_clicked = Signal(int, bool)
    recompute_requested = Signal()

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
                                      "tokens, and what the points are coloured by (Colour by). Click a group to "
                                      "hide or show its points; Shift+click to show it alone (again: all).")
        self.legend.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        self.legend.linkActivated.connect(self._on_legend_link_activated)
        self.fit_label.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        self.fit_label.linkActivated.connect(self._on_fit_link_activated)
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
        if result.done:
            when = f"Computed in {result.seconds:.1f} s"
        else:  # "Epoch 40 of 200", or the start drawn before the first iteration
            when = result.progress.capitalize() if result.n_iter else "Starting"
        if result.cached:
            when = ('Computed before, read from the layout cache (same rows, settings and seed). '
                    '<a href="recompute">Compute again</a>')
        elif result.cache_note:
            when += ". " + html.escape(result.cache_note)
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
        self.variance_label.setText(f"Stopped at {result.progress}: the layout has "
                                    "not converged and was not scored. Choose the method again to start over.")

    def show_legend(self, title: str, entries, note: str = "", shown=None) -> None:
        """The highlights' colours, then ``title`` and its (colour, label[, count]) entries (what colours
        the points; each a link that hides or shows its group, struck through when the filter ``shown``
        (a PointFilter) hides it or shows another group alone), or ``note`` saying why there are none yet."""
        hidden, alone = (shown.hidden, shown.group) if shown is not None else ((), -1)
        dot = '<span style="white-space:nowrap"><span style="color:{c}; font-size:13pt">●</span>&nbsp;{t}</span>'
        items = [dot.format(c=ACCENT, t="selected"), dot.format(c=TEXT_TOKENS, t="text"),
                 dot.format(c=NEIGHBORS, t="neighbours"), dot.format(c=EXTRA, t="added")]
        text = " &nbsp; ".join(items)
        if entries:
            off = set(hidden) | ({k for k in range(len(entries)) if k != alone} if alone >= 0 else set())
            text += f"<br><b>{html.escape(title)}</b><br>" + " &nbsp; ".join(
                legend_entry(k, e, k in off, self.palette().windowText().color().name()) for k, e in enumerate(entries))
        elif note:
            text += f"<br><b>{html.escape(title)}</b>: {html.escape(note)}"
        self.legend.setText(text)

    def _on_fit_link_activated(self, _href: str) -> None:
        self.recompute_requested.emit()

    def _on_legend_link_activated(self, href: str) -> None:
        """A group of the legend clicked: hide or show it (Shift: it alone)."""
        if href.startswith("group:"):
            shift = bool(QGuiApplication.keyboardModifiers() & Qt.ShiftModifier)
            self.group_clicked.emit(int(href.split(":")[1]), shift)

    def show_hover(self, text: str) -> None:
        self.hover_label.setText(text)
