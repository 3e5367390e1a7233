"""The link to the training lesson: how often each row's token occurred in
the corpus the table was trained on, where the explorer knows that corpus
(the bundled model, trained by :mod:`explorer.core.training.bundled` on the synthetic
language). No Qt here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["training_counts"]


def training_counts(table) -> np.ndarray | None:
    """Occurrences of each row's token in the table's training corpus.

    Returns
    -------
    ndarray (V,) int64 or None
        -1 for a row whose token is not a word of the corpus; None when the
        corpus is not known (every table but the bundled model).
    """
    if table.kind != "bundled":
        return None
    from explorer.core.training.bundled import CORPUS_SEED, CORPUS_SENTENCES
    from explorer.core.training.corpus import synthetic_corpus

    corpus = synthetic_corpus(CORPUS_SENTENCES, CORPUS_SEED)
    counts = corpus.counts()
    out = np.full(table.vocab_size, -1, np.int64)
    for word, count in zip(corpus.words, counts):
        i = table.tokenizer.id_of(word)
        if i is not None and 0 <= i < table.vocab_size:
            out[i] = int(count)
    return out
