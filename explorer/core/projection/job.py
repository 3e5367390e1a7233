"""The projection job: choose the rows to fit a PCA on, read them, fit, and
hand back plain arrays (no Qt here).

The fit set is stated to the user:

* ``all``: the whole (trained) vocabulary, the default when it has at most
  :data:`WHOLE_VOCAB_LIMIT` rows;
* ``sample``: a seeded random sample of ``sample_size`` trained rows plus all
  tokens of interest (the text's tokens, their neighbours, added tokens);
* ``chosen``: only the tokens of interest.

Tokens that were not fitted (added later) are placed with the fitted
components: ``(row - mean) @ components.T``; PCA is affine, so that is the
same map the fitted points went through.

A fit set of more than :data:`MAX_DRAWN` rows (the whole of a 10,000,000-row
table, asked for) is fitted whole, and a seeded random :data:`MAX_DRAWN` of
them, with the tokens of interest, are the result's points: the description
says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.geometry.nearest import Neighbor, iter_neighbors_many
from explorer.core.geometry.vectors import pca_project, row_products
from explorer.core.jobs import run_to_end

__all__ = [
    "WHOLE_VOCAB_LIMIT",
    "MAX_DRAWN",
    "drawn_points",
    "at_most",
    "DEFAULT_SAMPLE",
    "N_COMPONENTS",
    "FitSet",
    "ProjectionResult",
    "choose_fit_set",
    "projection_job",
    "read_fit_rows",
    "indices_in",
    "tokens_of_interest",
    "TokensOfInterest",
    "interest_job",
    "variance_shown",
]

#: at most this many trained rows: fit on the whole vocabulary by default
WHOLE_VOCAB_LIMIT = 60_000
#: default size of the random sample for bigger tables
DEFAULT_SAMPLE = 20_000
N_COMPONENTS = 10
_BLOCK = 16384
#: at most this many points in a result (a vocabulary of 262,144 tokens shows whole): the window draws, colours
#: and filters each point on its own thread, and the whole of a 10,000,000-row table stood it still 3 s
MAX_DRAWN = 262_144


@dataclass(frozen=True)
class FitSet:
    """The rows a PCA is fitted on.

    Attributes
    ----------
    mode : str
        ``all``, ``sample`` or ``chosen``.
    ids : ndarray (n,) int64, sorted, unique
    description : str
        One sentence for the user ("whole vocabulary: 30,522 rows").
    """

    mode: str
    ids: np.ndarray
    description: str


@dataclass(frozen=True, eq=False)
class ProjectionResult:
    """What the projection job hands to the view.

    Attributes
    ----------
    spec : str
        The table's spec (a result for another table is stale).
    mode : str
        The fit set's mode.
    ids : ndarray (n,) int64
        Fitted token ids, sorted.
    coords : ndarray (n, k) float32
        Their coordinates on the first k principal components.
    explained : ndarray (k,) float64
        Explained variance ratio of each component (0..1).
    components : ndarray (k, d) float32
    mean : ndarray (d,) float32
    description : str
        The fit set in words.
    seconds : float
        Time spent reading and fitting.
    axis_names : tuple of str
        Names of the axes when they are not principal components (custom
        axes, :mod:`explorer.core.projection.custom_axes`); empty for a PCA.
    """

    spec: str
    mode: str
    ids: np.ndarray
    coords: np.ndarray
    explained: np.ndarray
    components: np.ndarray
    mean: np.ndarray
    description: str
    seconds: float = 0.0
    axis_names: tuple[str, ...] = ()

    #: an affine map of the rows: its axes are components (PC1…) or named directions; every
    #: layout result says ``linear``, so a view never asks which class it holds
    linear = True
    #: a PCA or axes result is final as it arrives (a t-SNE frame may not be)
    done = True

    @property
    def custom_axes(self) -> bool:
        """Named directions (a → b), not principal components."""
        return bool(self.axis_names)

    def as_json(self, dims: int) -> dict:
        """The layout for ``project --json``: ``ids``, ``coords`` on the first ``dims``
        components, ``fit``, ``explained`` and ``cached`` (false: a PCA is computed, never cached)."""
        return {"ids": [int(i) for i in self.ids], "coords": [[float(v) for v in row] for row in self.coords[:, :dims]],
                "fit": self.description, "explained": [float(v) for v in self.explained[:dims]], "cached": False}

    def axis_name(self, k: int) -> str:
        """``PC1``… for a PCA, the direction's name for custom axes."""
        return self.axis_names[k] if k < len(self.axis_names) else f"PC{k + 1}"

    @property
    def n_components(self) -> int:
        return int(self.coords.shape[1]) if self.coords.ndim == 2 else 0

    @property
    def method(self) -> str:
        """``pca``: an affine map (see :mod:`explorer.core.projection.manifold` for the others)."""
        return "pca"

    def index_of(self, token_id: int) -> int:
        """Position of ``token_id`` in :attr:`ids`, or -1 when it was not fitted."""
        return int(self.indices_of([token_id])[0])

    def indices_of(self, ids: Sequence[int]) -> np.ndarray:
        """Positions (m,) int64 of ``ids`` in :attr:`ids` (sorted), -1 where not fitted."""
        return indices_in(self.ids, ids)

    def transform(self, rows: np.ndarray) -> np.ndarray:
        """Project rows (m, d) with the fitted components -> (m, k) float32 (the window's thread calls
        this: numpy's own loops, see :func:`~explorer.core.geometry.vectors.row_products`)."""
        rows = np.asarray(rows, np.float32).reshape(-1, self.mean.shape[0])
        rows = np.where(np.isfinite(rows), rows, 0.0)
        return row_products(rows - self.mean, self.components).astype(np.float32)

    def coords_of(self, table, ids: Sequence[int]) -> np.ndarray:
        """Coordinates (m, k) of any token ids: fitted ones looked up, the
        others projected with the fitted components."""
        ids = np.asarray(ids, np.int64).reshape(-1)
        pos = self.indices_of(ids)
        out = np.zeros((len(ids), self.n_components), np.float32)
        fitted = pos >= 0
        out[fitted] = self.coords[pos[fitted]]
        if not fitted.all():
            out[~fitted] = self.transform(table.rows(ids[~fitted]))
        return out


