"""A text's tokens, their rows and their nearest neighbours, within bounds:
what ``python -m explorer inspect`` prints. No Qt here.

Any text the app accepts (up to :data:`tokens.MAX_TEXT_CHARS` characters)
must finish in seconds on any table. So each distinct id is searched once,
all of them in one pass over the table, and three budgets cap the work:
multiply-adds of the neighbour search, values of the table it reads, and
row values printed. Tokens past a budget are listed without their row or
neighbours, and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.core.geometry.nearest import Neighbor, nearest_neighbors_many
from explorer.core.geometry.vectors import mean_pool
from explorer.core.tokens.pieces import display_piece
from explorer.core.tokens.problems import group_problems, problem_label, problem_message
from explorer.core.tokens.tokenize import Token, mark_rows, representable, words_of

__all__ = ["InspectLimits", "InspectWork", "Inspection", "inspect_text"]


@dataclass(frozen=True)
class InspectLimits:
    """The budgets of one inspection.

    Attributes
    ----------
    search_macs : int
        Multiply-adds of the neighbour search: distinct ids x searched rows x d
        (1.5e10 is one to three seconds of float32 matrix product on two cores).
    scan_values : int
        Values of the table the search may read (a table bigger than this is
        not searched at all: 2e8 values take 2 to 5 s to draw for a random
        table on two busy cores, and 0.4 to 0.8 GB to read from a file).
    row_values : int
        Row values printed, over all tokens (1e6 is about 22 MB of JSON and
        two seconds of encoding it).
    """

    search_macs: int = 15_000_000_000
    scan_values: int = 200_000_000
    row_values: int = 1_000_000


@dataclass(frozen=True)
class InspectWork:
    """What an inspection did, to compare with its :class:`InspectLimits`."""

    searched_ids: int
    search_macs: int
    scanned_values: int
    row_values: int


@dataclass
class Inspection:
    """The result of :func:`inspect_text`.

    ``rows[i]`` is None for tokens past the row budget and for tokens that
    name no row (their ``problem`` says why), ``neighbors[i]`` None for
    tokens whose id was not searched; ``notes`` say why.
    """

    table: object
    text: str
    tokens: list[Token]
    rows: list[np.ndarray | None]
    neighbors: list[list[Neighbor] | None]
    words: list[tuple[str, list[int], np.ndarray]]
    notes: list[str]
    work: InspectWork
    limits: InspectLimits = field(default_factory=InspectLimits)

    def as_json(self) -> dict:
        """The inspection as strict JSON data: non-finite values become None."""
        t = self.table
        family = t.tokenizer.family
        v = t.vocab_size
        tokens = []
        for tok, row in zip(self.tokens, self.rows):
            tokens.append({
                "position": tok.position,
                "piece": tok.piece,
                "shown": display_piece(tok.piece, family).text,
                "text": tok.text_in(self.text),
                "id": tok.id if tok.ok or tok.id >= 0 else None,
                "start": tok.start,
                "end": tok.end,
                "special": tok.special,
                "word": tok.word,
                "byte_offset": t.byte_offset(tok.id) if tok.ok else None,
                "row": None if row is None else finite_list(row),
                "problem": None if tok.ok else {"kind": tok.problem.name.lower(), "label": problem_label(tok, v),
                                                "message": problem_message(tok, v)},
            })
        neighbors = [
            None if nbs is None else [{"piece": t.piece(n.id), "shown": display_piece(t.piece(n.id), family).text,
                                       "id": n.id, "cosine": _finite(n.cosine)} for n in nbs]
            for nbs in self.neighbors
        ]
        words = [{"text": text, "positions": pos, "mean": finite_list(mean)} for text, pos, mean in self.words]
        return {
            "model": t.spec,
            "name": t.name,
            "vocab_size": t.vocab_size,
            "dim": t.dim,
            "dtype": t.dtype,
            "row_bytes": t.row_bytes,
            "params": t.params,
            "bytes": t.stored_bytes,
            "tied": t.tied,
            "kind": t.kind,
            "model_params": t.model_params,
            "tokens": tokens,
            "neighbors": neighbors,
            "words": words,
            "notes": list(t.notes) + self.notes,
        }


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def finite_list(values: np.ndarray) -> list[float | None]:
    """``values`` as a list of Python floats, with None for NaN and ±inf
    (strict JSON has no NaN or Infinity)."""
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isfinite(arr).all():
        return arr.tolist()
    return [float(x) if np.isfinite(x) else None for x in arr]


def inspect_text(table, text: str, k: int = 5, limits: InspectLimits = InspectLimits()) -> Inspection:
    """Tokenize ``text`` with the table's tokenizer and gather what inspect shows.

    Parameters
    ----------
    table : EmbeddingTable
    text : str
        Any text; lone surrogates become U+FFFD (see :func:`tokens.representable`).
    k : int
        Neighbours per token (at least 1).
    limits : InspectLimits

    Returns
    -------
    Inspection
        Tokens that name no row of the table (a typed ``abc`` or ``100`` on
        100 rows, an id from a tokenizer larger than the table) are listed
        with their problem and no row; a note per kind of problem counts them.

    Raises
    ------
    TokenizeError
        When the tokenizer fails on the text as a whole (a broken tokenizer).
    MemoryLimitError
        When even the first token's row does not fit in memory.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    text = representable(text)
    tokens = list(mark_rows(table.tokenizer.encode(text), table.vocab_size))
    d = int(table.dim)
    notes: list[str] = [g.sentence(table.vocab_size) + "." for g in group_problems(tokens)]
    good = [t for t in tokens if t.ok]

    # rows printed: every token that has one while the budget lasts (at least the first)
    n_rows = len(good) if len(good) * d <= limits.row_values else max(1, limits.row_values // d)
    n_rows = min(n_rows, len(good))
    if n_rows < len(good):
        notes.append(f"Rows are printed for the first {n_rows:,} of {len(good):,} tokens "
                     f"(at most {limits.row_values:,} values); inspect a shorter text for the rest.")
    printed = {t.position for t in good[:n_rows]}

    # ids searched: distinct ids in order of appearance while the budget lasts
    distinct = list(dict.fromkeys(t.id for t in good))
    per_query = int(table.trained_rows) * d
    if not distinct:
        searched: list[int] = []
    elif per_query > limits.scan_values:
        searched = []
        notes.append(f"Neighbours are not searched: the table's {per_query:,} values are more than inspect reads "
                     f"({limits.scan_values:,}); the window searches it in the background.")
    else:
        n_search = min(len(distinct), max(1, limits.search_macs // max(1, per_query)))
        searched = distinct[:n_search]
        if n_search < len(distinct):
            notes.append(f"Neighbours are searched for the first {n_search:,} of {len(distinct):,} distinct ids "
                         f"(at most {limits.search_macs:,} multiply-adds); inspect a shorter text for the rest.")

    need = list(dict.fromkeys([t.id for t in good[:n_rows]] + searched))
    got = table.rows(need) if need else np.empty((0, d), np.float32)
    row_of = {tid: got[i] for i, tid in enumerate(need)}
    found = nearest_neighbors_many(table, np.stack([row_of[i] for i in searched]) if searched else
                                   np.empty((0, d), np.float32), k=k, exclude=[[i] for i in searched])
    neighbors_of = dict(zip(searched, found))

    rows = [row_of[t.id] if t.position in printed else None for t in tokens]
    neighbors = [neighbors_of.get(t.id) if t.ok else None for t in tokens]
    words = []
    for group in words_of(tokens):
        if len(group) > 1 and all(g.position in printed for g in group):
            words.append((text[group[0].start:group[-1].end], [g.position for g in group],
                          mean_pool(np.stack([row_of[g.id] for g in group]))))
    work = InspectWork(
        searched_ids=len(searched),
        search_macs=len(searched) * per_query,
        scanned_values=per_query if searched else 0,
        row_values=n_rows * d,
    )
    return Inspection(table, text, tokens, rows, neighbors, words, notes, work, limits)
