"""Why vectors and not ids: the same few tokens as scalar ids (a false
metric |i - j|), as one-hot vectors (every pair sqrt(2) apart, cosine 0) and
as the table's learned rows (real cosines); FACTS.md, "Why vectors and not
ids". For the Cost view's "Why vectors" page. No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.core.geometry.vectors import one_hot_distance_matrix, row_products
from explorer.core.tokens.words import resolve_word

__all__ = [
    "DEFAULT_WORDS",
    "MAX_WHY_TOKENS",
    "WhyVectors",
    "why_vectors",
    "cosine_matrix",
]

#: two related words and an unrelated one, each one row of the bundled model, MiniLM and SmolLM2
#: ("airplane" is not a word of the bundled model: the page opened on an error)
DEFAULT_WORDS = ("cat", "dog", "plane")
#: most tokens the "why vectors" panels show
MAX_WHY_TOKENS = 6


@dataclass(frozen=True)
class WhyVectors:
    """The same tokens three ways.

    Attributes
    ----------
    labels : tuple of str
        What the user sees for each token (the word or the piece).
    ids : ndarray, int64, shape (n,)
    id_distance : ndarray, int64, shape (n, n)
        |i - j| between the scalar ids.
    onehot_distance : ndarray, float64, shape (n, n)
        ‖e_i - e_j‖ between one-hot vectors of length V.
    onehot_cosine : ndarray, float64, shape (n, n)
    cosine : ndarray, float64, shape (n, n)
        Cosine between the table's rows (NaN for zero or non-finite rows).
    from_text : bool
        The words were not in the vocabulary; the first tokens of the text were used.
    missing : tuple of str
        Words the vocabulary does not hold as a single token.
    """

    labels: tuple
    ids: np.ndarray
    id_distance: np.ndarray
    onehot_distance: np.ndarray
    onehot_cosine: np.ndarray
    cosine: np.ndarray
    from_text: bool = False
    missing: tuple = ()

    @property
    def n(self) -> int:
        return len(self.ids)


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """Pairwise cosines of the rows of ``x`` (n, d) in float64; NaN rows and
    columns for zero or non-finite rows (the window's thread calls this: numpy's own loops)."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        norms = np.linalg.norm(x, axis=1)
        bad = ~np.isfinite(norms) | (norms == 0) | ~np.all(np.isfinite(x), axis=1)
        unit = x / np.where(bad, 1.0, norms)[:, None]
        c = row_products(unit)
    c[bad, :] = np.nan
    c[:, bad] = np.nan
    return np.clip(c, -1.0, 1.0)


def why_vectors(table, words: Sequence[str] = DEFAULT_WORDS, text_tokens: Sequence = ()) -> WhyVectors:
    """The scalar-id, one-hot and learned-vector views of a few tokens.

    Parameters
    ----------
    table : EmbeddingTable
    words : sequence of str
        Words to look up; those the vocabulary holds as one token are used.
    text_tokens : sequence of Token
        Fallback when fewer than two words are found: the first distinct
        non-special tokens of the text.

    Returns
    -------
    WhyVectors
        With n >= 0 tokens (at most :data:`MAX_WHY_TOKENS`).
    """
    v = int(table.vocab_size)
    labels, ids, missing = [], [], []
    for w in words:
        w = w.strip()
        if not w:
            continue
        tid = resolve_word(table.tokenizer, w, rows=v)
        if tid is None:
            missing.append(w)
        elif tid not in ids:
            labels.append(w)
            ids.append(tid)
    from_text = False
    if len(ids) < 2:
        from_text = True
        labels, ids = [], []
        for t in text_tokens:
            if t.special or not t.ok or not 0 <= t.id < v or t.id in ids:
                continue
            labels.append(table.shown_piece(t.id).text.lstrip("␣") or t.piece)
            ids.append(int(t.id))
            if len(ids) >= MAX_WHY_TOKENS:
                break
    ids = ids[:MAX_WHY_TOKENS]
    labels = labels[:MAX_WHY_TOKENS]
    arr = np.asarray(ids, np.int64)
    n = len(arr)
    id_dist = np.abs(arr[:, None] - arr[None, :])
    # two one-hot vectors differ in exactly two places whatever V is: never build (n, V)
    oh_dist = one_hot_distance_matrix(arr)
    oh_cos = (arr[:, None] == arr[None, :]).astype(np.float64)
    rows = table.rows(arr) if n else np.zeros((0, table.dim), np.float32)
    cos = cosine_matrix(rows) if n else np.zeros((0, 0))
    return WhyVectors(tuple(labels), arr, id_dist, oh_dist, oh_cos, cos, from_text, tuple(missing))
