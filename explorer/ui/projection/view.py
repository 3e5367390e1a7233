"""The Projection view: where tokens sit on two principal components (or in a t-SNE
/ UMAP layout that moves while it converges, its newest frame drawn once a turn),
the text's tokens and the selection's neighbours highlighted, analogies as arrows.

It mirrors the state and computes nothing: the PCA is ``state.jobs.projection``
(asked for with ``state.request_projection``), the highlighted tokens are
``state.jobs.interest``, the selection's neighbour lines are ``state.jobs.neighbors``
(the inspector's list, not a second search), classes are ``state.classes``
and analogies are ``state.jobs.analogy``. Hidden, it does no work at all; shown
again it draws everything from the state once.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSplitter, QStackedLayout, QVBoxLayout, QWidget

from explorer.core.errors import user_message
from explorer.core.geometry.analogy import AnalogyResult
from explorer.core.projection.job import ProjectionResult
from explorer.core.projection.manifold import METHOD_NAMES, ManifoldResult
from explorer.state.app_state import AppState
from explorer.ui.common.binding import JobBinding, NewestOnly, ShownGate
from explorer.ui.projection.axes_entry import AxesEntry
from explorer.ui.projection.colouring import cloud_colours
from explorer.ui.projection.controls import AxesControls, ExportButton, FitControls, MethodControls
from explorer.ui.projection.exports import ProjectionExports
from explorer.ui.projection.fit_request import FitRequest
from explorer.ui.projection.handles import ProjectionHandles
from explorer.ui.projection.hit_search import HitSearch
from explorer.ui.projection.hover import hover_text
from explorer.ui.projection.label_layout import LabelSpec, faint_labels
from explorer.ui.projection.lasso import LassoGroup
from explorer.ui.projection.linked_views import LinkedViews
from explorer.ui.projection.map_layers import bind_map_layers
from explorer.ui.projection.pages import BusyPage, MessagePage
from explorer.ui.projection.plot import Mark, ProjectionPlot
from explorer.ui.projection.point_selection import PointSelection
from explorer.ui.projection.run_strip import RunStrip
from explorer.ui.projection.side_panel import SidePanel
from explorer.ui.projection.three_d import PlotPages
from explorer.ui.projection.titles import axis_texts, set_axis_texts
from explorer.ui.projection.toolbar import TwoRowBar
from explorer.ui.projection.user_metadata import UserMetadataLoader
from explorer.ui.style import ACCENT, EXTRA, NEIGHBORS, SPACING, TEXT_TOKENS

__all__ = ["ProjectionView", "N_SELECTED_NEIGHBORS"]

#: neighbours of the selected token joined to it by lines
N_SELECTED_NEIGHBORS = 8
#: faint points get labels too when at most this many are in view
LABEL_FAINT_IN_VIEW = 250


class ProjectionView(ProjectionHandles, ProjectionExports, QWidget):
    """PCA scatter of the embedding table.

    Signals
    -------
    token_selected(int)
        The user clicked a point, a search hit or an analogy answer (its id).
    token_added(int)
        The user asked to add a token (search box).
    """

    token_selected = Signal(int)
    token_added = Signal(int)

    @classmethod
    def built_in_steps(cls, state: AppState) -> Generator[QWidget | None, None, ProjectionView]:
        """The view made over turns of the event loop (for the tab's
        :class:`~explorer.ui.common.lazy_page.LazyPage`, which holds what each step yields): the
        plot, the side panel, then the rest. Made in one go it was a turn of 35 ms in a quiet real
        window, and 200-440 ms when the tab was opened in the seconds the warm-up imports torch."""
        yield None  # the module's import, in a turn of its own
        plot = ProjectionPlot()
        yield plot
        side = SidePanel(state)
        yield side
        return cls(state, parts=(plot, side))

    def __init__(self, state: AppState, parent=None, parts: tuple[ProjectionPlot, SidePanel] | None = None):
        super().__init__(parent)
        self._state = state
        self._result: ProjectionResult | None = None
        self._prepared_for = None  # the table the controls were set up for
        self._line_ids: list[int] = []
        self._legend: tuple[str, list] = ("", [])

        plot, side = parts or (ProjectionPlot(), SidePanel(state))  # made in steps beforehand, or now
        outer = QVBoxLayout(self)
        outer.setContentsMargins(SPACING, SPACING, SPACING, SPACING)
        outer.setSpacing(SPACING)
        outer.addWidget(self._build_toolbar(state))
        outer.addWidget(self.axes_entry)
        split = QSplitter(Qt.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self._build_plot_pages(state, plot))
        split.addWidget(self._build_side(state, side))
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        split.setSizes([700, 270])
        outer.addWidget(split, 1)
        self.plot.want_labels(self._label_specs)

        self._bind(state)
        self._show_message("Open a model to see where its tokens sit (Ctrl+O)")

    # -- the parts ----------------------------------------------------------------------------
    def _build_toolbar(self, state: AppState) -> QWidget:
        """Method, fit set, PC axes, search and Export (two rows when one does not fit)."""
        self.toolbar = bar = TwoRowBar()
        self.method, self.fit, self.axes_entry = MethodControls(), FitControls(), AxesEntry()
        self._fits = FitRequest(state, self.method, self.fit, self.axes_entry, self)
        self.axes_controls = AxesControls()
        self.axes_controls.axes_changed.connect(self._on_axes_changed)
        self.search = HitSearch(self._state, lambda: self.points.first_hit())
        self.search.box.token_found.connect(self._on_search_token_found)
        self.search.box.not_found.connect(lambda text: self.info.show_hover(text))
        self.export_button = ExportButton()
        self.export_button.export_chosen.connect(self._on_export_chosen)
        for widget in (self.method, self.fit, self.axes_controls):
            bar.add(widget)
        bar.add(self.search, 1, wraps=True)  # on a second row in a narrow window
        bar.add(self.export_button, wraps=True)

        return bar

    def _build_plot_pages(self, state: AppState, plot: ProjectionPlot) -> QWidget:
        """The run strip over the plot, and the pages: a message, progress, the 2D plot or 3D view."""
        left = QWidget()
        left_lay = QVBoxLayout(left)
        left_lay.setContentsMargins(0, 0, 0, 0)
        self.run_strip = RunStrip()  # over the plot while a layout converges on it
        left_lay.addWidget(self.run_strip)
        pages = QWidget()
        self.linked = LinkedViews(state, self.token_selected)  # charts and a table under the plot
        left_lay.addWidget(self.linked.under(pages), 1)
        self._stack = QStackedLayout(pages)
        self._empty_page, self._busy_page = MessagePage(), BusyPage()
        self.empty, self.retry_button = self._empty_page.label, self._empty_page.retry_button
        self.retry_button.clicked.connect(self._on_retry_clicked)
        self.busy_label, self.progress = self._busy_page.label, self._busy_page.progress
        self.cancel_button = self._busy_page.cancel_button
        self.plot = plot
        self.plot.point_hovered.connect(self._on_plot_point_hovered)
        self.plot.point_clicked.connect(self.token_selected)
        self.plot_pages = PlotPages(state, self.plot)  # the 2D plot or the 3D view
        self.plot_pages.dims_changed.connect(self._fits.set_dims)
        self.plot_pages.point_clicked.connect(self.token_selected)
        self.plot_pages.shown_3d.connect(lambda on: self.axes_controls.setEnabled(not on))  # 2D-only
        self.toolbar.insert_after(self.axes_controls, self.plot_pages.toggle)
        for page in (self._empty_page, self._busy_page, self.plot_pages):
            self._stack.addWidget(page)
        return left

    def _build_side(self, state: AppState, side: SidePanel) -> QWidget:
        """The fit's facts, colours, the map's layers, the Show filter and the analogy panel."""
        self.info, self.analogy_panel, self.colour = side.info, side.analogy, side.colour
        self.plot_pages.hovered.connect(self.info.show_hover)
        self.colour.colour_changed.connect(self._on_colour_changed)
        bind_map_layers(self.plot, side, state)
        self.points = PointSelection(state, side.show, self.search, self.plot, self, legend=side.info)
        self.points.changed.connect(self._on_points_changed)
        self.linked.follow(self.points, self.info)
        self.lasso = LassoGroup(state, side.lasso, self.plot, self.points, self)
        self.user_metadata = UserMetadataLoader(state, side, self.points, self.toolbar, self)
        self.analogy_panel.solve_requested.connect(state.request_analogy)
        self.analogy_panel.answer_clicked.connect(self.token_selected)
        return side

    def _bind(self, state: AppState) -> None:
        """The state's computations and signals this view follows."""
        jobs, self._gate = state.jobs, ShownGate(self, self._synchronize)
        self._bindings = [
            JobBinding(self._gate, jobs.projection, on_reset=self._on_projection_reset,
                       on_result=self._on_projection_result, on_error=self._on_projection_failed,
                       progress=self.progress, status=self.busy_label, cancel=self.cancel_button),
            JobBinding(self._gate, jobs.projection, progress=self.run_strip.progress, status=self.run_strip.label,
                       cancel=self.run_strip.cancel_button),
            JobBinding(self._gate, jobs.interest, on_reset=self._draw_marks, on_result=self._draw_marks),
            JobBinding(self._gate, jobs.token_meta, on_result=self._on_colour_changed),
            JobBinding(self._gate, jobs.neighbors, on_reset=self._draw_selection, on_result=self._draw_selection),
            JobBinding(self._gate, jobs.analogy, on_reset=self._on_analogy_reset, on_result=self._on_analogy_result,
                       on_error=self.analogy_panel.show_error, progress=self.analogy_panel.progress,
                       status=self.analogy_panel.status, cancel=self.analogy_panel.cancel_button),
        ]
        jobs.analogy.cancelled.connect(self._on_analogy_cancelled)
        jobs.projection.cancelled.connect(self._on_projection_cancelled)
        self._frames = NewestOnly(lambda f: self._gate.update(self._on_projection_result, f),
                                  lambda: jobs.projection.running, self)  # t-SNE's and UMAP's moving layouts
        jobs.projection.produced.connect(self._on_projection_produced)
        state.model_changed.connect(self._on_state_model_changed)
        state.selected_token_changed.connect(self._on_state_selected_token_changed)

    # -- state ----------------------------------------------------------------------------
    def _synchronize(self) -> None:
        """Everything from the state (first show, or shown after being hidden)."""
        table = self._state.table
        if table is None:
            self._clear_readouts()
            self._show_message("Open a model to see where its tokens sit (Ctrl+O)")
            return
        if self._prepared_for is not table:
            self._prepare_for(table)
        comp = self._state.jobs.projection
        if self._state.projection_params is None:
            self._fits.request()
        else:
            self._fits.show_state()
            if comp.value is not None:
                self._on_projection_result(comp.value)
            elif comp.error is not None:
                self._on_projection_failed(comp.error)
            else:
                self._on_projection_reset()
        analogy = self._state.jobs.analogy.value
        if analogy is not None:
            self._on_analogy_result(analogy)
        else:
            self._on_analogy_reset()

    def idle_parts(self) -> list:  # made while the user is idle (IdleBuilder)
        return self.linked.charts.idle_parts()

    def _on_state_model_changed(self, _table) -> None:
        # every readout of the old model goes at once, shown or not
        self._clear_readouts()
        self._prepared_for = None
        self._gate.update(self._synchronize)

    def _clear_readouts(self) -> None:
        self._result = None
        self._line_ids = []
        self.info.clear()
        self.analogy_panel.set_table(None)
        self.plot.clear_all()
        self.points.clear()
        self.plot_pages.clear()

    def _prepare_for(self, table) -> None:
        """Controls for a new table: its default fit set, example analogy."""
        self._prepared_for = table
        self.analogy_panel.set_table(table)
        self.colour.show_default("classes" if self._state.classes is not None else "none")

    def _on_state_selected_token_changed(self, _token_id: int) -> None:
        self._gate.update(self._draw_selection)

    # -- the projection ---------------------------------------------------------------------
    def _on_retry_clicked(self) -> None:
        self._fits.request()

    def _on_projection_reset(self) -> None:
        self._result = None
        self._frames.drop()
        self.run_strip.hide()
        table = self._state.table
        if table is None:
            self._show_message("Open a model to see where its tokens sit (Ctrl+O)")
            return
        waiting = self.fit.mode == "chosen" and self._state.jobs.interest.value is None
        name = METHOD_NAMES.get(self._state.projection_method, "projection")
        self.busy_label.setText(self.info.show_pending("Finding the tokens of interest…" if waiting  # no stale
                                                       else f"Computing the {name} of {table.name}…"))
        self._stack.setCurrentWidget(self._busy_page)

    def _on_projection_result(self, result: ProjectionResult | ManifoldResult) -> None:
        table = self._state.table
        if table is None or result.spec != table.spec:
            return
        self._result = result
        self.run_strip.setVisible(not getattr(result, "done", True))
        linear = result.linear
        self.axes_controls.setVisible(linear and not result.axis_names)
        if linear:
            self.axes_controls.set_components(result.n_components)
        self._stack.setCurrentWidget(self.plot_pages)
        self.info.show_fit(result)
        self._draw_cloud()
        self.plot.auto_range()

    def _on_projection_produced(self, frame) -> None:
        if getattr(frame, "linear", None) is False:  # a t-SNE or UMAP layout moving towards convergence
            self._frames.push(frame)  # the newest of those queued, once

    def _on_projection_failed(self, exc: BaseException) -> None:
        self._result = None
        self._show_message(f"The projection failed: {user_message(exc)}")

    def _on_projection_cancelled(self) -> None:
        self._gate.update(self._show_cancelled)

    def _show_cancelled(self) -> None:
        self.run_strip.hide()
        if self._result is not None and not self._result.linear and self._drawn():  # the layout stays where it stopped
            self.info.show_stopped(self._result)
            self._draw_cloud(stopped=True)
        else:
            self._show_message("The projection was cancelled; choose a fit set or fit again")

    def _show_message(self, text: str) -> None:
        self.empty.setText(text)
        self.retry_button.setVisible(self._state.table is not None)
        self._stack.setCurrentWidget(self._empty_page)

    # -- drawing ------------------------------------------------------------------------------
    def _xy(self, ids) -> np.ndarray:
        """Positions (m, 2) of token ids on the chosen axes (0 on a component that does not exist)."""
        coords = self._result.coords_of(self._state.table, ids)
        return self._columns(coords)

    def _columns(self, coords: np.ndarray) -> np.ndarray:
        out = np.zeros((coords.shape[0], 2), np.float64)
        axes = self.axes() if self._result.linear else (0, 1)
        for col, k in enumerate(axes):
            if k < coords.shape[1]:
                out[:, col] = coords[:, k]
        return out

    def _on_axes_changed(self, _x: int, _y: int) -> None:
        if self._result is not None:
            self._draw_cloud()
            self.plot.auto_range()

    def _draw_cloud(self, stopped: bool = False) -> None:
        res = self._result
        n = len(res.ids)
        size = 7 if n <= 1_000 else (5 if n <= 10_000 else 3)
        faint = QColor(self.plot.foreground)
        faint.setAlpha(60 if n <= 10_000 else 36)
        groups = self.points.group(self.colour.colour_by, res.ids)
        group, colors, legend = cloud_colours(groups, faint, 210 if n <= 10_000 else 150)
        self._legend = (self.colour.combo.currentText(), legend)  # for the exports
        self.info.show_legend(self._legend[0], legend, groups.missing, self.points.filter)
        xy = self._columns(res.coords)
        keep = self.points.visible(res.ids, xy)
        self.plot.set_cloud(res.ids[keep], xy[keep], group[keep], colors, size)
        self.plot_pages.set_cloud(res, group, colors, size)
        texts = axis_texts(res, self.axes(), stopped, self.points.shown_count())
        set_axis_texts(self.plot.plot_item, texts, self.plot.foreground)
        self._draw_overlays()

    def _on_colour_changed(self, *_args) -> None:
        if self._drawn():
            self._draw_cloud(stopped=not self._result.linear and not self._result.done
                             and not self._state.jobs.projection.running)

    def _on_points_changed(self) -> None:
        self._gate.update(self._on_colour_changed)

    def _selected_neighbors(self) -> list[int]:
        """The first neighbours of the selected token, as the state published them (or none yet)."""
        found = self._state.jobs.neighbors.value
        if found is None or found.token_id != self._state.selected_id:
            return []
        return found.ids()[:N_SELECTED_NEIGHBORS]

    def _drawn(self) -> bool:
        """A projection of the current table is on screen."""
        table = self._state.table
        return self._result is not None and table is not None and self._result.spec == table.spec

    def _draw_overlays(self) -> None:
        """Everything drawn over the cloud, from the state."""
        self._draw_marks()
        self._draw_selection()

    def _draw_marks(self, *_args) -> None:
        """The tokens of interest and the analogy (arrows, and the point a − b + c)."""
        if not self._drawn():
            return
        interest, analogy = self._state.jobs.interest.value, self._state.jobs.analogy.value
        linear = self._result is not None and self._result.linear  # arrows: on it P(a − b + c) = P(a) − P(b) + P(c)
        solved = analogy if linear and analogy is not None and analogy.best is not None else None
        marks: list[tuple[int, str, tuple[int, str]]] = []  # token id, colour, kind
        if interest is not None:
            groups = ((interest.neighbors, NEIGHBORS), (interest.extra, EXTRA), (interest.text, TEXT_TOKENS))
            for members, color in groups:
                marks += [(i, color, Mark.INTEREST) for i in members]
        marks = [m for m, keep in zip(marks, self.points.overlay_mask([m[0] for m in marks])) if keep]
        anchors = [m[0] for m in marks] + ([solved.a, solved.b, solved.c, solved.best.id] if solved is not None else [])
        xy = self._xy(anchors) if anchors else np.zeros((0, 2))
        marks_xy = xy[:len(marks)]
        if solved is not None:
            pa, pb, pc, best = xy[-4:]
            self.plot.set_analogy(pa, pb, pc, best)
            marks.append((-1, EXTRA, Mark.TARGET))
            marks_xy = np.vstack([marks_xy, pa - pb + pc])
        else:
            self.plot.set_analogy(None)
        self.plot.set_marks([m[0] for m in marks], marks_xy, [m[1] for m in marks], [m[2] for m in marks])
        self.plot_pages.set_marks([m[0] for m in marks], [m[1] for m in marks])
        self.plot.want_labels(self._label_specs)

    def _draw_selection(self, *_args) -> None:
        """The selected token and lines to its nearest rows (the state's neighbours): one small item."""
        sel = self._state.selected_id
        if not self._drawn() or sel < 0 or not self.points.overlay_mask([sel])[0]:
            self._line_ids = []
            self.plot.set_selection(None, np.zeros((0, 2)))
            self.plot_pages.set_selection(-1, [])
            return
        self._line_ids = [i for i in self._selected_neighbors() if self.points.overlay_mask([i])[0]]
        xy = self._xy([sel] + self._line_ids)
        self.plot.set_selection(sel, xy)
        self.plot_pages.set_selection(sel, self._line_ids)
        self.plot.want_labels(self._label_specs)

    def _label_specs(self) -> list[LabelSpec]:
        """The labels the view would like, highest priority first."""
        if not self._drawn():
            return []
        table = self._state.table
        wanted: list[tuple[int, str, bool]] = []
        sel = self._state.selected_id
        if sel >= 0:
            wanted.append((sel, ACCENT, True))
        analogy = self._state.jobs.analogy.value
        if analogy is not None and analogy.best is not None:
            wanted += [(i, EXTRA, True) for i in (analogy.a, analogy.b, analogy.c, analogy.best.id)]
        interest = self._state.jobs.interest.value
        if interest is not None:
            wanted += [(i, TEXT_TOKENS, True) for i in interest.text] + [(i, EXTRA, True) for i in interest.extra]
        wanted += [(i, NEIGHBORS, False) for i in self._line_ids]
        if interest is not None:
            wanted += [(i, NEIGHBORS, False) for i in interest.neighbors]
        seen: set[int] = set()
        shown = self.points.overlay_mask([w[0] for w in wanted])
        wanted = [w for w, keep in zip(wanted, shown) if keep and not (w[0] in seen or seen.add(w[0]))]
        specs = []
        if wanted:
            xy = self._xy([w[0] for w in wanted])
            specs = [LabelSpec(tid, float(p[0]), float(p[1]), table.shown_piece(tid).short(), color, bold)
                     for (tid, color, bold), p in zip(wanted, xy)]
        hits = [h for h in self.points.hit_labels(table.shown_piece)
                if not (h.token_id in seen or seen.add(h.token_id))]
        muted = QColor(self.plot.foreground)
        muted.setAlpha(150)
        return specs + hits + faint_labels(self.plot.cloud.positions(), self.points.shown_ids, self.plot.view_rect(),
                                           table.shown_piece, muted.name(QColor.HexArgb), seen, LABEL_FAINT_IN_VIEW)

    # -- analogies ----------------------------------------------------------------------------
    def _on_analogy_reset(self) -> None:
        self.analogy_panel.clear_answers()
        self._draw_marks()

    def _on_analogy_cancelled(self) -> None:
        self._gate.update(self.analogy_panel.status.setText, "Cancelled")

    def _on_analogy_result(self, result: AnalogyResult) -> None:
        self.analogy_panel.show_result(result)
        self._draw_marks()

    def analogy_answers(self) -> list[int]:
        return self.analogy_panel.answers()

    # -- the pointer and the search ----------------------------------------------------------
    def _on_plot_point_hovered(self, token_id: int) -> None:
        table, res = self._state.table, self._result
        if table is not None and res is not None and token_id >= 0:
            axes = self.axes() if res.linear else (0, 1)
            self.info.show_hover(hover_text(table, self._state.classes, res, token_id, axes, self._xy([token_id])[0],
                                            self._state.jobs.token_meta.value, self._state.jobs.health.value))

    def _on_search_token_found(self, token_id: int) -> None:
        self.token_added.emit(token_id)
        self.token_selected.emit(token_id)
