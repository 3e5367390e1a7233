"""What the user asks for on demand (health, verification, measurement,
analogies, the lookup's backward step, the tour's claims, the first-layer run): requests that run one
job on the loaded table in a worker, mixed into :class:`~explorer.state.app_state.AppState`.

Each writes to a :class:`~explorer.workers.Computation` the state owns.
"""

from __future__ import annotations

import itertools

from explorer.core.cost.context import contextual_job
from explorer.core.geometry.analogy import ANALOGY_K, AnalogyForm, analogy_job
from explorer.core.health import iter_health
from explorer.core.health.verify import iter_verify
from explorer.core.interop.metadata_file import metadata_file_job
from explorer.core.lookup.backward import BACKWARD_MAX_POSITIONS, backward_job
from explorer.core.lookup.ways import measure_lookup_job
from explorer.core.projection.clusters import clusters_job
from explorer.core.projection.density import density_job
from explorer.core.projection.point_table import piece_order_job
from explorer.core.tokens.search import iter_search_pieces
from explorer.core.tour.steps import claim_job

__all__ = ["OnDemandRequests"]


class OnDemandRequests:
    """The requests; AppState provides ``_table``, ``_tokenized`` and the Computations."""

    def request_layout_density(self, xy, rect, bins: tuple[int, int], sigma: float, key) -> None:
        """The density map of the layout drawn, ``xy`` (n, 2), over ``rect`` = (x0, x1, y0, y1);
        ``key`` says which cloud and range (the projection's view keeps it)."""
        self.layout_density.request(density_job, xy, rect, bins, sigma, key, key=key)

    def forget_layout_density(self) -> None:
        """The cloud changed or the map was switched off: its density is dropped (a run never lands)."""
        self.layout_density.clear()

    def forget_layout_clusters(self) -> None:
        """The cloud changed or the labels were switched off: the clusters are dropped."""
        self.layout_clusters.clear()

    def request_layout_clusters(self, xy, k: int, key) -> None:
        """k clusters of the layout drawn, each with its two most central points."""
        self.layout_clusters.request(clusters_job, xy, k, 2, 0, key, key=key)

    def request_user_metadata(self, path: str) -> bool:
        """Read the user's metadata file for the open table in a worker; False with no table."""
        if self._table is None:
            return False
        # no key: picking a file is always read again (the user may have edited it since)
        self.user_metadata.request(metadata_file_job, str(path), self._table)
        return True

    def request_piece_order(self, ids) -> None:
        """The pieces of the points table's ``ids`` and their order, read in a worker (the first
        sort by piece; ``piece_order`` gets a PieceOrder whose ``ids`` is ``ids``: the table
        knows its own by identity). A newer request outdates a running one."""
        if self._table is not None:
            self.piece_order.request(piece_order_job, self._table.shown_piece, ids)

    def request_completions(self) -> None:
        """The pieces the search boxes offer, listed in a worker (once per model)."""
        if self._table is not None:
            self.completions.request(self._table.iter_completion_pieces, key=id(self._table))

    def request_health(self) -> None:
        """Check every row of the table (once per model; again after a Cancel)."""
        if self._table is not None:
            self.health.request(iter_health, self._table, key=id(self._table))

    def run_health_now(self) -> None:
        """Check the table now even if no Health tab is shown (the projection
        colouring by health asks): wanted by the state until the report lands."""
        health = self.health
        if health.value is None and not health.running and not health.pending:
            self.request_health()
        health.want(self, True)

    def _on_health_landed(self, _report) -> None:
        self.health.want(self, False)

    def request_token_search(self, query: str, regex: bool = False) -> bool:
        """Search the shown pieces for ``query`` (a substring, or a regular expression) in a
        worker; "" clears. False while the pieces are not read yet (``token_meta``)."""
        meta = self.token_meta.value
        if not query or meta is None or meta.pieces is None:
            self.token_search.clear()
            return not query
        self.token_search.request(iter_search_pieces, meta.pieces, query, regex, key=(id(meta), query, regex))
        return True

    def request_verification(self, ids) -> None:
        """Load the whole model and ask it to repeat tokens ``ids``, in a worker."""
        table = self._table
        if table is not None:
            ids = tuple(int(i) for i in ids)
            self.verification.request(iter_verify, table, ids, key=(id(table), ids))

    def measure_lookup(self, batch_sizes: tuple[int, ...] = (1, 64)) -> None:
        """Time gather, one-hot @ E and nn.Linear on the table, in a worker."""
        if self._table is not None:
            self.measurement.request(measure_lookup_job, self._table, batch_sizes)

    def request_analogy(self, a: int, b: int, c: int, form: str = "unit") -> None:
        """Solve the analogy on the table in a worker: the rows nearest to â − b̂ + ĉ
        (``form`` ``unit``) or to a − b + c (``plain``), see :class:`AnalogyForm`."""
        table = self._table
        if table is None:
            self.analogy.clear()
            return
        a, b, c, form = int(a), int(b), int(c), AnalogyForm(form)
        self.analogy.request(analogy_job, table, a, b, c, ANALOGY_K, form, key=(id(table), a, b, c, form))

    def cancel_measurement(self) -> None:
        """Stop the lookup measurement (the user's Cancel); its result never lands."""
        self.measurement.cancel()

    def forget_tour_claim(self) -> None:
        """The tour moved on or closed: its claim is dropped (a running one never lands)."""
        self.tour_claim.clear()

    def request_tour_claim(self, step, history=None) -> None:
        """What tour ``step`` says, computed from the loaded table and text (or a training run's ``history``)."""
        self.tour_claim.request(claim_job, step, self._table, self._tokenized, history,
                                key=(step.key, id(self._table), self._tokenized.text, id(history)))

    def request_context(self, folder, sequences, picks) -> None:
        """Run the model's first layer on ``sequences`` and compare the vectors at ``picks``."""
        seqs = tuple(tuple(int(i) for i in s) for s in sequences)
        picks = tuple(tuple(p) for p in picks)
        self.context.request(contextual_job, folder, seqs, picks, key=(str(folder), seqs, picks))

    def request_backward(self, seed: int | None = None) -> None:
        """The lookup's backward step on the text (its first BACKWARD_MAX_POSITIONS
        tokens with a row) for a G seeded with ``seed`` (None: the last seed)."""
        if seed is not None:
            self._backward_seed = int(seed)
        self._update_backward()

    @property
    def backward_seed(self) -> int:
        return self._backward_seed

    def _update_backward(self) -> None:
        table = self._table
        if table is None:
            self.backward.clear()
            return
        ids = tuple(itertools.islice((t.id for t in self._tokenized.tokens if t.ok), BACKWARD_MAX_POSITIONS))
        seed = self._backward_seed
        self.backward.request(backward_job, ids, table.dim, table.vocab_size, seed, key=(id(table), ids, seed))
