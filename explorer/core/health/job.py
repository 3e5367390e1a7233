"""The health check as one job for a worker: :func:`iter_health`. No Qt here.

Steps, each with progress and a chance to stop:

1. the tokenizer's round trip over its whole vocabulary, and its
   single-byte tokens;
2. the matrix to score: the output matrix (unembedding) when the model has
   one of its own, else the shared or input table; the tokenizer's unused
   tokens as the reference, and the first principal component of a sample
   of rows;
3. one streamed pass over that matrix
   (:func:`explorer.core.geometry.scan.iter_scan`): norms, the products
   with the component (and the reference mean, when known), and a 16-number
   sketch of each row for the duplicate search; the input table's norms
   (a second pass when the output matrix is another one);
4. without unused tokens, the rows the model shows it never trained (bytes
   never in UTF-8, exact duplicates, unreachable tokens) become the
   reference, or, for an untied model, the input rows of lowest norm; a
   second pass measures the products with their mean;
5. scores, thresholds, the ranking of the tokens a text can reach, the
   candidates (the top :data:`CANDIDATE_SHARE` of that ranking), the lists
   kept apart (special, unreachable, partial UTF-8, single bytes) and the
   longer tokens containing each leading candidate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np

from explorer.core.arrays import object_array, release_objects
from explorer.core.geometry.scan import cached_row_norms, iter_scan
from explorer.core.health.duplicates import iter_duplicates, sketch_directions
from explorer.core.health.indicators import CHANCE, MIN_DIMS, magikarp_scores, plain_z, reference_scores, thresholds
from explorer.core.health.lesson import training_counts
from explorer.core.health.reference import (
    first_principal_component,
    iter_unused_reference,
    lowest_norm_reference,
    model_reference,
    pca_sample_ids,
    reference_mean,
)
from explorer.core.health.report import CATEGORIES, Flag, HealthReport, Reference, ScoreHistogram
from explorer.core.health.roundtrip import iter_token_categories
from explorer.core.health.tables import iter_byte_tokens, iter_contained_in, unreachable_tokens
from explorer.core.health.text import SIDE_NOTES
from explorer.core.jobs import run_to_end, scaled
from explorer.core.runtime import limit_torch_threads
from explorer.core.tokens.tokenize import IdTokenizer

__all__ = ["iter_health", "health_report", "CANDIDATE_SHARE", "CONTAINED_FOR"]

#: candidates for verification: this share of the reachable tokens, from the top of the ranking (Magikarp's 2 %)
CANDIDATE_SHARE = 0.02
#: leading candidates for which the longer tokens containing them are listed
CONTAINED_FOR = 200


def _scan(table, directions: np.ndarray | None, sketch_dirs: np.ndarray | None, lo: float, hi: float, what: str):
    """Norms, products and sketches of every row of ``table`` (a generator
    yielding progress from ``lo`` to ``hi``; returns the three arrays)."""
    v = table.vocab_size
    k = 0 if directions is None else len(directions)
    norms = np.empty(v, np.float64)
    products = np.empty((v, k), np.float64)
    sketch = None if sketch_dirs is None else np.empty((v, len(sketch_dirs)), np.float32)
    for blk in iter_scan(table, directions if k else None, rough=sketch_dirs):
        n = len(blk.norms)
        norms[blk.start : blk.start + n] = blk.norms
        if k:
            products[blk.start : blk.start + n] = blk.products
        if sketch is not None:
            sketch[blk.start : blk.start + n] = blk.rough
        done = blk.start + n
        yield lo + (hi - lo) * done / v, f"{what}… {done:,} of {v:,}"
    cached = cached_row_norms(table)
    return (cached if cached is not None else norms), products, sketch


def iter_health(table) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a :class:`HealthReport`.

    Parameters
    ----------
    table : EmbeddingTable
        Any table; a bfloat16 file is streamed through a memory map and
        never held as float32 whole. Its output matrix, when it has one of
        its own, is read the same way.
    """
    t0 = time.perf_counter()
    limit_torch_threads()
    v, d = table.vocab_size, table.dim
    yield 0.0, "Checking the tokenizer…"
    categories = yield from scaled(iter_token_categories(table.tokenizer, v), 0.0, 0.2)
    n_pieces = min(v, int(table.tokenizer.vocab_size))
    pieces = object_array((table.piece(i) for i in range(n_pieces)), n_pieces)
    try:
        bytes_ = yield from scaled(iter_byte_tokens(pieces, table.tokenizer.family), 0.2, 0.205)

        output = table.output_table()
        scored = output if output is not None else table
        side = "shared" if output is table else ("output" if output is not None else "input")
        two = side == "output"
        # the reference, known before the pass where it can be: the tokenizer's unused tokens, else the rows the
        # tokenizer shows no text reaches (bytes never in UTF-8, unreachable tokens); exact duplicates need the pass
        unreachable_ids = np.nonzero(categories[:v] == CATEGORIES.index("unreachable"))[0]
        never = np.asarray([b.id for b in bytes_ if b.kind == "never in UTF-8"], np.int64)
        reference = (yield from scaled(iter_unused_reference(pieces), 0.205, 0.21)) \
            or model_reference(never, np.empty(0, np.int64), unreachable_ids, v)
        norms_in = None
        if two:
            norms_in = cached_row_norms(table)
            if norms_in is None:
                norms_in, _, _ = yield from _scan(table, None, None, 0.2, 0.4, "Measuring the input rows")
            if reference is None:  # for now: exact duplicates of the output rows, if any, come first (below)
                reference = lowest_norm_reference(norms_in, _valid(norms_in))
        yield 0.42, "Finding the first principal component…"
        pc1 = first_principal_component(scored.rows(pca_sample_ids(v, d)))
        mean = reference_mean(scored.rows(reference.id_array), pc1) if reference is not None else None

        directions = np.stack([pc1] if mean is None else [pc1, mean])
        norms_s, products, sketch = yield from _scan(scored, directions, sketch_directions(d), 0.45, 0.8,
                                                     "Measuring rows")
        norms_in = norms_s if norms_in is None else norms_in
        valid_s, valid_in = _valid(norms_s), _valid(norms_in)
        dups = yield from scaled(iter_duplicates(scored, sketch, norms_s, valid_s), 0.8, 0.84)

        if reference is None or reference.kind == "lowest_norm":
            by_model = model_reference(never, np.nonzero(dups.exact)[0], unreachable_ids, v)
            if by_model is not None:
                reference, mean = by_model, None
        if reference is None and table.tied is not True:
            reference = lowest_norm_reference(norms_in, valid_in)
        if reference is not None and mean is None and reference.count:
            mean = reference_mean(scored.rows(reference.id_array), pc1)
            along_mean = np.empty(v, np.float64)
            for blk in iter_scan(scored, mean[None, :]):
                along_mean[blk.start : blk.start + len(blk.norms)] = blk.products[:, 0]
                done = blk.start + len(blk.norms)
                yield 0.84 + 0.04 * done / v, f"Comparing rows with the reference… {done:,} of {v:,}"
        else:
            along_mean = products[:, 1] if mean is not None else np.full(v, np.nan)
        if reference is None:
            reference = Reference("none", (), "no rows are known to be untrained, and in a tied model the rows of "
                                              "lowest norm are its most frequent tokens: no score")

        yield 0.88, "Scoring and ranking…"
        mean_norm = float(np.linalg.norm(mean)) if mean is not None else 0.0
        scores = magikarp_scores(norms_s, products[:, 0], along_mean, mean_norm)
        ref_ids = reference.id_array
        if len(ref_ids):
            scores[ref_ids] = reference_scores(scored.rows(ref_ids), pc1)
        scores[~valid_s] = np.nan
        bar = thresholds(norms_in, scores, valid_in, dim=d)
        flags = _flags(norms_in, scores, valid_in, bar, low_norm_counts=table.tied is not True)
        flags[dups.exact] |= Flag.EXACT_DUPLICATE
        flags[dups.near] |= Flag.NEAR_DUPLICATE
        first = (flags & (Flag.ZERO | Flag.NON_FINITE)) != 0
        # a tied model without a reference keeps id order: its low-norm rows are its frequent tokens
        # rows of one or two values: the score tells no rows apart, the norm ranks them (untied)
        by_score = (reference.count > 0 and d >= MIN_DIMS) or table.tied is True
        order = _ranking(scores, bar.norm_z, first, by_score=by_score)
        reachable = categories[order] == CATEGORIES.index("ok")
        ranked = order[reachable]
        cut = ranked[: math.ceil(CANDIDATE_SHARE * len(ranked))] if len(ranked) else ranked
        unreachable = unreachable_tokens(table.tokenizer, unreachable_ids)
        contained = (yield from scaled(iter_contained_in(pieces, cut[:CONTAINED_FOR].tolist()), 0.9, 0.96)) \
            if len(pieces) else {}
        notes = _notes(table, reference, valid_in, dups.truncated, side)
        yield 0.97, "Counting the corpus…"
        counts = training_counts(table)
        return HealthReport(
            spec=table.spec, name=table.name, dtype=str(table.dtype), vocab_size=v, dim=d,
            tokenizer_size=int(table.tokenizer.vocab_size), seconds=time.perf_counter() - t0,
            reference=reference, pc1=pc1, norms=norms_in, norm_z=plain_z(norms_in, valid_in), scores=scores,
            flags=flags, duplicate_of=dups.duplicate_of, categories=categories, order=order,
            z_threshold=bar.z, norm_threshold=bar.norm_below, score_threshold=bar.score_above,
            expected_by_chance=CHANCE, corpus_counts=counts, histogram=ScoreHistogram.of(scores, ref_ids),
            notes=tuple(notes), side=side, tied=table.tied, output_norms=norms_s if two else None,
            candidates=cut, byte_tokens=tuple(bytes_), unreachable=tuple(unreachable), contained=contained,
            round_trip_checked=not isinstance(table.tokenizer, IdTokenizer),
        )
    except GeneratorExit:  # cancelled (closed in its worker's thread): its vocabulary of strings goes a slice
        release_objects(pieces)  # at a time, not in one 131 ms hold of the GIL (10,000,000 pieces)
        raise