def indices_in(sorted_ids: np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """Positions (m,) int64 of ``ids`` in ``sorted_ids`` (sorted, unique), -1 where absent."""
    ids = np.asarray(ids, np.int64).reshape(-1)
    if not len(sorted_ids):
        return np.full(len(ids), -1, np.int64)
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return np.where(sorted_ids[pos] == ids, pos, -1).astype(np.int64)


def _clean_ids(table, ids: Sequence[int]) -> np.ndarray:
    arr = np.asarray([int(i) for i in ids], dtype=np.int64).reshape(-1)
    arr = arr[(arr >= 0) & (arr < table.vocab_size)]
    return unique_sorted(arr)


def choose_fit_set(
    table,
    mode: str = "auto",
    sample_size: int = DEFAULT_SAMPLE,
    interest: Sequence[int] = (),
    seed: int = 0,
) -> FitSet:
    """Which rows to fit the PCA on.

    Parameters
    ----------
    table : EmbeddingTable
    mode : ``auto`` (``all`` when trained_rows <= 60,000, else ``sample``),
        ``all``, ``sample`` or ``chosen``.
    sample_size : rows drawn at random (seeded) in ``sample`` mode.
    interest : token ids always fitted in ``sample`` mode and the only ones
        in ``chosen`` mode; out-of-range ids are dropped.
    """
    trained = int(table.trained_rows)
    if mode == "auto":
        mode = "all" if trained <= WHOLE_VOCAB_LIMIT else "sample"
    interest_ids = _clean_ids(table, interest)
    if mode == "all":
        ids = np.arange(trained, dtype=np.int64)
        desc = f"whole vocabulary: {trained:,} rows"
        if trained < table.vocab_size:
            desc += f" ({table.vocab_size - trained:,} untrained padding rows left out)"
        return FitSet("all", ids, desc)
    if mode == "sample":
        n = max(1, int(sample_size))
        ids = table.sample_ids(n, seed=seed, include=interest_ids)
        if n >= trained:
            return FitSet("sample", ids, f"the whole vocabulary ({trained:,} rows; the sample size covers it)")
        added = len(ids) - n
        desc = f"random sample of {n:,} of {trained:,} rows (seed {seed})"
        if added:
            desc += f" + {added:,} tokens of interest"
        elif len(interest_ids):
            desc += ", tokens of interest already in it"
        return FitSet("sample", ids, desc)
    if mode == "chosen":
        return FitSet("chosen", interest_ids, f"only the {len(interest_ids):,} chosen tokens")
    raise ValueError(f"unknown fit set {mode!r}; use auto, all, sample or chosen")


def read_fit_rows(table, fit: FitSet, start: float = 0.0, stop: float = 1.0) -> Iterator[tuple[float, str]]:
    """Read the rows of ``fit`` (a generator for a worker: yields progress
    from ``start`` to ``stop``); returns them, (n, d) float32 in the order of ``fit.ids``."""
    n, d = len(fit.ids), int(table.dim)
    rows = np.empty((n, d), np.float32)
    span = stop - start
    contiguous = fit.mode == "all" or (n > 0 and fit.ids[-1] - fit.ids[0] + 1 == n)
    if contiguous and n:
        start0 = int(fit.ids[0])
        end = int(fit.ids[-1]) + 1
        if table.fits_in_memory:  # held (or cached by this read) whole: one copy
            rows[:] = table.matrix()[start0:end]
        else:
            for first, blk in table.iter_blocks(_BLOCK, stop=end):
                if first + len(blk) <= start0:
                    continue
                lo = max(first, start0)
                rows[lo - start0 : first + len(blk) - start0] = blk[lo - first :]
                yield start + span * (first + len(blk) - start0) / n, "Reading rows…"
    else:
        for s in range(0, n, _BLOCK):
            rows[s : s + _BLOCK] = table.rows(fit.ids[s : s + _BLOCK])
            yield start + span * min(1.0, (s + _BLOCK) / n), "Reading rows…"
    return rows


def projection_job(
    table,
    mode: str = "auto",
    sample_size: int = DEFAULT_SAMPLE,
    interest: Sequence[int] = (),
    n_components: int = N_COMPONENTS,
    seed: int = 0,
    max_points: int | None = MAX_DRAWN,
) -> Iterator[tuple[float, str]]:
    """PCA of a fit set of ``table``'s rows (a generator for a worker).

    Yields ``(fraction, message)``; returns a :class:`ProjectionResult` of at most ``max_points`` points
    and the tokens of interest (:func:`drawn_points`; None: every fitted row, as the command line writes).
    Raises ValueError when the fit set has fewer than 2 rows.
    """
    import time

    t0 = time.perf_counter()
    fit = choose_fit_set(table, mode, sample_size, interest, seed)
    n = len(fit.ids)
    if n < 2:
        raise ValueError("a projection needs at least 2 tokens; add some tokens or fit on the vocabulary")
    yield 0.02, f"Reading {n:,} rows for PCA…"
    rows = yield from read_fit_rows(table, fit, 0.02, 0.5)
    yield 0.5, f"Fitting PCA on {n:,} × {int(table.dim):,}…"
    proj = pca_project(rows, ids=fit.ids, n_components=n_components, seed=seed)
    del rows
    ids, coords, description = at_most(max_points, proj.ids, proj.coords, fit.description,
                                       _clean_ids(table, interest), seed)
    yield 1.0, "Done"
    return ProjectionResult(
        spec=getattr(table, "spec", ""),
        mode=fit.mode,
        ids=ids,
        coords=coords,
        explained=proj.explained,
        components=proj.components,
        mean=proj.mean,
        description=description,
        seconds=time.perf_counter() - t0,
    )


def at_most(max_points: int | None, ids: np.ndarray, coords: np.ndarray, description: str, interest: np.ndarray,
            seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """``ids``, ``coords`` and ``description`` of a result, down to ``max_points`` points and ``interest``
    (:func:`drawn_points`) when there are more, the description saying so; None: all of them."""
    if max_points is None or len(ids) <= max_points:
        return ids, coords, description
    drawn = drawn_points(ids, max_points, interest, seed)
    added = len(drawn) - max_points
    said = f"{description}; drawn: a random {max_points:,} of them (seed {seed})" + (
        f" and {added:,} more token{'s' if added > 1 else ''} of interest" if added else "")
    return ids[drawn], np.ascontiguousarray(coords[drawn]), said


def drawn_points(ids: np.ndarray, n: int, interest: np.ndarray, seed: int = 0) -> np.ndarray:
    """Positions in ``ids`` (sorted) of a seeded random ``n`` of them and of every id in ``interest``, in order."""
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(ids), size=min(n, len(ids)), replace=False)
    found = indices_in(ids, interest)
    return unique_sorted(np.concatenate([picked.astype(np.int64), found[found >= 0]]))


def tokens_of_interest(table, text_ids: Sequence[int], extra_ids: Sequence[int], k: int = 3,
                       max_text: int = 64) -> TokensOfInterest:
    """The text's tokens, their ``k`` nearest neighbours and the added tokens (:func:`interest_job`
    run to its end)."""
    return run_to_end(interest_job(table, text_ids, extra_ids, k=k, max_text=max_text))


def interest_job(table, text_ids: Sequence[int], extra_ids: Sequence[int], k: int = 3,
                 max_text: int = 64) -> Iterator[tuple[float, str]]:
    """Generator for a worker: the text's tokens, their ``k`` nearest neighbours and the added tokens,
    yielding progress after each block of rows searched (cancelled there: 64 tokens of a 10,000,000-row
    table took 15 s in one step).

    Neighbours are searched only when the table's unit matrix is in memory
    (a block of rows at a time, every text token at once); otherwise there are none.

    Returns
    -------
    TokensOfInterest
        ``text``, ``neighbors`` and ``extra`` hold unique ids in order, no id
        in two groups (text first, then extra, then neighbours); ``nearest``
        keeps each text token's own k neighbours with their cosines.
    """
    yield 0.0, "Finding the neighbours of the text's tokens…"
    v = table.vocab_size
    text = list(dict.fromkeys(int(i) for i in text_ids if 0 <= int(i) < v))[:max_text]
    extra = [i for i in dict.fromkeys(int(i) for i in extra_ids if 0 <= int(i) < v) if i not in text]
    neighbors: list[int] = []
    nearest: dict[int, tuple[Neighbor, ...]] = {}
    unit = table.unit_matrix() if hasattr(table, "unit_matrix") else None
    trained_text = [i for i in text if i < table.trained_rows]
    if unit is not None and trained_text and k > 0:
        # a block of rows at a time: one product with the whole table made a (text, V) matrix of scores and
        # two more of its size (64 tokens of a 10,000,000-row table: 10 GB)
        found_all = yield from iter_neighbors_many(table, unit[trained_text], k, [[tid] for tid in trained_text])
        taken = set(text) | set(extra)
        for tid, found in zip(trained_text, found_all):
            nearest[tid] = tuple(found)
            for nb in found:
                if nb.id not in taken:
                    taken.add(nb.id)
                    neighbors.append(nb.id)
    return TokensOfInterest(tuple(text), tuple(neighbors), tuple(extra),
                            tuple(nearest.get(i, ()) for i in text))


@dataclass(frozen=True)
class TokensOfInterest:
    """The tokens the projection labels: the text's, their nearest neighbours
    and the ones the user added; no id in two groups.

    Attributes
    ----------
    text, neighbors, extra : tuple of int
        In order of first appearance.
    nearest : tuple of tuple of Neighbor
        For each text token (same order as ``text``), its own nearest rows
        by cosine, best first; empty when they were not searched.
    """

    text: tuple[int, ...] = ()
    neighbors: tuple[int, ...] = ()
    extra: tuple[int, ...] = ()
    nearest: tuple[tuple[Neighbor, ...], ...] = ()

    def all_ids(self) -> list[int]:
        """Every id of interest, sorted (the fit set of the ``chosen`` mode)."""
        return sorted(set(self.text) | set(self.neighbors) | set(self.extra))


def variance_shown(explained: Sequence[float], x: int, y: int) -> float:
    """Share of the variance on the plane of components ``x`` and ``y`` (0-based).

    Components are orthogonal, so their shares add, but a component drawn on
    both axes counts once; a component that does not exist counts 0.
    """
    ev = np.asarray(explained, np.float64)
    return float(sum(ev[k] for k in {int(x), int(y)} if 0 <= k < len(ev)))
