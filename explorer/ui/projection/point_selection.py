"""What of the projection is shown and singled out: the colouring's groups
(:mod:`explorer.core.tokens.groups`), the search hits
(:mod:`explorer.core.tokens.search`, searched in a worker) and the filter
(:mod:`explorer.core.projection.point_filter`). The view asks it which points to
draw; it rings the hits, counts what is shown and offers the health check.

Everything here is vectorised numpy over the drawn ids (about a millisecond
for 50,000 points); the search itself runs off the GUI thread (``state.jobs.token_search``).
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal

from explorer.core.arrays import unique_sorted
from explorer.core.errors import user_message
from explorer.core.projection.crossfilter import ChartFilter, CrossCounts, chart_columns, crossfilter
from explorer.core.projection.point_filter import SHOW_ALL, PointFilter, visible_mask
from explorer.core.tokens.groups import TokenGroups, token_groups
from explorer.core.tokens.search import SearchHits
from explorer.core.tokens.words import resolve_word
from explorer.ui.common.binding import OneATurn
from explorer.ui.projection.label_layout import LabelSpec
from explorer.ui.style import ERROR, SEARCH_HITS

__all__ = ["PointSelection", "HIT_LABELS"]

#: search hits labelled (the first ones by id; all of them are ringed)
HIT_LABELS = 40
#: drawn points from which the linked charts and the points' table are counted in the turn after the
#: map is drawn, unless a chart's choice filters the map: the landing of a projection of 256,000 points
#: spent 35 ms counting the charts, 36 making their columns and 35 filling the table and the charts
COUNT_LATER_MIN = 50_000
#: more drawn hits than this are not ringed (a ring each would cost a frame); Show → Search hits shows them
RING_LIMIT = 4_000


class PointSelection(QObject):
    """The filter, the hits and the groups of one projection view.

    Signals
    -------
    changed()
        The points to draw, their groups or the hits changed: draw the cloud again.
    counted()
        The cloud was filtered again: ``drawn`` and ``cross`` hold what the charts and the table show.
    """

    changed = Signal()
    counted = Signal()

    def __init__(self, state, show, search, plot, parent=None, legend=None):
        super().__init__(parent)
        if legend is not None:  # the legend's entries hide, show or isolate their groups
            legend.group_clicked.connect(self.click_group)
        self._state, self.show, self.search, self._plot = state, show, search, plot
        self.filter: PointFilter = SHOW_ALL
        self._key = ""
        self._offer = ""  # why the points cannot be coloured by health yet
        self.groups: TokenGroups | None = None
        self.hits: SearchHits | None = None
        self.search_error = ""
        self._drawn_hits = np.zeros(0, np.int64)
        self._drawn_hit_xy = np.zeros((0, 2))
        self.shown_ids = np.zeros(0, np.int64)  # the drawn ids the filter keeps
        self.chosen_ids = np.zeros(0, np.int64)  # the tokens inside the user's lasso, ascending
        self.user = None  # the user's metadata file (UserMetadata), for colours, groups and column=value searches
        self.charts = ChartFilter()  # the bars chosen in the linked charts
        self.columns: tuple = ()  # the charts' columns over the drawn ids (ChartColumn)
        self.cross: CrossCounts | None = None
        self.drawn: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # ids, xy, kept of the last cloud
        self._columns_for: tuple = ()
        self._counting = OneATurn(self)  # a big cloud's charts and table, in the turn after its map
        state.jobs.token_search.finished.connect(self._on_search_finished)
        state.jobs.token_search.failed.connect(self._on_search_failed)
        self.ring = pg.ScatterPlotItem(pxMode=True, size=13, symbol="o", pen=pg.mkPen(SEARCH_HITS, width=2),
                                       brush=None, hoverable=False)
        plot.plot_item.addItem(self.ring)
        search.query_changed.connect(self._on_query_changed)
        show.show_chosen.connect(self._on_show_chosen)
        show.isolate_clicked.connect(self.isolate)
        show.show_all_clicked.connect(self.show_all)
        show.health_requested.connect(self.run_health)
        state.jobs.token_meta.finished.connect(self._on_meta_finished)
        state.jobs.health.finished.connect(self._on_health_finished)
        state.jobs.health.running_changed.connect(self._on_health_running)

    # -- for the view ----------------------------------------------------------------------
    def group(self, key: str, ids: np.ndarray) -> TokenGroups:
        """The colouring's groups of the drawn ids (kept for the filter and the Show list)."""
        st = self._state
        if key != self._key and (self.filter.group >= 0 or self.filter.hidden):  # another colouring: other groups
            self.filter = SHOW_ALL
        self._key = key
        self.groups = token_groups(key, ids, vocab_size=st.table.vocab_size if st.table is not None else 0,
                                   meta=st.jobs.token_meta.value, classes=st.classes, health=st.jobs.health.value,
                                   chosen=self.chosen_ids, user=self.user)
        self._offer = self.groups.missing if key == "health" else ""
        self.show.show_health_offer(self._offer, st.jobs.health.running)
        self._offer_choices()
        return self.groups

    def visible(self, ids: np.ndarray, xy: np.ndarray) -> np.ndarray:
        """(n,) bool: which of the drawn ids to show; rings the hits among them and counts."""
        hits = self.hits.ids if self.hits is not None else None
        keep = visible_mask(ids, self.filter, self.groups, hits)
        later = not self.charts.active and len(ids) >= COUNT_LATER_MIN
        if not later:  # a chart's choice filters the map: its counts first
            self.cross = crossfilter(self._chart_columns(ids), self.charts, keep)
            keep &= self.cross.keep
        self.shown_ids = ids[keep]
        if hits is not None:
            ringed = keep & np.isin(ids, hits)
            self._drawn_hits, self._drawn_hit_xy = ids[ringed], xy[ringed]
        else:
            self._drawn_hits, self._drawn_hit_xy = np.zeros(0, np.int64), np.zeros((0, 2))
        ringed = len(self._drawn_hits) <= RING_LIMIT
        self.ring.setData(pos=self._drawn_hit_xy if ringed else np.zeros((0, 2)))
        self.show.show_counts(int(keep.sum()), len(ids), self.filter.isolated is not None)
        self.show.show_search(self.status_html())
        self.drawn = (ids, xy, keep)
        if later:  # the map is painted first, the charts and the table in the next turn
            self._counting.run([lambda: self._count_charts(ids, keep)], now=False)
        else:
            self._counting.cancel()
            self.counted.emit()
        return keep

    def _count_charts(self, ids: np.ndarray, keep: np.ndarray) -> None:
        self.cross = crossfilter(self._chart_columns(ids), self.charts, keep)
        self.counted.emit()

    def finish_counting(self) -> None:
        """The charts' counts and the table of the cloud drawn last, now (an export reads them)."""
        self._counting.finish()

    def _chart_columns(self, ids: np.ndarray) -> tuple:
        """The linked charts' columns over ``ids``, computed again only when the ids or the metadata changed."""
        st = self._state
        sources = (st.jobs.token_meta.value, st.jobs.health.value, st.classes, self.user)
        old = self._columns_for
        if not (old and all(a is b for a, b in zip(old[1:], sources)) and np.array_equal(old[0], ids)):
            self.columns = chart_columns(ids, vocab_size=st.table.vocab_size if st.table is not None else 0,
                                         meta=sources[0], health=sources[1], classes=sources[2], user=sources[3])
            self._columns_for = (ids, *sources)
        return self.columns

    def shows_all(self) -> bool:
        """No filter is on: neither the Show choice, the legend nor the charts."""
        return self.filter.shows_all and not self.charts.active

    def overlay_mask(self, ids) -> np.ndarray:
        """(m,) bool: which highlighted ids (the text's tokens, neighbours, the selection) to draw
        over the cloud: all while every point is shown, else those the filter shows, so that
        the count and the title say what is on screen."""
        ids = np.asarray(ids, np.int64).reshape(-1)
        return np.ones(len(ids), bool) if self.shows_all() else np.isin(ids, self.shown_ids)

    def shown_count(self) -> int | None:
        """Points the filter shows, or None while it shows all of them."""
        return None if self.shows_all() else len(self.shown_ids)

    def shown_hits(self) -> np.ndarray:
        """The hits drawn (ringed), ascending ids."""
        return self._drawn_hits

    def hit_labels(self, shown_piece) -> list[LabelSpec]:
        """Labels for the first drawn hits."""
        ids, xy = self._drawn_hits[:HIT_LABELS], self._drawn_hit_xy[:HIT_LABELS]
        return [LabelSpec(int(i), float(p[0]), float(p[1]), shown_piece(int(i)).short(), SEARCH_HITS, True)
                for i, p in zip(ids.tolist(), xy)]

    def first_hit(self) -> int | None:
        """The hit Enter selects: the token spelled as typed when it is a hit, else the lowest id; None: no search."""
        if self.hits is None or not self.hits.query:
            return None
        if not self.hits.count:
            return -1
        table = self._state.table
        if not self.hits.regex and table is not None:
            exact = resolve_word(table.tokenizer, self.hits.query, rows=table.vocab_size)
            if exact is not None and np.isin(exact, self.hits.ids):
                return exact
        drawn = self._drawn_hits
        return int(drawn[0] if len(drawn) else self.hits.ids[0])

    def clear(self) -> None:
        """A new model: no hits, every point shown."""
        self.hits, self.search_error, self.filter, self.groups, self.user = None, "", SHOW_ALL, None, None
        self.charts, self.columns, self.cross, self.drawn, self._columns_for = ChartFilter(), (), None, None, ()
        self._counting.cancel()
        self.ring.setData([])
        self._drawn_hits = self.shown_ids = self.chosen_ids = np.zeros(0, np.int64)
        self.search.show_error(False)
        self.show.show_search("")
        self._offer_choices()

    # -- the user's intents -----------------------------------------------------------------
    def isolate(self) -> None:
        """Only the selected token, its neighbours (the state's) and the search hits."""
        st = self._state
        ids: list[int] = []
        if st.selected_id >= 0:
            ids.append(st.selected_id)
            found = st.jobs.neighbors.value
            if found is not None and found.token_id == st.selected_id:
                ids += found.ids()
        if self.hits is not None:
            ids += self.hits.ids.tolist()
        self.filter = PointFilter(isolated=tuple(ids))
        self._offer_choices()
        self.changed.emit()

    def set_chosen(self, ids) -> None:
        """The tokens inside the user's lasso (empty: none): the ``lasso`` colouring and the exports use them."""
        self.chosen_ids = unique_sorted(np.asarray(ids, np.int64))
        self.changed.emit()

    def click_group(self, group: int, alone: bool = False) -> None:
        """A legend entry clicked: hide or show ``group``; ``alone`` (shift-click): show only it, or all again."""
        n = len(self.groups.labels) if self.groups is not None else 0
        if not 0 <= group < n:
            return
        self.filter = self.filter.alone(group) if alone else self.filter.toggled(group, n)
        self._offer_choices()
        self.changed.emit()

    def choose_bars(self, key: str, bars) -> None:
        """Exactly ``bars`` of the linked chart ``key`` chosen (empty: that chart filters nothing)."""
        self.charts = self.charts.with_bars(key, bars)
        self.changed.emit()

    def toggle_bar(self, key: str, bar: int) -> None:
        """A bar of the linked chart ``key`` clicked: chosen, or no longer."""
        self.charts = self.charts.toggled(key, bar)
        self.changed.emit()

    def clear_charts(self) -> None:
        self.charts = ChartFilter()
        self.changed.emit()

    def show_all(self) -> None:
        self.filter, self.charts = SHOW_ALL, ChartFilter()
        self._offer_choices()
        self.changed.emit()

    def run_health(self) -> None:
        """Run the health check in the background (it is lazy: wanted from now until it lands)."""
        self._state.run_health_now()
        self.show.show_health_offer(self._offer, True)

    def _on_show_chosen(self, key: str) -> None:
        group = int(key.split(":")[1]) if key.startswith("group:") else -1
        self.filter = PointFilter(group=group, hits_only=key == "hits", isolated=None)
        self.changed.emit()

    # -- the search -------------------------------------------------------------------------
    def _on_query_changed(self, query: str, regex: bool) -> None:
        found = self.user.search(query) if self.user is not None and not regex else None
        if found is not None:  # column=value in the user's metadata: answered here, vectorised
            self._set_hits(SearchHits(query, regex, found[1]), "")
            return
        if not self._state.request_token_search(query, regex):
            self._set_hits(None, "The pieces are still being read; the search runs once they are.")
        elif not query:
            self._set_hits(None, "")

    def _on_search_finished(self, hits: SearchHits) -> None:
        if (hits.query, hits.regex) == self.search.query:
            self._set_hits(hits, "")

    def _on_search_failed(self, exc: BaseException) -> None:
        self._set_hits(None, user_message(exc))

    def _set_hits(self, hits: SearchHits | None, error: str) -> None:
        self.hits, self.search_error = hits, error
        self.search.show_error(bool(error))
        self.show.show_search(self.status_html())
        if self.filter.hits_only and hits is None:
            self.filter = SHOW_ALL
        self._offer_choices()
        self.changed.emit()

    def status_html(self) -> str:
        """The search's count, or why it found nothing (inline, never an exception)."""
        if self.search_error:
            return f'<span style="color:{ERROR}">{html.escape(self.search_error)}</span>'
        if self.hits is None:
            return ""
        n, drawn = self.hits.count, len(self._drawn_hits)
        text = (f'<span style="color:{SEARCH_HITS}">●</span> <b>{n:,}</b> search hit{"s" if n != 1 else ""} '
                f'({drawn:,} drawn)')
        if drawn > RING_LIMIT and not self.filter.hits_only:
            text += f"; too many to ring (over {RING_LIMIT:,}): choose Show → Search hits"
        return text

    def _offer_choices(self) -> None:
        groups = self.groups
        pairs = list(zip(groups.labels, groups.counts().tolist())) if groups is not None else []
        current = ("hits" if self.filter.hits_only else
                   f"group:{self.filter.group}" if self.filter.group >= 0 else "all")
        self.show.set_choices(pairs, self.hits.count if self.hits is not None else None, current)

    # -- the state ---------------------------------------------------------------------------
    def _on_meta_finished(self, _meta) -> None:
        if self.search.query[0]:
            self._on_query_changed(*self.search.query)

    def _on_health_finished(self, _report) -> None:
        self.changed.emit()

    def _on_health_running(self, running: bool) -> None:
        self.show.show_health_offer(self._offer, running)
