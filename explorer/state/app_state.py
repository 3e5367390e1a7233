"""AppState: the single source of truth shared by every view.

It holds the loaded model, the text and its tokens, the selected token and
the tokens the user added, and everything derived from them that a view
shows: the matrix overview, the class index, the neighbours of the
selection, the tokens of interest, the projection, the lookup check, the
measurement, the random-vector check and the first-layer run. Derived
results are :class:`~explorer.workers.Computation` objects: each is dropped
the moment its inputs change and recomputed (in a worker unless it costs
microseconds); a result made for an older model or selection never lands.

Views mirror this object and call its setters with the user's intents;
setters return early when nothing changed, so there are no feedback loops.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from explorer.core.geometry.neighbors import INLINE_VALUES, iter_neighbors_of
from explorer.core.geometry.vectors import random_vector_check_job
from explorer.core.input_layer import positions_job, text_inputs_job
from explorer.core.lookup.ways import lookup_check_job, stored_base_job
from explorer.core.matrix.overview import MatrixOverview, matrix_overview
from explorer.core.projection.job import DEFAULT_SAMPLE, WHOLE_VOCAB_LIMIT, interest_job
from explorer.core.similarity.regimes import is_cheap, matrix_token_ids, similarity_job, similarity_matrices
from explorer.core.sources import EmbeddingTable
from explorer.core.sources.loading import ClassIndex, LoadedModel
from explorer.core.tokens.meta import iter_token_metadata
from explorer.core.tokens.text import INLINE_CHARS, TokenizedText, tokenize_text
from explorer.core.tokens.tokenize import Token
from explorer.core.tokens.words import position_of_word, selected_word
from explorer.state.both_ends import BothEnds
from explorer.state.projection_request import ProjectionRequest
from explorer.state.requests import OnDemandRequests
from explorer.state.training_runner import TrainingRunner
from explorer.workers import Computation, JobViews

__all__ = ["AppState", "MAX_EXTRA_TOKENS", "N_NEIGHBORS"]

MAX_EXTRA_TOKENS = 200
#: neighbours of the selected token kept (the inspector lists them all, the projection draws some)
N_NEIGHBORS = 10
#: neighbours of each text token among the tokens of interest
N_TEXT_NEIGHBORS = 3
#: pairs of random vectors (and of rows) in the random-vector check
N_RANDOM_PAIRS = 5000


def _tokenize_job(tokenizer, text: str, vocab_size: int):
    yield 0.0, f"Tokenizing {len(text):,} characters…"
    return tokenize_text(tokenizer, text, vocab_size)


class AppState(OnDemandRequests, QObject):
    """Shared state with change signals.

    Signals
    -------
    model_changed(object)
        A new EmbeddingTable is installed: every model-specific readout
        clears now; the new model's tokens and selection follow at once.
    overview_changed(object)
        The MatrixOverview of the new table, after its tokens and selection when
        they come with it (a text too long to tokenize inline brings them later).
    text_changed(str)
    tokens_changed(object)
        The TokenizedText of the text for this table (after a text or model change).
    selected_token_changed(int)
        The selected token id (-1: none).
    extra_tokens_changed(list)
        Token ids the user added (neighbours clicked, searches).
    tokenizing_changed(bool)
        A long text is being tokenized in the background.

    Derived results (Computation objects; their ``finished`` carries the value)
    ----------------------------------------------------------------------------
    neighbors : NeighborList of the selected token.
    ends : BothEnds, the output side: the matrix the matrix view shows, the output
        matrix's overview, the selected token's direct path.
    interest : TokensOfInterest: the text's tokens, their neighbours, the added ones (lazy).
    projection : ProjectionResult (PCA) or ManifoldResult (t-SNE, UMAP; its ``produced``
        carries the intermediate layouts) for the parameters of :meth:`request_projection` (lazy).
    lookup_check : PathComparison of one-hot @ E and E[i] for the selected token
        (lazy; never computed for a table too big to hold).
    stored_base : StoredBase, where the stored table starts in memory (lazy; None
        for a table too big to hold).
    measurement : LookupMeasurement, the lookup timings, when :meth:`measure_lookup` asks for them.
    random_check : CosineCheck of random vectors and the table's rows (lazy).
    context : ContextResult of the model's first layer, for :meth:`request_context`.
    analogy : AnalogyResult of a − b + c, for :meth:`request_analogy`.
    similarity : SimilarityMatrices of the text's and the added tokens, by the
        measure of :meth:`request_similarity` (only while wanted; on the spot when cheap).
    health : HealthReport of the table: under-trained rows, tokenizer round trips
        (lazy; kept for the model; :meth:`request_health` runs it again after a Cancel).
    positions : PositionsReport of the model's input layer (lazy; the Positions view).
    input_layer : TextInputs, the input layer applied to the text's tokens (lazy).
    verification : VerificationResult of :meth:`request_verification` (the model asked to
        repeat candidate tokens).
    token_meta : TokenMetadata of the table: every token's kind, length and row norm (lazy).
    token_search : SearchHits of :meth:`request_token_search` (the projection's search).
    user_metadata : UserMetadata, the user's file read by :meth:`request_user_metadata`.
    piece_order : PieceOrder of :meth:`request_piece_order` (the points table sorted by piece).
    completions : the sorted shown pieces the search boxes offer (:meth:`request_completions`).
    backward : LookupBackward, the lookup's gradient dL/dE = one_hot(x)ᵀ G for the text
        and a seeded G (lazy; :meth:`request_backward` sets the seed).
    tour_claim : Claim of the guided tour's step, for :meth:`request_tour_claim`.

    Views see these through ``jobs`` (``state.jobs.neighbors``): a
    :class:`~explorer.workers.JobView` with the value and the signals only.
    """

    model_changed = Signal(object)
    overview_changed = Signal(object)
    text_changed = Signal(str)
    tokens_changed = Signal(object)
    selected_token_changed = Signal(int)
    extra_tokens_changed = Signal(list)
    tokenizing_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._table: EmbeddingTable | None = None
        self._overview: MatrixOverview | None = None
        self._classes: ClassIndex | None = None
        self._text = ""
        self._tokenized = TokenizedText("", (), 0)
        self._selected_id = -1
        self._selected_position = -1
        self._extra: list[int] = []
        self._pending_position = -1  # the position to keep once a long text is tokenized
        self._carried: tuple[str, int] | None = None  # the selected word, across a model switch
        self._tokenizing = Computation(self)
        self._tokenizing.finished.connect(self._on_tokenizing_finished)
        self._tokenizing.running_changed.connect(self.tokenizing_changed)
        self.neighbors = Computation(self)
        self.ends = BothEnds(self)
        self.interest = Computation(self, lazy=True)
        self.projection = Computation(self, lazy=True)
        self.lookup_check = Computation(self, lazy=True)
        self.stored_base = Computation(self, lazy=True)
        self.measurement = Computation(self)
        self.random_check = Computation(self, lazy=True)
        self.context = Computation(self)
        self.analogy = Computation(self)
        self.similarity = Computation(self, lazy=True)
        self.health = Computation(self, lazy=True)
        self.health.finished.connect(self._on_health_landed)
        self.verification = Computation(self)
        self.token_meta = Computation(self, lazy=True)
        self.token_search = Computation(self)
        self.user_metadata = Computation(self)
        self.positions = Computation(self, lazy=True)
        self.input_layer = Computation(self, lazy=True)
        self.backward = Computation(self, lazy=True)
        self._backward_seed = 0
        self.tour_claim = Computation(self)
        # the projection's map of the layout drawn (issue 15): its density, its clusters
        self.layout_density, self.layout_clusters = Computation(self), Computation(self)
        self.piece_order = Computation(self)  # the points table's pieces, sorted (its first sort by piece)
        self.completions = Computation(self)  # what the search boxes offer, listed when one is first used
        self._similarity_metric: str | None = None
        self._projection = ProjectionRequest(self.projection)
        self.interest.finished.connect(self._on_interest_finished)
        self.training = TrainingRunner(self, self.model_changed)
        # what views see of the computations: values and signals, never the means to run one
        self.jobs = JobViews(
            neighbors=self.neighbors, interest=self.interest, projection=self.projection,
            lookup_check=self.lookup_check, stored_base=self.stored_base, measurement=self.measurement,
            random_check=self.random_check, context=self.context, analogy=self.analogy, similarity=self.similarity,
            health=self.health, verification=self.verification, token_meta=self.token_meta,
            token_search=self.token_search, user_metadata=self.user_metadata, positions=self.positions,
            input_layer=self.input_layer, backward=self.backward, tour_claim=self.tour_claim,
            layout_density=self.layout_density, layout_clusters=self.layout_clusters, piece_order=self.piece_order,
            completions=self.completions, direct_path=self.ends.direct_path,
            output_overview=self.ends.output_overview,
        )


    # -- read --------------------------------------------------------------------------
    @property
    def table(self) -> EmbeddingTable | None:
        return self._table

    @property
    def overview(self) -> MatrixOverview | None:
        return self._overview

    @property
    def classes(self) -> ClassIndex | None:
        return self._classes

    @property
    def text(self) -> str:
        return self._text

    @property
    def tokenized(self) -> TokenizedText:
        return self._tokenized

    @property
    def tokens(self) -> list[Token]:
        return list(self._tokenized.tokens)

    @property
    def tokenize_error(self) -> str:
        err = self._tokenized.error
        return str(err) if err is not None else ""

    @property
    def tokenizing(self) -> bool:
        return self._tokenizing.running

    @property
    def selected_id(self) -> int:
        return self._selected_id

    @property
    def selected_position(self) -> int:
        """Position of the selected token in the text, or -1 (e.g. a neighbour)."""
        return self._selected_position

    @property
    def extra_ids(self) -> list[int]:
        return list(self._extra)

    def in_range(self, token_id: int) -> bool:
        return self._table is not None and 0 <= token_id < self._table.vocab_size

    # -- the model ---------------------------------------------------------------------
    def set_model(self, loaded: LoadedModel, adopt_text: bool = True) -> None:
        """Install a model the loader prepared: table, overview, classes and the
        text's tokens go in together, then the selection (the same position
        when it still exists), then ``overview_changed`` (a text too long to
        tokenize inline brings its tokens and selection later, from a job).

        With ``adopt_text`` the text the loader tokenized (the text for this
        table's kind of tokenizer, or its example) becomes the text; without
        it (the user typed while the model loaded) the current text stays
        and is tokenized anew.
        """
        if loaded.table is self._table:
            return
        # the selection goes across by word ("king" stays king), never by position
        self._carried = selected_word(self._tokenized.tokens, self._tokenized.text, self._selected_position)
        position = -1
        self._table = loaded.table
        self._overview = loaded.overview
        self._classes = loaded.classes
        self._extra = []
        self._selected_id = -1
        self._selected_position = -1
        self._tokenizing.clear()
        self._tokenized = TokenizedText(self._text, (), loaded.table.vocab_size)
        self._clear_derived()
        self._projection.forget()
        self.ends.set_table(loaded.table)
        self.model_changed.emit(loaded.table)
        try:
            self._install_model_parts(loaded, adopt_text, position)
        finally:  # last, after the selection: the matrix reads the band of rows once, around the
            # selected row (not row 0's, then the selection's); and draws the new table whatever failed
            self.overview_changed.emit(loaded.overview)

    def _install_model_parts(self, loaded: LoadedModel, adopt_text: bool, position: int) -> None:
        self.extra_tokens_changed.emit([])  # what a new model brings besides its table
        self.random_check.request(random_vector_check_job, loaded.table, N_RANDOM_PAIRS, key=id(loaded.table))
        self.stored_base.request(stored_base_job, loaded.table, key=id(loaded.table))
        self.token_meta.request(iter_token_metadata, loaded.table, key=id(loaded.table))
        self.request_health()
        self.positions.request(positions_job, loaded.table, key=id(loaded.table))
        if adopt_text and loaded.tokenized.text != self._text:
            self._text = loaded.tokenized.text
            self.text_changed.emit(self._text)
        if loaded.tokenized.text == self._text:
            self._install_tokens(loaded.tokenized, position)
        else:
            self._retokenize(position)

    def set_table(self, table: EmbeddingTable) -> None:
        """Install a table opened elsewhere (tests, a saved training run):
        its overview and tokens are computed here, so keep it small."""
        if table is self._table:
            return
        tokenized = tokenize_text(table.tokenizer, self._text, table.vocab_size)
        self.set_model(LoadedModel(table, matrix_overview(table), ClassIndex.from_table(table), tokenized, 0.0),
                       adopt_text=False)

    def _clear_derived(self) -> None:
        for comp in self.findChildren(Computation):
            if comp is not self._tokenizing:
                comp.clear()

    # -- the text ----------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        text = text or ""
        if text == self._text:
            return
        self._text = text
        self.text_changed.emit(text)
        self._retokenize(self._selected_position)

    def _retokenize(self, position: int) -> None:
        table = self._table
        if table is None:
            self._tokenizing.clear()
            self._install_tokens(TokenizedText(self._text, (), 0), position)
        elif len(self._text) <= INLINE_CHARS:
            self._tokenizing.clear()
            self._install_tokens(tokenize_text(table.tokenizer, self._text, table.vocab_size), position)
        else:
            # the old tokens stay on screen until the new ones arrive
            self._pending_position = position
            self._tokenizing.request(_tokenize_job, table.tokenizer, self._text, table.vocab_size,
                                     key=(id(table), self._text))

    def _on_tokenizing_finished(self, tokenized: TokenizedText) -> None:
        if self._table is not None and tokenized.text == self._text and tokenized.vocab_size == self._table.vocab_size:
            self._install_tokens(tokenized, self._pending_position)

    def _install_tokens(self, tokenized: TokenizedText, position: int) -> None:
        self._tokenized = tokenized
        carried, self._carried, clear = self._carried, None, False
        if carried is not None and tokenized.text == self._text and self._table is not None:
            position = position_of_word(self._table.tokenizer, tokenized.tokens, *carried)
            clear = position < 0  # the word is not one token of this model: nothing selected
        self.tokens_changed.emit(tokenized)
        if self._table is not None:
            self.input_layer.request(text_inputs_job, self._table, tokenized.tokens,
                                     key=(id(self._table), tokenized.tokens))
        self._update_interest()
        self._update_similarity()
        self._update_backward()
        if clear:
            self._select(-1, -1, force=True)
        elif tokenized.tokens:
            pos = position if 0 <= position < len(tokenized.tokens) else tokenized.first_selectable()
            self._select(pos, tokenized.tokens[pos].id, force=True)
        elif self._selected_position != -1 or (self._selected_id != -1 and self._selected_id not in self._extra):
            self._select(-1, self._selected_id if self._selected_id in self._extra else -1, force=True)

    # -- the selection -----------------------------------------------------------------
    def select_position(self, position: int) -> None:
        """Select the token at ``position`` in the text."""
        tokens = self._tokenized.tokens
        if not 0 <= position < len(tokens):
            return
        self._select(position, tokens[position].id)

    def set_selected_token(self, token_id: int) -> None:
        """Select a token id (from a chip, a neighbour, a matrix row, a point).

        The first occurrence in the text becomes the selected position, if any.
        """
        if not self.in_range(token_id) or token_id == self._selected_id:
            return
        self._select(self._tokenized.position_of(token_id), int(token_id))

    def step_selection(self, delta: int) -> None:
        """Move the selection by ``delta`` tokens along the text (arrow keys)."""
        n = len(self._tokenized.tokens)
        if not n:
            return
        pos = self._selected_position if self._selected_position >= 0 else (-1 if delta > 0 else n)
        self.select_position(max(0, min(n - 1, pos + delta)))

    def add_extra_token(self, token_id: int) -> None:
        """Add a token to the ones compared besides the text's (the newest MAX_EXTRA_TOKENS are kept)."""
        if not self.in_range(token_id) or token_id in self._extra:
            return
        self._set_extra((self._extra + [int(token_id)])[-MAX_EXTRA_TOKENS:])

    def remove_extra_token(self, token_id: int) -> None:
        """Take an added token out again (the text's tokens stay)."""
        if int(token_id) in self._extra:
            self._set_extra([i for i in self._extra if i != int(token_id)])

    def set_extra_tokens(self, ids) -> None:
        """Compare these tokens besides the text's, in place of the added ones (the first
        MAX_EXTRA_TOKENS of those in range; a lasso group handed to the similarity matrix)."""
        ids = [int(i) for i in dict.fromkeys(int(i) for i in ids) if self.in_range(int(i))][:MAX_EXTRA_TOKENS]
        if ids != self._extra:
            self._set_extra(ids)

    def clear_extra_tokens(self) -> None:
        """Remove every added token."""
        if self._extra:
            self._set_extra([])

    def _set_extra(self, ids: list[int]) -> None:
        self._extra = ids
        self.extra_tokens_changed.emit(list(self._extra))
        self._update_interest()
        self._update_similarity()

    def _select(self, position: int, token_id: int, force: bool = False) -> None:
        token_id = int(token_id) if self.in_range(token_id) else -1
        if not force and position == self._selected_position and token_id == self._selected_id:
            return
        changed = token_id != self._selected_id or force
        self._selected_position = position
        self._selected_id = token_id
        if changed and self.neighbors.key != self._neighbors_key():
            self.neighbors.clear()  # no view may read the old token's neighbours meanwhile
        self.selected_token_changed.emit(token_id)
        if changed:
            self._update_neighbors()
            self._update_lookup_check()
            self.ends.select(token_id)

    def _neighbors_key(self) -> tuple:
        return (id(self._table), self._selected_id)

    def _update_neighbors(self) -> None:
        table, tid = self._table, self._selected_id
        key = self._neighbors_key()
        if table is None or tid < 0:
            self.neighbors.clear()
        else:
            self.neighbors.follow(key, table.params <= INLINE_VALUES, iter_neighbors_of, table, tid, N_NEIGHBORS)

    def _update_lookup_check(self) -> None:
        table, tid = self._table, self._selected_id
        if table is None or tid < 0 or not table.fits_in_memory:
            self.lookup_check.clear()  # a table too big to hold is not multiplied out
        else:
            self.lookup_check.request(lookup_check_job, table, tid, key=(id(table), tid))

    # -- the tokens of interest and the projection ----------------------------------------
    def _update_interest(self) -> None:
        table = self._table
        if table is None:
            self.interest.clear()
            return
        text_ids = tuple(self._tokenized.distinct_ids())
        extra = tuple(self._extra)
        self.interest.request(interest_job, table, text_ids, extra, N_TEXT_NEIGHBORS,
                              key=(id(table), text_ids, extra))

    def _on_interest_finished(self, _interest) -> None:
        if self._projection.waits_for_interest():
            self._update_projection()

    def default_projection_mode(self) -> str:
        """``all`` for vocabularies that fit a PCA at once, else ``sample``."""
        table = self._table
        return "all" if table is None or table.trained_rows <= WHOLE_VOCAB_LIMIT else "sample"

    def request_projection(self, mode: str | None = None, sample_size: int = DEFAULT_SAMPLE,
                           method: str = "pca", axes: tuple[str, ...] = (), dims: int = 2) -> None:
        """Fit the projection with these parameters (the projection view's
        controls): ``method`` pca, tsne, umap or axes (custom ``axes`` typed as
        ``"man → woman"`` or ``"king"``); ``chosen`` fits on the tokens of
        interest once they are known; ``dims`` 3 lays t-SNE/UMAP out in three
        dimensions. A new request cancels the old run."""
        self._projection.set(mode or self.default_projection_mode(), sample_size, method, axes, dims)
        self._update_projection()

    def recompute_projection(self) -> None:
        """Compute the t-SNE/UMAP layout shown again, bypassing the layout cache."""
        self._projection.recompute()
        self._update_projection()

    @property
    def projection_params(self) -> tuple[str, int] | None:
        """(fit set, sample size) of the last projection asked for, or None."""
        settings = self._projection.settings
        return None if settings is None else (settings.fit.value, settings.sample_size)

    @property
    def projection_method(self) -> str:
        """``pca``, ``tsne``, ``umap`` or ``axes``: the method of the last projection asked for."""
        return self._projection.method.value

    def _update_projection(self) -> None:
        self._projection.update(self._table, self.interest.value)

    # -- the similarity of the chosen tokens -------------------------------------------------
    def request_similarity(self, metric: str) -> None:
        """Compare the text's and the added tokens by ``metric`` (cosine, dot,
        euclidean: the Similarity view's measure), now and whenever they change."""
        self._similarity_metric = metric
        self._update_similarity()

    def _update_similarity(self) -> None:
        table, metric, comp = self._table, self._similarity_metric, self.similarity
        if table is None or metric is None:
            comp.clear()
            return
        if not comp.wanted:
            comp.clear()  # nobody shows it: the view asks again when it is shown
            return
        ids = matrix_token_ids(self._tokenized.tokens, self._extra, table.vocab_size)
        key = (id(table), ids, metric)
        if comp.key == key and (comp.value is not None or comp.running):
            return
        if is_cheap(len(ids), table.dim):
            comp.publish(similarity_matrices(table, ids, metric), key=key)
        else:
            comp.request(similarity_job, table, ids, metric, key=key)
