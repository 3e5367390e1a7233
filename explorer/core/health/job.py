"""The health check as one job for a worker: :func:`iter_health`. No Qt here.

Steps, each with progress and a chance to stop:

1. the tokenizer's round trip over its whole vocabulary;
2. the reference rows (the tokenizer's unused tokens) and the first
   principal component of a sample of rows;
3. one streamed pass over the table (:func:`explorer.core.geometry.scan.iter_scan`):
   norms, the products with the component and the reference mean, and a
   16-number sketch of each row for the duplicate search;
4. without unused tokens, the rows of lowest norm become the reference and
   a second pass measures the products with their mean;
5. scores, thresholds, duplicates, the ranking.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from explorer.core.geometry.scan import cached_row_norms, iter_scan
from explorer.core.health.duplicates import find_duplicates, sketch_directions
from explorer.core.health.indicators import CHANCE, magikarp_scores, plain_z, ranking, reference_scores, thresholds
from explorer.core.health.lesson import training_counts
from explorer.core.health.reference import (
    first_principal_component,
    lowest_norm_reference,
    pca_sample_ids,
    reference_mean,
    unused_reference,
)
from explorer.core.health.report import Flag, HealthReport, Reference, ScoreHistogram
from explorer.core.health.roundtrip import iter_token_categories
from explorer.core.jobs import run_to_end, scaled
from explorer.core.runtime import limit_torch_threads

__all__ = ["iter_health", "health_report"]


def iter_health(table) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a :class:`HealthReport`.

    Parameters
    ----------
    table : EmbeddingTable
        Any table; a bfloat16 file is streamed through a memory map and
        never held as float32 whole.
    """
    t0 = time.perf_counter()
    limit_torch_threads()
    v, d = table.vocab_size, table.dim
    yield 0.0, "Checking the tokenizer…"
    categories = yield from scaled(iter_token_categories(table.tokenizer, v), 0.0, 0.25)

    yield 0.25, "Finding the first principal component…"
    reference = unused_reference(table.tokenizer, v)
    known_norms = cached_row_norms(table)
    if reference is None and known_norms is not None:
        reference = lowest_norm_reference(known_norms, _valid(known_norms))
    pc1 = first_principal_component(table.rows(pca_sample_ids(v, d)))
    mean = reference_mean(table.rows(list(reference.ids)), pc1) if reference is not None else None

    directions = [pc1] if mean is None else [pc1, mean]
    sketch_dirs = sketch_directions(d)
    norms = np.empty(v, np.float64)
    products = np.empty((v, len(directions)), np.float64)
    sketch = np.empty((v, len(sketch_dirs)), np.float32)
    hi = 0.85 if mean is not None else 0.65
    for blk in iter_scan(table, np.stack(directions), rough=sketch_dirs):
        n = len(blk.norms)
        norms[blk.start : blk.start + n] = blk.norms
        products[blk.start : blk.start + n] = blk.products
        sketch[blk.start : blk.start + n] = blk.rough
        done = blk.start + n
        yield 0.3 + (hi - 0.3) * done / v, f"Measuring rows… {done:,} of {v:,}"
    norms = cached_row_norms(table) if cached_row_norms(table) is not None else norms
    valid = _valid(norms)
    along_pc1 = products[:, 0]

    if mean is None:
        reference = lowest_norm_reference(norms, valid)
        mean = reference_mean(table.rows(list(reference.ids)), pc1)
        along_mean = np.empty(v, np.float64)
        for blk in iter_scan(table, mean[None, :]):
            along_mean[blk.start : blk.start + len(blk.norms)] = blk.products[:, 0]
            done = blk.start + len(blk.norms)
            yield 0.65 + 0.2 * done / v, f"Comparing rows with the reference… {done:,} of {v:,}"
    else:
        along_mean = products[:, 1]

    yield 0.9, "Looking for duplicate rows…"
    scores = magikarp_scores(norms, along_pc1, along_mean, float(np.linalg.norm(mean)))
    ref_ids = np.asarray(reference.ids, np.int64)
    if len(ref_ids):
        scores[ref_ids] = reference_scores(table.rows(ref_ids), pc1)
    scores[~valid] = np.nan
    bar = thresholds(norms, scores, valid)
    flags = _flags(norms, scores, valid, bar)
    dups = find_duplicates(table, sketch, norms, valid)
    flags[dups.exact] |= Flag.EXACT_DUPLICATE
    flags[dups.near] |= Flag.NEAR_DUPLICATE
    order = ranking(bar.norm_z, bar.score_z, (flags & (Flag.ZERO | Flag.NON_FINITE)) != 0)
    notes = _notes(table, reference, valid, dups.truncated)
    yield 0.97, "Counting the corpus…"
    counts = training_counts(table)
    return HealthReport(
        spec=table.spec, name=table.name, dtype=str(table.dtype), vocab_size=v, dim=d,
        tokenizer_size=int(table.tokenizer.vocab_size), seconds=time.perf_counter() - t0,
        reference=reference, pc1=pc1, norms=norms, norm_z=plain_z(norms, valid), scores=scores,
        flags=flags, duplicate_of=dups.duplicate_of, categories=categories, order=order,
        z_threshold=bar.z, norm_threshold=bar.norm_below, score_threshold=bar.score_above,
        expected_by_chance=CHANCE, corpus_counts=counts, histogram=ScoreHistogram.of(scores, ref_ids),
        notes=tuple(notes),
    )


def health_report(table) -> HealthReport:
    """:func:`iter_health` run to the end (for the command line and tests)."""
    return run_to_end(iter_health(table))


def _valid(norms: np.ndarray) -> np.ndarray:
    return np.isfinite(norms) & (norms > 0)


def _flags(norms, scores, valid, bar) -> np.ndarray:
    flags = np.zeros(len(norms), np.uint8)
    flags[norms == 0] |= Flag.ZERO
    flags[np.isnan(norms)] |= Flag.NON_FINITE
    with np.errstate(invalid="ignore"):
        flags[valid & (norms < bar.norm_below)] |= Flag.LOW_NORM
        flags[valid & (scores > bar.score_above)] |= Flag.HIGH_SCORE
    return flags


def _notes(table, reference: Reference, valid: np.ndarray, truncated: bool) -> list[str]:
    notes = []
    rows = int(valid.sum())
    if rows < 16:
        notes.append(f"Only {rows} rows with a finite, non-zero norm: too few to say what is typical, so "
                     "only all-zero, non-finite and duplicate rows are flagged.")
    if table.trained_rows < table.vocab_size:
        notes.append(f"Rows {table.trained_rows:,} to {table.vocab_size - 1:,} have no token in the tokenizer "
                     "(padding rows): no text selects them.")
    if truncated:
        notes.append("More pairs of near-equal rows than could be checked; some duplicates may be missing.")
    return notes
