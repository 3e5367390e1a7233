"""Corpora the toy model trains on: the bundled synthetic language, or a
plain text split into words or by a model's tokenizer. No Qt here."""

from __future__ import annotations

import re

import numpy as np

from explorer.core.tokens.problems import group_problems
from explorer.core.training.config import ConfigError

__all__ = ["text_corpus", "synthetic_corpus", "corpus_class_index", "MAX_CORPUS_CHARS", "MAX_TEXT_VOCAB"]

#: the largest text read from a file, in characters
MAX_CORPUS_CHARS = 4_000_000
#: words beyond this many distinct types become <unk>
MAX_TEXT_VOCAB = 4096
_WORD = re.compile(r"\w+|[^\w\s]")


def text_corpus(text: str, tokenizer=None, max_vocab: int = MAX_TEXT_VOCAB):
    """A training corpus from plain text.

    Parameters
    ----------
    text : str
        At most MAX_CORPUS_CHARS characters are used.
    tokenizer : object with ``encode(text) -> list[Token]`` and ``piece(id)``, optional
        None: lower-cased words and punctuation marks. Otherwise the model's
        tokenizer; its ids are renumbered 0..n-1 in order of frequency so the
        toy table has one row per piece that occurs.
    max_vocab : int
        Keep the most frequent ``max_vocab - 2`` types; the rest become <unk>.

    Returns
    -------
    explorer.core.training.language.Corpus
        ``words`` (row names; "<bos>" and "<unk>" first), ``ids`` (int64, lines
        separated by <bos>), ``classes`` empty, ``sentences`` the non-empty lines.

    Raises
    ------
    ConfigError
        The text holds fewer than 8 tokens, or words the tokenizer cannot
        read (English for a table of ids, a word a toy table lacks).
    """
    from explorer.core.training.language import Corpus

    text = (text or "")[:MAX_CORPUS_CHARS]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    streams: list[list[str]] = []
    unreadable = []
    for ln in lines:
        if tokenizer is None:
            streams.append(_WORD.findall(ln.lower()))
        else:
            # the tokenizer's pieces, keyed by id so equal-looking pieces stay apart
            out = []
            for k in range(0, len(ln), 10_000):
                for t in tokenizer.encode(ln[k:k + 10_000]):
                    if t.problem is not None:
                        unreadable.append(t)
                    elif not t.special:
                        out.append(f"{t.id}\x00{t.piece}")
            streams.append(out)
    if unreadable:
        why = "; ".join(g.sentence(tokenizer.vocab_size) for g in group_problems(unreadable))
        raise ConfigError(f"the model's tokenizer cannot read this text ({why}); train on its words instead")
    counts: dict[str, int] = {}
    for s in streams:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    if sum(counts.values()) < 8:
        raise ConfigError("the text is too short to train on: it needs at least 8 words")
    special = ["<bos>", "<unk>"]
    kept = sorted(counts, key=lambda w: (-counts[w], w))[: max(1, max_vocab - len(special))]
    index = {w: i + len(special) for i, w in enumerate(kept)}
    unk = 1
    ids: list[int] = []
    for s in streams:
        ids.append(0)
        ids.extend(index.get(w, unk) for w in s)
    names = special + [w.split("\x00", 1)[-1] for w in kept]
    # row names must be unique for a word-level tokenizer of the saved model
    seen: dict[str, int] = {}
    unique = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        unique.append(n if k == 0 else f"{n}#{k}")
    return Corpus(unique, {}, np.asarray(ids, dtype=np.int64), lines)


_SYNTHETIC: dict[tuple[int, int], object] = {}


def synthetic_corpus(n_sentences: int = 20000, seed: int = 0):
    """The bundled model's synthetic corpus (made once per process, ~1 s)."""
    from explorer.core.training.language import make_corpus

    key = (n_sentences, seed)
    if key not in _SYNTHETIC:
        _SYNTHETIC[key] = make_corpus(n_sentences, seed=seed)
    return _SYNTHETIC[key]


def corpus_class_index(corpus):
    """The corpus's word classes as a :class:`~explorer.core.sources.loading.ClassIndex`
    (names sorted, as for a saved model opened in the explorer, so a class
    has the same number, and colour, in every view), or None without classes."""
    from explorer.core.sources.loading import ClassIndex

    if not corpus.classes:
        return None
    names = tuple(sorted(set(map(str, corpus.classes.values()))))
    number = {n: i for i, n in enumerate(names)}
    of = np.array([number.get(str(corpus.classes.get(w)), -1) for w in corpus.words], np.int16)
    return ClassIndex(names, of)
