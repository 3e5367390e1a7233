"""Automatic cluster labels on the projection: the layout's k-means clusters
(:func:`explorer.core.projection.clusters.clusters_job`, in a worker: the state's
``layout_clusters``, handed over by :meth:`ClusterLabels.attach`), each
labelled at its centre with its most central tokens, behind a toggle.

The clusters belong to the layout: they are asked for again when the cloud
changes, not when the view moves; the plot places their labels with the
others (after the tokens that matter, which win any overlap).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QCheckBox
from superqt.utils import qdebounced

from explorer.core.projection.clusters import LayoutClusters, n_clusters_for
from explorer.ui.projection.label_layout import LabelSpec

__all__ = ["ClusterLabels"]

#: milliseconds the cloud must stay unchanged before it is clustered (a t-SNE moving settles first)
CHANGE_MS = 250


class ClusterLabels(QObject):
    """The toggle, the clusters of the plot's cloud, and their labels.

    Signals
    -------
    changed()
        The labels to place changed (new clusters, or none).
    """

    changed = Signal()

    def __init__(self, plot, parent=None):
        super().__init__(parent)
        self._plot = plot
        self._generation = 0
        self._namer: Callable[[int], str] | None = None
        self.toggle = QCheckBox("Cluster labels")
        self.toggle.setToolTip("Group the points as drawn into up to 12 clusters (k-means on the layout, seeded)\n"
                               "and label each at its centre with its two most central tokens.")
        self.toggle.toggled.connect(self._on_toggled)
        self.computation = None  # the state's, once attached
        self._ask = None
        self._schedule = qdebounced(self._request, timeout=CHANGE_MS, parent=self)
        plot.cloud_changed.connect(self._on_cloud_changed)

    def attach(self, computation, request, forget, namer: Callable[[int], str]) -> None:
        """Compute with ``request(xy, k, key)``; the clusters land from ``computation``
        (``state.request_layout_clusters``, ``state.jobs.layout_clusters``); ``namer(token_id)``
        gives a token's short text for the labels."""
        self.computation, self._ask, self._forget, self._namer = computation, request, forget, namer
        computation.finished.connect(self._on_finished)
        computation.reset.connect(self.changed)

    @property
    def value(self) -> LayoutClusters | None:
        return self.computation.value if self.computation is not None else None

    def specs(self, color: str) -> list[LabelSpec]:
        """Labels of the clusters (biggest first) in ``color``; none when off or not computed."""
        res = self.value
        if (not isinstance(res, LayoutClusters) or not self.toggle.isChecked() or self._namer is None
                or res.key != self._generation):
            return []
        out = []
        for centre, members in zip(res.centres, res.central):
            ids = [self._plot.token_at_cloud_index(int(i)) for i in members]
            text = " · ".join(self._namer(t) for t in ids if t >= 0)
            if text:
                out.append(LabelSpec(ids[0], float(centre[0]), float(centre[1]), text, color, True, True))
        return out

    def request_now(self) -> None:
        self._request()

    def _on_toggled(self, on: bool) -> None:
        if on:
            self._request()
        elif self.computation is not None:
            self._forget()

    def _on_cloud_changed(self) -> None:
        self._generation += 1
        if self.computation is not None:
            self._forget()
        self._schedule()

    def _request(self) -> None:
        cloud = self._plot.cloud
        k = n_clusters_for(len(cloud))
        if self._ask is None or not self.toggle.isChecked() or not k or not self._plot.isVisible():
            return
        self._ask(cloud.positions(), k, self._generation)

    def _on_finished(self, _result) -> None:
        self.changed.emit()
