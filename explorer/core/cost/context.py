"""Why the lookup alone knows no context.

* :func:`same_row`: a word typed in two sentences gives the same id, so the
  same row: the lookup is context-free and order-free (FACTS.md, "The object").
* :func:`context_support`, :func:`context_plan`: whether the model behind the
  table can run here (a transformers architecture with safetensors weights,
  e.g. MiniLM, a GGUF file, e.g. SmolLM2, or the explorer's own toy model,
  e.g. the bundled one) and
  what to run; the run itself, whose first layer does depend on the
  neighbours, is :func:`~.first_layer.contextual_job`.
* :func:`choose_demonstration`: a word and two sentences that show it for a
  given table.

Cheap: tokenizing and file-system checks, no model is loaded here. No Qt here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.cost.first_layer import ContextError, ContextResult, contextual_job, first_layer_states
from explorer.core.sources.runnable import runnable_model
from explorer.core.tokens.words import clean_piece

__all__ = [
    "DEFAULT_SENTENCES",
    "DEFAULT_WORD",
    "DEMONSTRATIONS",
    "choose_demonstration",
    "ContextError",
    "Occurrence",
    "SameRow",
    "same_row",
    "repeated_word",
    "context_support",
    "ContextPlan",
    "context_plan",
    "ContextResult",
    "first_layer_states",
    "contextual_job",
]

#: "bank" at the same position in both, so only the context differs
DEFAULT_SENTENCES = ("the river bank was flooded", "the savings bank was closed")
DEFAULT_WORD = "bank"
#: "bank" in the bundled language's river and money sentences (its own words), at the same position
BUNDLED_BANK_SENTENCES = ("the otter sat on the bank by the river .", "he kept coins in the bank .")
#: (word, sentences) tried in order for a new table: "bank" for real English
#: vocabularies, then in the bundled model's own words, then a word of a
#: vocabulary without "bank"
DEMONSTRATIONS = (
    (DEFAULT_WORD, DEFAULT_SENTENCES),
    (DEFAULT_WORD, BUNDLED_BANK_SENTENCES),
    ("cat", ("the quick fox chases the sleepy cat in the park .", "a farmer feeds the cat .")),
)


# --------------------------------------------------------------------------
# Context-free: one word, two sentences, one row
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of the word: which sentence, which token position, which id."""

    sentence: int
    position: int
    id: int
    piece: str


@dataclass(frozen=True)
class SameRow:
    """A word found in several sentences and the rows its occurrences read.

    Attributes
    ----------
    word : str
    occurrences : tuple of Occurrence
        Two occurrences: the first in each of two sentences, or else the
        first two of one sentence.
    sequences : tuple of tuple of int
        The ids of each sentence as the tokenizer gives them (specials included).
    rows : ndarray, float32, shape (len(occurrences), d)
    message : str
        Why the demonstration cannot be made, or "".
    """

    word: str
    occurrences: tuple
    sequences: tuple
    rows: np.ndarray
    message: str = ""

    @property
    def ok(self) -> bool:
        return len(self.occurrences) >= 2 and not self.message

    @property
    def same_id(self) -> bool:
        return self.ok and len({o.id for o in self.occurrences}) == 1

    @property
    def rows_equal(self) -> bool:
        return self.ok and bool(np.array_equal(self.rows[0], self.rows[1]))

    @property
    def max_abs_difference(self) -> float:
        if not self.ok:
            return float("nan")
        return float(np.max(np.abs(self.rows[0].astype(np.float64) - self.rows[1].astype(np.float64))))


def same_row(table, sentences: Sequence[str], word: str = DEFAULT_WORD) -> SameRow:
    """Tokenize each sentence, find ``word`` as one token, read its rows.

    Returns
    -------
    SameRow
        ``message`` says what is missing when fewer than two occurrences are found.
    """
    word = (word or "").strip()
    empty = np.zeros((0, table.dim), np.float32)
    if not word:
        return SameRow(word, (), (), empty, "Type a word to look for.")
    occ, seqs = [], []
    for k, s in enumerate(sentences):
        try:
            toks = table.tokenizer.encode(s)
        except Exception as exc:
            return SameRow(word, (), (), empty, f"Sentence {k + 1} cannot be tokenized: {exc}")
        seqs.append(tuple(int(t.id) for t in toks))
        for t in toks:
            if t.special or not 0 <= t.id < table.vocab_size:
                continue
            if t.text_in(s).strip().lower() == word.lower() and clean_piece(t.piece) == word.lower():
                occ.append(Occurrence(k, t.position, int(t.id), t.piece))
    # prefer one occurrence from each of two sentences; else two from one
    firsts = [next(o for o in occ if o.sentence == k) for k in sorted({o.sentence for o in occ})]
    occ = firsts[:2] if len(firsts) >= 2 else occ[:2]
    if len(occ) < 2:
        try:
            split = len([t for t in table.tokenizer.encode(word) if not t.special]) > 1
        except Exception:
            split = False
        if split:
            msg = (f"“{word}” is split into several pieces in this vocabulary, so it has no single row; "
                   "try another word.")
        else:
            msg = f"Type “{word}” in both sentences (as a whole word) to compare its two occurrences."
        return SameRow(word, tuple(occ), tuple(seqs), empty, msg)
    rows = table.rows([o.id for o in occ])
    return SameRow(word, tuple(occ), tuple(seqs), rows)


