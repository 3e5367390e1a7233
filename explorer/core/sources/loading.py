"""Opening a model for the window: everything the views need about a new
table, computed in one pass off the GUI thread so that it is installed at
once (no view shows the old model's figures next to the new model's name).
No Qt here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from explorer.core.matrix.overview import MatrixOverview, iter_matrix_overview, overview_row_step
from explorer.core.runtime import limit_torch_threads
from explorer.core.sources import EmbeddingTable, open_table
from explorer.core.tokens.text import TokenizedText, tokenize_text, tokenizer_family

__all__ = ["ClassIndex", "LoadedModel", "load_model", "prepare_table"]


@dataclass(frozen=True)
class ClassIndex:
    """Which class each row belongs to (the bundled model and trained toys).

    Attributes
    ----------
    names : tuple of str
        Class names, sorted; a class's number is its index here.
    of : ndarray (V,) int16
        Class number of each row, -1 for rows without a class.
    """

    names: tuple[str, ...]
    of: np.ndarray

    @classmethod
    def from_table(cls, table: EmbeddingTable) -> ClassIndex | None:
        """The table's classes as an index, or None when it has none."""
        if not table.classes:
            return None
        names = tuple(sorted(set(map(str, table.classes.values()))))
        number = {n: i for i, n in enumerate(names)}
        of = np.full(table.vocab_size, -1, np.int16)
        for tid, name in table.classes.items():
            if 0 <= int(tid) < table.vocab_size:
                of[int(tid)] = number[str(name)]
        return cls(names, of)

    def name_of(self, token_id: int) -> str | None:
        if 0 <= token_id < len(self.of) and self.of[token_id] >= 0:
            return self.names[int(self.of[token_id])]
        return None


@dataclass(frozen=True)
class LoadedModel:
    """What the loader hands to the state, all for one table.

    Attributes
    ----------
    table : EmbeddingTable
    overview : MatrixOverview
        The picture of the whole table the matrix view draws.
    classes : ClassIndex or None
    tokenized : TokenizedText
        The text the load was asked for, tokenized by this table's tokenizer.
    seconds : float
        Wall time of the load (for the status bar).
    """

    table: EmbeddingTable
    overview: MatrixOverview
    classes: ClassIndex | None
    tokenized: TokenizedText
    seconds: float


def load_model(spec: str, text: str = "", texts: Mapping[str, str] | None = None) -> Iterator[tuple[float, str]]:
    """Open ``spec`` and prepare everything the window shows about it.

    A generator for a worker: yields ``(fraction, message)`` progress often
    enough to be cancelled promptly, returns a :class:`LoadedModel`.

    Parameters
    ----------
    spec : str
    text : str
        The text on screen.
    texts : mapping, optional
        The last text typed for each tokenizer family
        (:func:`~explorer.core.tokens.text.tokenizer_family`): a table whose
        family has one gets it back. When the chosen text cannot be
        tokenized by this table (English for a table of ids) or is empty,
        the table's example text is used instead.

    Raises
    ------
    SourceError
        When the spec cannot be opened (the message says why and what to do).
    """
    t0 = time.perf_counter()
    yield 0.02, f"Opening {spec}…"
    table = open_table(spec)
    return (yield from prepare_table(table, text, texts, started=t0))


def prepare_table(table: EmbeddingTable, text: str = "", texts: Mapping[str, str] | None = None,
                  started: float | None = None) -> Iterator[tuple[float, str]]:
    """Prepare everything the window shows about a table already open: the
    second half of :func:`load_model`, and all of opening a table made in
    this process (``explorer.show``). A generator for a worker, like
    :func:`load_model` (same parameters; ``started`` is when the opening
    began, for :attr:`LoadedModel.seconds`); returns a :class:`LoadedModel`.
    """
    t0 = time.perf_counter() if started is None else started
    limit_torch_threads(import_torch=False)
    yield 0.3, (f"Drawing a random {table.vocab_size:,} × {table.dim:,} table…" if table.kind == "random"
                else f"Reading {table.vocab_size:,} × {table.dim:,} table…")
    if table.fits_in_memory:
        for fraction in table.iter_matrix():
            yield 0.3 + 0.4 * fraction, "Reading rows…"
        yield 0.7, "Normalising rows for neighbour search…"
        for fraction in table.iter_unit_matrix():
            yield 0.7 + 0.05 * fraction, "Normalising rows for neighbour search…"
    yield 0.75, "Indexing the vocabulary…"
    table.piece(0)  # the tokenizer's id -> piece map (0.1-0.2 s for 50,000), made here, not at the first label drawn
    classes = ClassIndex.from_table(table)
    chosen = (texts or {}).get(tokenizer_family(table.tokenizer, table.spec), text)
    tokenized = tokenize_text(table.tokenizer, chosen, table.vocab_size)
    if (not tokenized.readable or not chosen) and table.example_text:
        tokenized = tokenize_text(table.tokenizer, table.example_text, table.vocab_size)
    # say what the time goes to: a random table's rows are drawn now, a file's read now
    sampled = len(range(0, table.vocab_size, overview_row_step(table.vocab_size)))
    what = ("Drawing random N(0, σ²) rows" if table.kind == "random" else "Reading rows") + " for the overview"
    yield 0.8, f"{what}…"
    gen = iter_matrix_overview(table)
    while True:
        try:
            fraction = next(gen)
        except StopIteration as stop:
            overview = stop.value
            break
        yield 0.8 + 0.19 * fraction, f"{what}: {int(round(fraction * sampled)):,} of {sampled:,}…"
    yield 1.0, "Done"
    return LoadedModel(table, overview, classes, tokenized, time.perf_counter() - t0)