def health_report(table) -> HealthReport:
    """:func:`iter_health` run to the end (for the command line and tests)."""
    return run_to_end(iter_health(table))


def _valid(norms: np.ndarray) -> np.ndarray:
    return np.isfinite(norms) & (norms > 0)


def _flags(norms, scores, valid, bar, low_norm_counts: bool) -> np.ndarray:
    flags = np.zeros(len(norms), np.uint8)
    flags[norms == 0] |= Flag.ZERO
    flags[np.isnan(norms)] |= Flag.NON_FINITE
    with np.errstate(invalid="ignore"):
        if low_norm_counts:
            flags[valid & (norms < bar.norm_below)] |= Flag.LOW_NORM
        flags[valid & (scores > bar.score_above)] |= Flag.HIGH_SCORE
    return flags


def _ranking(scores: np.ndarray, norm_z: np.ndarray, first: np.ndarray, by_score: bool) -> np.ndarray:
    """Row ids, most under-trained first: all-zero and non-finite rows, then
    by score (cosine with the untrained rows' mean) when there is a
    reference, else by how far the input norm is below the typical one;
    rows without either last, in id order."""
    key = scores if by_score else -norm_z
    key = np.where(np.isnan(key), -np.inf, key)
    key = np.where(first, np.inf, key)
    return np.argsort(-key, kind="stable").astype(np.int64)


def _notes(table, reference: Reference, valid: np.ndarray, truncated: bool, side: str) -> list[str]:
    notes = []
    rows = int(valid.sum())
    if side in SIDE_NOTES:
        notes.append(SIDE_NOTES[side])
    if rows < 16:
        notes.append(f"Only {rows} rows with a finite, non-zero norm: too few to say what is typical, so "
                     "only all-zero, non-finite and duplicate rows are flagged.")
    if table.trained_rows < table.vocab_size:
        notes.append(f"Rows {table.trained_rows:,} to {table.vocab_size - 1:,} have no token in the tokenizer "
                     "(padding rows): no text selects them.")
    if truncated:
        notes.append("More pairs of near-equal rows than could be checked; some duplicates may be missing.")
    return notes