# --------------------------------------------------------------------------
# Contextual: the model's first layer
# --------------------------------------------------------------------------


#: the characters of a text searched for a repeated word (:func:`choose_demonstration`). The page
#: shows the text only up to the word's second occurrence: a pasted book, tokenized whole on the
#: window's thread when the page met a table without a demonstration of its own (a random one) and
#: again at each look at its sentences, was a stall of 60-70 ms in walks of the real window
DEMO_CHARS = 1_000


def _first_repeat(table, text: str) -> tuple[str, int] | None:
    """(word, end of its second occurrence) of the first whole-word token that occurs at least twice
    in the first :data:`DEMO_CHARS` characters of ``text``; None if there is none."""
    text = text[:DEMO_CHARS]
    try:
        toks = table.tokenizer.encode(text)
    except Exception:
        return None
    seen = set()
    for t in toks:
        w = t.text_in(text).strip().lower()
        if t.special or not w or clean_piece(t.piece) != w or not 0 <= t.id < table.vocab_size:
            continue
        if w in seen:
            return w, t.end
        seen.add(w)
    return None


def repeated_word(table, text: str) -> str | None:
    """The first whole-word token that occurs at least twice in the first :data:`DEMO_CHARS` characters of
    ``text`` (a fallback word for tables without "bank")."""
    found = _first_repeat(table, text)
    return found[0] if found is not None else None


def context_support(table) -> tuple[Path | None, str]:
    """Whether the model behind ``table`` can be run here, cheaply.

    Returns
    -------
    (folder, reason)
        ``folder`` (a model folder or a GGUF file) to pass to
        :func:`first_layer_states`, or None with a sentence saying why not:
        the one check of :func:`~explorer.core.sources.runnable.runnable_model`,
        which Health's verification asks too.
    """
    found = runnable_model(table)
    return found.path, found.reason


@dataclass(frozen=True)
class ContextPlan:
    """What to run to compare a word's two occurrences after the first layer.

    Attributes
    ----------
    folder : Path or None
        The model folder, or None when the run cannot be made (``reason`` says why).
    sequences : tuple of tuple of int
    picks : tuple of (sequence index, position)
    reason : str
    """

    folder: Path | None
    sequences: tuple = ()
    picks: tuple = ()
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.folder is not None


def context_plan(table, same: SameRow) -> ContextPlan:
    """The first-layer run that would show ``same``'s occurrences differ, or why there is none.

    Cheap (a file-system check): the run itself is :func:`contextual_job`.
    """
    folder, reason = context_support(table)
    if folder is None:
        return ContextPlan(None, reason=reason)
    if not same.ok:
        return ContextPlan(None, reason="Contextual vectors need two occurrences of the word.")
    picks = tuple((o.sentence, o.position) for o in same.occurrences)
    return ContextPlan(folder, tuple(same.sequences), picks)


def _all_known(table, sentences: Sequence[str]) -> bool:
    """No token of the sentences lacks a row or stands for an unknown word (a special token with text)."""
    try:
        tokens = [t for s in sentences for t in table.tokenizer.encode(s)]
    except Exception:  # a tokenizer that cannot read them: not a demonstration for this table
        return False
    return all(t.ok and not (t.special and t.end > t.start) for t in tokens)


def choose_demonstration(table, texts: Sequence[str] = ()) -> tuple[str, tuple[str, str]]:
    """A word and two sentences that show the lookup is context-free on ``table``.

    The first of :data:`DEMONSTRATIONS` whose word is one token of this
    vocabulary in both sentences (preferring one whose words are all known); else a word repeated
    near the start of one of ``texts`` (that text up to the word's second occurrence, and an empty
    second sentence); else the defaults (whose message then says what to type).
    """
    # first a demonstration whose every word the vocabulary knows, then any that shows the word
    for need_known in (True, False):
        for word, sentences in DEMONSTRATIONS:
            if same_row(table, sentences, word).ok and (not need_known or _all_known(table, sentences)):
                return word, tuple(sentences)
    for text in texts:
        found = _first_repeat(table, text or "")
        if found is not None:
            word, end = found
            return word, (text[:end], "")
    return DEFAULT_WORD, DEFAULT_SENTENCES
