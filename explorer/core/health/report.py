"""What a health check found: :class:`HealthReport` and its parts. No Qt here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from explorer.core.health.tables import ByteToken, UnreachableToken

__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "Flag",
    "FLAG_NAMES",
    "Reference",
    "Candidate",
    "HealthReport",
    "ScoreHistogram",
]

#: tokenizer round-trip categories, one per id (index = the code in
#: :attr:`HealthReport.categories`)
CATEGORIES = ("ok", "special", "unreachable", "undecodable", "no_piece", "no_row")
#: the same in words, for the screen
CATEGORY_LABELS = {
    "ok": "ok",
    "special": "special",
    "unreachable": "unreachable",
    "undecodable": "partial UTF-8",
    "no_piece": "no piece",
    "no_row": "no row",
}


class Flag:
    """Bits of :attr:`HealthReport.flags`: what is wrong with a row."""

    ZERO = 1
    NON_FINITE = 2
    EXACT_DUPLICATE = 4
    NEAR_DUPLICATE = 8
    LOW_NORM = 16
    HIGH_SCORE = 32
    #: the bits that make a row an under-trained candidate
    UNDER_TRAINED = ZERO | LOW_NORM | HIGH_SCORE


#: flag bit -> name, in the order they are reported
FLAG_NAMES = {
    Flag.ZERO: "zero",
    Flag.NON_FINITE: "non_finite",
    Flag.EXACT_DUPLICATE: "exact_duplicate",
    Flag.NEAR_DUPLICATE: "near_duplicate",
    Flag.LOW_NORM: "low_norm",
    Flag.HIGH_SCORE: "high_score",
}


@dataclass(frozen=True)
class Reference:
    """The rows taken as known to be untrained.

    Attributes
    ----------
    kind : str
        ``"unused_tokens"`` (the tokenizer's unused or reserved tokens),
        ``"model"`` (rows the model shows it never trained: bytes never in
        UTF-8, exact duplicates, unreachable tokens), ``"lowest_norm"`` (the
        input rows of lowest norm, for an untied or bare table) or
        ``"none"`` (a tied model that marks no row: no score).
    ids : tuple of int
    description : str
        In words, for the screen ("994 [unusedN] tokens").
    """

    kind: str
    ids: tuple[int, ...]
    description: str

    @property
    def count(self) -> int:
        return len(self.ids)

    @cached_property
    def id_array(self) -> np.ndarray:
        """:attr:`ids` as an int64 array, made once: from a tuple of 1,250,382 ints it takes 25 ms
        holding the GIL, and the health job asked for it two or three times."""
        return np.asarray(self.ids, np.int64)


@dataclass(frozen=True)
class Candidate:
    """One row of the ranked list of under-trained candidates.

    Attributes
    ----------
    rank : int
        0 for the most under-trained.
    id : int
    piece : str
        The tokenizer's piece ("<id>" without one).
    category : str
        One of :data:`CATEGORIES`.
    norm : float
        L2 norm of the row (NaN for a non-finite row).
    norm_z : float
        (norm - mean) / std over the rows with a finite, non-zero norm.
    score : float
        The Magikarp-style score: cosine with the mean reference row, both
        without their first-principal-component part (NaN when undefined).
    flagged : bool
        Beyond the chance threshold on one indicator, or all zero.
    flags : tuple of str
        Names from :data:`FLAG_NAMES`.
    duplicate_of : int or None
        Another row this one equals (exactly or nearly).
    corpus_count : int or None
        Times the token occurs in the corpus the table was trained on, where
        that corpus is known (the bundled model).
    """

    rank: int
    id: int
    piece: str
    category: str
    norm: float
    norm_z: float
    score: float
    flagged: bool
    flags: tuple[str, ...]
    duplicate_of: int | None
    corpus_count: int | None

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "piece": self.piece,
            "category": self.category,
            "norm": _finite_or_none(self.norm),
            "score": _finite_or_none(self.score),
            "norm_z": _finite_or_none(self.norm_z),
            "flagged": self.flagged,
            "flags": list(self.flags),
            "duplicate_of": self.duplicate_of,
            "corpus_count": self.corpus_count,
        }


def _finite_or_none(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _readonly(a: np.ndarray | None) -> np.ndarray | None:
    if a is not None:
        a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class ScoreHistogram:
    """Rows per score bin, for all rows and for the reference rows.

    Attributes
    ----------
    edges : ndarray (bins + 1,) float64
    counts, reference : ndarray (bins,) int64
    """

    edges: np.ndarray
    counts: np.ndarray
    reference: np.ndarray

    @classmethod
    def of(cls, scores: np.ndarray, reference_ids, max_bins: int = 120) -> ScoreHistogram | None:
        """2 sqrt(n) bins (10 to ``max_bins``) over the finite scores."""
        finite = scores[np.isfinite(scores)]
        if not len(finite):
            return None
        edges = np.histogram_bin_edges(finite, int(np.clip(2 * np.sqrt(len(finite)), 10, max_bins)))
        ref = scores[np.asarray(reference_ids, np.int64)]
        return cls(edges, np.histogram(finite, edges)[0], np.histogram(ref[np.isfinite(ref)], edges)[0])


@dataclass(frozen=True, eq=False)
class HealthReport:
    """Every row's indicators and every id's round-trip category.

    Arrays are read-only. ``V`` is the table's rows, ``N`` = max(V, the
    tokenizer's size).

    Attributes
    ----------
    spec, name, dtype : str
    vocab_size, dim : int
        The table's V and d.
    tokenizer_size : int
    seconds : float
        How long the check took.
    reference : Reference
    pc1 : ndarray (d,) float64
        The table's first principal component (unit length, sign arbitrary).
    norms : ndarray (V,) float64
        NaN for rows holding a non-finite value.
    norm_z : ndarray (V,) float64
    scores : ndarray (V,) float64
        Reference rows are scored against the mean of the *other* reference rows.
    flags : ndarray (V,) uint8
        :class:`Flag` bits.
    duplicate_of : ndarray (V,) int64
        The lowest other row equal (or nearly) to this one; -1 for none.
    categories : ndarray (N,) int8
        Index into :data:`CATEGORIES`.
    order : ndarray (V,) int64
        Row ids, most under-trained first.
    z_threshold : float
        A robust z beyond which an indicator flags a row (by chance, a table of
        random rows passes it ``expected_by_chance`` times on average).
    norm_threshold, score_threshold : float
        The same threshold as a norm (rows below are flagged) and as a score
        (rows above are flagged); NaN when too few rows to tell.
    expected_by_chance : float
    corpus_counts : ndarray (V,) int64 or None
        Occurrences of each row's token in the training corpus, -1 when the
        token is not in it; None when the corpus is not known.
    histogram : ScoreHistogram or None
        The scores binned (None when no row has a score).
    notes : tuple of str
    side : str
        Which matrix was scored: ``"output"`` (the model's own output
        matrix; ``norms`` are then the input rows'), ``"shared"`` (tied: one
        matrix for both ends) or ``"input"`` (no output matrix).
    tied : bool or None
    output_norms : ndarray (V,) float64 or None
        Norms of the output rows when ``side`` is ``"output"``.
    candidates : ndarray (C,) int64
        The top :data:`~explorer.core.health.job.CANDIDATE_SHARE` of the
        ranking of reachable tokens: the ones to verify.
    byte_tokens : tuple of ByteToken
        Tokens of a single byte, in id order.
    unreachable : tuple of UnreachableToken
        Tokens no text encodes to, with what their text encodes to.
    contained : Mapping[int, tuple of int]
        For the leading candidates, longer tokens (of higher id) that contain them.
    round_trip_checked : bool
        False when the table has no tokenizer (ids are typed as numbers): there
        was no round trip to check, and ``categories`` only says which ids have rows.
    """

    spec: str
    name: str
    dtype: str
    vocab_size: int
    dim: int
    tokenizer_size: int
    seconds: float
    reference: Reference
    pc1: np.ndarray
    norms: np.ndarray
    norm_z: np.ndarray
    scores: np.ndarray
    flags: np.ndarray
    duplicate_of: np.ndarray
    categories: np.ndarray
    order: np.ndarray
    z_threshold: float
    norm_threshold: float
    score_threshold: float
    expected_by_chance: float
    corpus_counts: np.ndarray | None = None
    histogram: ScoreHistogram | None = None
    notes: tuple[str, ...] = ()
    side: str = "input"
    tied: bool | None = None
    output_norms: np.ndarray | None = None
    candidates: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    byte_tokens: tuple[ByteToken, ...] = ()
    unreachable: tuple[UnreachableToken, ...] = ()
    contained: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    round_trip_checked: bool = True

    def __post_init__(self):
        for name in ("pc1", "norms", "norm_z", "scores", "flags", "duplicate_of", "categories", "order",
                     "corpus_counts", "output_norms", "candidates"):
            _readonly(getattr(self, name))
        object.__setattr__(self, "notes", tuple(self.notes))

    # -- counts -------------------------------------------------------------------
    def category_counts(self) -> dict[str, int]:
        """Ids per round-trip category (every category, zeros included)."""
        counts = np.bincount(self.categories.astype(np.int64), minlength=len(CATEGORIES))
        return {name: int(counts[i]) for i, name in enumerate(CATEGORIES)}

    def flag_counts(self) -> dict[str, int]:
        """Rows per condition, plus ``under_trained`` (the flagged candidates)."""
        out = {name: int(np.count_nonzero(self.flags & bit)) for bit, name in FLAG_NAMES.items()}
        out["under_trained"] = self.flagged_count
        return out

    @property
    def flagged(self) -> np.ndarray:
        """Ids of the under-trained candidates, most under-trained first."""
        bad = (self.flags[self.order] & Flag.UNDER_TRAINED) != 0
        return self.order[bad]

    @property
    def flagged_count(self) -> int:
        return int(np.count_nonzero(self.flags & Flag.UNDER_TRAINED))

    def category_of(self, token_id: int) -> str:
        return CATEGORIES[int(self.categories[token_id])]

    # -- the lists ----------------------------------------------------------------
    @property
    def ranked(self) -> np.ndarray:
        """The ranking of the tokens a text can reach (round trip ``ok``),
        most under-trained first; special, unreachable and partial-UTF-8
        tokens are listed apart (:meth:`ids_in`)."""
        return self.order[self.categories[self.order] == CATEGORIES.index("ok")]

    def ids_in(self, category: str) -> np.ndarray:
        """Row ids of one round-trip category, in id order."""
        cats = self.categories[: self.vocab_size]
        return np.nonzero(cats == CATEGORIES.index(category))[0]

    # -- candidates ---------------------------------------------------------------
    def candidate(self, rank: int, pieces: Sequence[str] | None = None, piece: str | None = None) -> Candidate:
        """The row at ``rank`` of :attr:`order` as a :class:`Candidate`."""
        i = int(self.order[rank])
        return self._candidate(i, rank, piece if piece is not None else (pieces[i] if pieces is not None else f"<{i}>"))

    def _candidate(self, i: int, rank: int, piece: str) -> Candidate:
        bits = int(self.flags[i])
        dup = int(self.duplicate_of[i])
        return Candidate(
            rank=int(rank),
            id=i,
            piece=piece,
            category=self.category_of(i),
            norm=float(self.norms[i]),
            norm_z=float(self.norm_z[i]),
            score=float(self.scores[i]),
            flagged=bool(bits & Flag.UNDER_TRAINED),
            flags=tuple(name for bit, name in FLAG_NAMES.items() if bits & bit),
            duplicate_of=dup if dup >= 0 else None,
            corpus_count=(int(self.corpus_counts[i]) if self.corpus_counts is not None
                          and self.corpus_counts[i] >= 0 else None),
        )

    def top(self, n: int, piece_of) -> list[Candidate]:
        """The ``n`` most under-trained reachable tokens (:attr:`ranked`);
        ``piece_of(id)`` names them. ``Candidate.rank`` is the place in that
        ranking."""
        ranked = self.ranked[: max(0, int(n))]
        return [self._candidate(int(i), r, piece_of(int(i))) for r, i in enumerate(ranked)]

    def as_json(self, top: int, piece_of, shown_of=None) -> dict:
        """What ``health --json`` prints (strict JSON: no NaN); ``shown_of(id)``,
        when given, adds each candidate's readable piece as ``shown``."""
        return {
            "model": self.spec,
            "name": self.name,
            "vocab_size": self.vocab_size,
            "dim": self.dim,
            "dtype": self.dtype,
            "tokenizer_size": self.tokenizer_size,
            "seconds": self.seconds,
            "reference": {"kind": self.reference.kind, "count": self.reference.count,
                          "description": self.reference.description},
            "categories": self.category_counts(),
            "round_trip_checked": self.round_trip_checked,
            "rows": self.flag_counts(),
            "thresholds": {
                "z": self.z_threshold,
                "norm_below": _finite_or_none(self.norm_threshold),
                "score_above": _finite_or_none(self.score_threshold),
                "expected_by_chance": self.expected_by_chance,
            },
            "notes": list(self.notes),
            "scored_matrix": self.side,
            "tied": self.tied,
            "candidate_cut": {"share": len(self.candidates) / max(1, len(self.ranked)),
                              "count": int(len(self.candidates))},
            "candidates": [dict(c.as_json(), contained_in=list(self.contained.get(c.id, ())),
                                **({"shown": shown_of(c.id)} if shown_of else {}))
                           for c in self.top(top, piece_of)],
            "special": [{"id": int(i), "piece": piece_of(int(i))} for i in self.ids_in("special")],
            "unreachable": [dict(u.as_json(), piece=piece_of(u.id)) for u in self.unreachable],
            "partial_utf8": [{"id": int(i), "piece": piece_of(int(i))} for i in self.ids_in("undecodable")],
            "byte_tokens": [b.as_json() for b in self.byte_tokens],
        }
