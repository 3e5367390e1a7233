"""The reference of known-untrained rows and the table's first principal
component, the two ingredients of the Magikarp-style score. No Qt here.

Land & Bartolo ("Fishing for Magikarp", EMNLP 2024) score each row by its
cosine with the mean of rows known never to be trained, after removing the
first principal component, which most rows share and which would otherwise
dominate every cosine. The known rows are, in this order of preference:

1. the tokenizer's unused or reserved tokens ([unusedN], <unusedN>, ...);
2. rows the model itself shows were never trained: tokens whose single byte
   valid UTF-8 never holds (C0, C1, F5 to FF), rows that exactly equal
   another row (training gives two tokens the same row only if it never
   touched either), and tokens no text encodes to;
3. for a model whose output matrix is not its input table, the input rows
   of lowest norm (an input row no text ever selected keeps its small
   random start). Never for a tied model: there the rows of lowest norm are
   its most frequent tokens, the opposite of what is looked for.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence

import numpy as np

from explorer.core.arrays import unique_sorted
from explorer.core.health import tables
from explorer.core.health.report import Reference

__all__ = ["UNUSED_PATTERNS", "iter_unused_reference", "model_reference",
           "lowest_norm_reference", "first_principal_component", "pca_sample_ids", "reference_mean"]

#: pieces of tokens a tokenizer reserves and a model never sees in training
UNUSED_PATTERNS = (
    (re.compile(r"\[unused\d+\]"), "[unusedN]"),
    (re.compile(r"<\|reserved_special_token_\d+\|>"), "<|reserved_special_token_N|>"),
    (re.compile(r"<unused\d+>"), "<unusedN>"),
    (re.compile(r"<\|reserved_\d+\|>"), "<|reserved_N|>"),
    (re.compile(r"<\|unused_?\d+\|>"), "<|unusedN|>"),
)
#: fewer unused tokens than this are not a reference (one row is no mean)
MIN_UNUSED = 2
#: values read for the principal component (16 MB of float32)
_PCA_VALUES = 4 * 1024 * 1024
#: the sample is read as this many runs of consecutive rows spread over the
#: table (cheap for random tables, which generate rows in blocks)
_PCA_RUNS = 64


def iter_unused_reference(pieces: Sequence[str]) -> Generator[tuple[float, str], None, Reference | None]:
    """The tokenizer's unused or reserved tokens among ``pieces`` (its pieces by id, up to the table's
    rows), or None when it has fewer than :data:`MIN_UNUSED` of them: a generator for a job, yielding
    after every ``tables.STEP_PIECES`` pieces (10,000,000 of them: 2.3 s)."""
    by_pattern: dict[str, list[int]] = {}
    step = tables.STEP_PIECES
    for at in range(0, len(pieces), step):
        yield at / len(pieces), "Looking for the tokenizer's unused tokens…"
        for i in range(at, min(len(pieces), at + step)):
            piece = pieces[i]
            if not piece or piece[0] not in "[<":
                continue
            for pattern, label in UNUSED_PATTERNS:
                if pattern.fullmatch(piece):
                    by_pattern.setdefault(label, []).append(i)
                    break
    ids = sorted(i for found in by_pattern.values() for i in found)
    if len(ids) < MIN_UNUSED:
        return None
    labels = " and ".join(f"{len(v):,} {k}" for k, v in by_pattern.items())
    return Reference("unused_tokens", tuple(ids), f"the tokenizer's unused tokens ({labels})")


def model_reference(never_in_utf8: np.ndarray, exact_duplicates: np.ndarray, unreachable: np.ndarray,
                    rows: int) -> Reference | None:
    """Rows the model shows it never trained (see the module's point 2), or
    None when it shows fewer than :data:`MIN_UNUSED`.

    Parameters
    ----------
    never_in_utf8, exact_duplicates, unreachable : ndarray of int
        Token ids of each kind (any order; ids past ``rows`` are dropped).
    rows : int
        The table's V.
    """
    parts = [(np.asarray(never_in_utf8, np.int64), "bytes never in UTF-8"),
             (np.asarray(exact_duplicates, np.int64), "rows equal to another row"),
             (np.asarray(unreachable, np.int64), "tokens no text encodes to")]
    ids = unique_sorted(np.concatenate([p for p, _ in parts] + [np.empty(0, np.int64)]))
    ids = ids[(ids >= 0) & (ids < rows)]
    if len(ids) < MIN_UNUSED:
        return None
    said = " and ".join(f"{len(unique_sorted(p)):,} {label}" for p, label in parts if len(p))
    return Reference("model", tuple(int(i) for i in ids),
                     f"rows the model never trained ({said}; the tokenizer reserves no unused tokens)")


def lowest_norm_reference(norms: np.ndarray, valid: np.ndarray) -> Reference:
    """The rows of lowest norm among ``valid`` ones: V / 100 of them, at least
    3 and at most 1,000."""
    count = int(np.clip(len(norms) // 100, 3, 1000))
    candidates = np.nonzero(valid)[0]
    count = min(count, len(candidates))
    if count == 0:
        return Reference("lowest_norm", (), "no usable rows")
    part = candidates[np.argpartition(norms[candidates], count - 1)[:count]] if count < len(candidates) else candidates
    ids = tuple(int(i) for i in np.sort(part))
    return Reference("lowest_norm", ids, f"the {count:,} input rows of lowest norm (neither the tokenizer nor "
                                         "the model marks any row as never trained)")


def pca_sample_ids(vocab_size: int, dim: int) -> np.ndarray:
    """Rows read for the principal component: all of them up to 4 M values,
    else runs of consecutive rows spread evenly over the table."""
    want = max(2, _PCA_VALUES // max(1, dim))
    if vocab_size <= want:
        return np.arange(vocab_size)
    run = max(1, want // _PCA_RUNS)
    starts = np.linspace(0, vocab_size - run, _PCA_RUNS).astype(np.int64)
    return unique_sorted((starts[:, None] + np.arange(run)[None, :]).reshape(-1))


def first_principal_component(sample: np.ndarray, seed: int = 0) -> np.ndarray:
    """The first principal component of the rows in ``sample`` (centred).

    Computed with torch, which runs on the threads the app gives it (one
    core is left to the window).

    Parameters
    ----------
    sample : ndarray (n, d)
        Rows with non-finite values are left out.

    Returns
    -------
    ndarray (d,) float64
        Unit length (zeros when the rows do not vary); its sign is arbitrary.
    """
    import torch

    x = np.asarray(sample, dtype=np.float32)
    x = x[np.isfinite(x).all(axis=1)]
    d = x.shape[1]
    if len(x) < 2:
        return np.zeros(d)
    centred = torch.from_numpy(x - x.mean(axis=0, dtype=np.float64).astype(np.float32))
    if d <= 1024:
        vals, vecs = torch.linalg.eigh((centred.T @ centred).double())
        top = vecs[:, -1].numpy() if float(vals[-1]) > 0 else np.zeros(d)
    else:
        # subspace iteration with a few vectors: converges fast, never forms d x d
        gen = torch.Generator().manual_seed(seed)
        q = torch.linalg.qr(torch.randn(d, 4, generator=gen))[0]
        for _ in range(24):
            q = torch.linalg.qr(centred.T @ (centred @ q))[0]
        _, _, vt = torch.linalg.svd((centred @ q).double(), full_matrices=False)
        top = (q.double() @ vt[0]).numpy()
    norm = float(np.linalg.norm(top))
    return top / norm if norm > 0 else np.zeros(d)


def reference_mean(rows: np.ndarray, pc1: np.ndarray) -> np.ndarray:
    """Mean of the reference rows with their first-component part removed,
    float64 (d,). Rows with non-finite values are left out."""
    x = np.asarray(rows, dtype=np.float64)
    x = x[np.isfinite(x).all(axis=1)]
    if len(x) == 0:
        return np.zeros(len(pc1))
    mean = x.mean(axis=0)
    return mean - (mean @ pc1) * pc1
