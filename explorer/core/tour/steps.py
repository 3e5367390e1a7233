"""The guided tour: its steps, and what each step says, computed from the table it opened.

A :class:`TourStep` names the model, text, token and view a step opens and
the widget it points at (the UI resolves the name). Its words come from
:func:`claim_for`: every figure in them is computed here from the loaded
table (or, for the training steps, from the run's history), never typed in,
so the tour stays true for whatever model is bundled. The claims are cheap
except the first-layer run of the last step (a worker runs
:func:`claim_job`). No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from explorer.core.cost.why import DEFAULT_WORDS
from explorer.core.jobs import run_to_end
from explorer.core.lookup.backward import lookup_backward, upstream_gradient
from explorer.core.training.config import TrainConfig

__all__ = ["Claim", "TourStep", "STEPS", "claim_for", "claim_job", "analogy_words", "why_words",
           "TOUR_TRAINING_STEPS"]

#: steps of the tour's training runs (a second or two)
TOUR_TRAINING_STEPS = 300
#: analogies tried in order on the projection step (the first whose four words are rows)
ANALOGIES = (("king", "man", "woman", "queen"), ("prince", "boy", "girl", "princess"))
#: triples tried for "why vectors": two related words and an unrelated one
WHY_TRIPLES = (DEFAULT_WORDS, ("cat", "dog", "car"), ("king", "queen", "bank"))


@dataclass(frozen=True)
class Claim:
    """What a step says (two or three sentences) and the figures it quotes, by name."""

    text: str
    facts: tuple[tuple[str, object], ...] = ()

    def fact(self, name: str):
        return dict(self.facts)[name]


@dataclass(frozen=True)
class TourStep:
    """One step: what it opens and what it points at.

    ``spec`` None keeps the model; ``text`` None keeps the model's own text;
    ``page`` is a page of the view (cost: card, why, context; similarity:
    regimes, random; lookup: forward, backward); ``training`` a run the step makes first (training view).
    """

    key: str
    title: str
    spec: str | None
    text: str | None
    token: int | None
    view: str
    target: str
    page: str | None = None
    training: TrainConfig | None = None


STEPS: tuple[TourStep, ...] = (
    TourStep("rows", "A lookup copies rows", "toy:cat-sat", "cat sat", 0, "matrix", "token_strip"),
    TourStep("onehot", "One-hot × E or a pointer jump", "toy:cat-sat", "cat sat", 0, "lookup", "lookup_panels",
             page="forward"),
    TourStep("address", "Where a row lives in memory", "random:50257x768", "42", 0, "lookup", "lookup_pointer",
             page="forward"),
    TourStep("cost", "What the table costs", "random:50257x768", "42", 0, "cost", "cost_card", page="card"),
    TourStep("why", "Why vectors, not ids", "default", None, None, "cost", "why_page", page="why"),
    TourStep("random", "Random directions are nearly orthogonal", "random:50257x768", "42", 0, "similarity",
             "random_page", page="random"),
    TourStep("projection", "Classes cluster; analogies", "default", None, None, "projection", "projection"),
    TourStep("backward", "The backward pass of a lookup", "toy:gradient", "3 1 3", 0, "lookup", "lookup_backward",
             page="backward"),
    TourStep("untied", "Training, untied: sparse gradients", None, None, None, "training", "training_lesson",
             training=TrainConfig(steps=TOUR_TRAINING_STEPS, optimizer="adam", tied=False)),
    TourStep("tied", "Training, tied, with AdamW's decay", None, None, None, "training", "training_lesson",
             training=TrainConfig(steps=TOUR_TRAINING_STEPS, optimizer="adamw", weight_decay=0.1, tied=True)),
    TourStep("context", "One row, whatever the sentence", "default", None, None, "cost", "context_page",
             page="context"),
)


def _vec(row, digits: int = 2) -> str:
    return "[" + ", ".join(f"{float(x):.{digits}f}" for x in np.asarray(row).reshape(-1)[:4]) + \
        (", …]" if np.asarray(row).size > 4 else "]")


def _ids(tokenized) -> list[int]:
    return [int(t.id) for t in tokenized.tokens if t.ok and not t.special]


def _word_id(table, word: str) -> int | None:
    from explorer.core.tokens.words import resolve_word

    return resolve_word(table.tokenizer, word, rows=table.vocab_size)


# -- the claims, one per step --------------------------------------------------------------
def _rows(table, tokenized) -> Claim:
    ids = _ids(tokenized)
    rows = table.rows(ids)
    pieces = [table.shown_piece(i).text for i in ids]
    shown = " and ".join(f"{p} = {_vec(r)}" for p, r in zip(pieces, rows))
    text = (f"“{tokenized.text}” becomes ids {', '.join(map(str, ids))}: the lookup copies row"
            f"{'s' if len(ids) > 1 else ''} {' and '.join(map(str, ids))} of E ({shown}) and does no arithmetic. "
            "Click a token: its row lights up in the matrix and the inspector lists its values.")
    return Claim(text, (("ids", tuple(ids)), ("rows", rows)))


def _onehot(table, tokenized) -> Claim:
    from explorer.core.lookup.ways import lookup_cost, row_layout

    tid = _ids(tokenized)[0]
    cost = lookup_cost(table.vocab_size, table.dim, 1, table.dtype, getattr(table, "row_bytes", None))
    lay = row_layout(table.vocab_size, table.dim, tid, "stored", table.dtype, getattr(table, "row_bytes", None))
    text = (f"one_hot({tid}) is a row of V = {table.vocab_size:,} numbers with a single 1; times E it costs "
            f"2·V·d = {cost.onehot_flops:,} FLOPs, and {cost.zero_multiplies:,} of its {cost.onehot_multiplies:,} "
            f"multiplications are by zero. The pointer path jumps to byte {tid} × {lay.stride:,} = {lay.offset:,} "
            f"and copies {lay.stride:,} bytes: zero FLOPs, the same row.")
    return Claim(text, (("id", tid), ("flops", cost.onehot_flops), ("zero_multiplies", cost.zero_multiplies),
                        ("offset", lay.offset), ("stride", lay.stride)))


def _address(table, tokenized) -> Claim:
    from explorer.core.lookup.ways import lookup_cost, row_layout

    tid = _ids(tokenized)[0]
    lay = row_layout(table.vocab_size, table.dim, tid, "stored", table.dtype, getattr(table, "row_bytes", None))
    cost = lookup_cost(table.vocab_size, table.dim, 1, table.dtype, getattr(table, "row_bytes", None))
    text = (f"A {table.vocab_size:,} × {table.dim:,} table in {lay.dtype}, the shape of GPT-2 small's: token {tid} "
            f"starts at byte {tid} × {lay.stride:,} = {lay.offset:,} = 0x{lay.offset:X} from the table's start, "
            f"since a row is {table.dim:,} values × {lay.itemsize:g} B = {lay.stride:,} B. Reading it is one "
            f"contiguous copy; one-hot × E would spend {cost.onehot_flops:,} FLOPs on the same row.")
    return Claim(text, (("id", tid), ("offset", lay.offset), ("stride", lay.stride), ("flops", cost.onehot_flops)))


def _cost(table, tokenized) -> Claim:
    from explorer.core.cost.parameters import params, table_bytes
    from explorer.core.units import format_mb

    n = params(table.vocab_size, table.dim)
    b32, b16 = table_bytes(table.vocab_size, table.dim, "float32"), table_bytes(table.vocab_size, table.dim, "float16")
    text = (f"E holds V × d = {table.vocab_size:,} × {table.dim:,} = {n:,} parameters: {format_mb(b32)} in float32 "
            f"(4 bytes each) and {format_mb(b16)} in float16 or bfloat16, half as much. Training it with Adam keeps "
            f"weights, gradient and two moments, about 4 × {format_mb(b32)}.")
    return Claim(text, (("params", n), ("bytes32", b32), ("bytes16", b16)))


def why_words(table) -> tuple[str, ...]:
    """Three words for "why vectors" that are rows of ``table`` (two related, one not), or ()."""
    for words in WHY_TRIPLES:
        if all(_word_id(table, w) is not None for w in words):
            return words
    return ()


def _why(table, tokenized) -> Claim:
    from explorer.core.cost.why import why_vectors

    words = why_words(table)
    why = why_vectors(table, words, tokenized.tokens)
    if why.n < 3:
        return Claim("This vocabulary lacks the words to compare; type three words in the box above "
                     "to see ids, one-hot vectors and learned rows side by side.", (("words", why.labels),))
    a, b, c = why.labels[:3]
    ia, ib, ic = (int(x) for x in why.ids[:3])
    cab, cac = float(why.cosine[0, 1]), float(why.cosine[0, 2])
    nearer = b if cab > cac else c
    text = (f"As ids, {a} = {ia}, {b} = {ib} and {c} = {ic}: |{b} − {a}| = {abs(ib - ia)} and |{c} − {a}| = "
            f"{abs(ic - ia)}, distances that mean nothing. As one-hot vectors every pair is √2 = "
            f"{float(why.onehot_distance[0, 1]):.3f} apart with cosine 0. The learned rows know better: "
            f"cos({a}, {b}) = {cab:+.2f}, cos({a}, {c}) = {cac:+.2f}, so {nearer} is the nearer.")
    return Claim(text, (("words", why.labels[:3]), ("ids", (ia, ib, ic)), ("cos_ab", cab), ("cos_ac", cac)))


def _random(table, tokenized) -> Claim:
    from explorer.core.geometry.vectors import random_vector_check

    check = random_vector_check(table, n_pairs=5000, seed=0)
    text = (f"Two random vectors in d = {check.dim:,} dimensions have a cosine close to N(0, 1/d): here "
            f"{check.n_pairs:,} random pairs spread with standard deviation {check.random_std:.4f}, against "
            f"1/√d = {check.theory_std:.4f}, and {100 * check.within_bound:.1f} % of them have |cos| ≤ "
            f"{check.bound:.3f}. In high dimensions unrelated directions are nearly orthogonal, so a cosine of "
            f"{min(0.9, 10 * check.theory_std):.2f} already means something.")
    return Claim(text, (("dim", check.dim), ("random_std", check.random_std), ("theory_std", check.theory_std),
                        ("within_bound", check.within_bound), ("bound", check.bound)))


def analogy_words(table) -> tuple[str, str, str, str] | None:
    """The first of ANALOGIES whose four words are rows of ``table``, or None."""
    for words in ANALOGIES:
        if all(_word_id(table, w) is not None for w in words):
            return words
    return None


def _projection(table, tokenized) -> Claim:
    from explorer.core.geometry.analogy import analogy_job
    from explorer.core.sources.loading import ClassIndex
    from explorer.core.training.frames import class_silhouette

    classes = ClassIndex.from_table(table)
    facts: list[tuple[str, object]] = []
    if classes is not None:
        sil = class_silhouette(table.matrix(), classes.of)
        facts += [("classes", len(classes.names)), ("silhouette", sil)]
        first = (f"The {table.vocab_size:,} rows of this model fall into {len(classes.names)} word classes, "
                 f"coloured in the projection; their cosine silhouette is {sil:+.2f} (0: no structure, 1: tight, "
                 "separate clusters), so words of one class sit together.")
    else:
        first = "This model has no word classes to colour; the projection shows its rows' two main directions."
    words = analogy_words(table)
    if words is None:
        missing = [w for w in ANALOGIES[0] if _word_id(table, w) is None]
        second = (f" It has no row for {', '.join('“' + w + '”' for w in missing)}, so king − man + woman cannot "
                  "run here; the clusters are what it shows.")
        facts.append(("analogy", None))
        return Claim(first + second, tuple(facts))
    a, b, c, want = words
    ids = [_word_id(table, w) for w in (a, b, c, want)]
    result = run_to_end(analogy_job(table, *ids[:3]))
    answers = result.ids()
    best = table.shown_piece(answers[0]).text if answers else "?"
    rank = answers.index(ids[3]) + 1 if ids[3] in answers else None
    second = (f" The analogy {a} − {b} + {c} lands nearest to “{best}” (cosine {result.best.cosine:+.2f})"
              + (f"; “{want}” is answer {rank} of {len(answers)}." if rank else
                 f"; “{want}” is not among its {len(answers)} nearest answers."))
    facts += [("analogy", (a, b, c)), ("answers", tuple(answers)), ("rank", rank)]
    return Claim(first + second, tuple(facts))


def _backward(table, tokenized) -> Claim:
    """The step the Lookup view's Backward page shows: the same seeded G and
    the same scatter-add as ``grad --json``. Every sum is taken on the
    unrounded values; only the sentence rounds what it prints."""
    ids = _ids(tokenized)
    g = upstream_gradient(len(ids), table.dim)
    back = lookup_backward(ids, g, table.vocab_size)
    grad = back.dense()
    nonzero = [int(i) for i in back.rows]
    counts = {int(i): len(p) for i, p in zip(back.rows, back.positions)}
    rep = max(nonzero, key=lambda i: counts[i])
    parts = [g[k].astype(np.float64) for k, i in enumerate(ids) if i == rep]
    text = (f"A loss on the batch [{', '.join(map(str, ids))}] sends back one upstream vector per position, and "
            f"dL/dE = one_hot(x)ᵀ G adds each into its row: only rows {' and '.join(map(str, nonzero))} get a "
            f"gradient, {len(nonzero)} of {table.vocab_size}, every other row exactly 0.")
    if counts[rep] > 1:
        text += (f" Row {rep} appears {counts[rep]} times, so its gradient is the sum "
                 f"{' + '.join(_vec(p, 3) for p in parts)} = {_vec(grad[rep], 3)}.")
    return Claim(text, (("ids", tuple(ids)), ("rows_with_gradient", tuple(nonzero)), ("repeated", rep),
                        ("grad", grad), ("upstream", g)))


def _training(cfg: TrainConfig, history) -> Claim:
    from explorer.core.training.lessons import training_lesson

    lesson = training_lesson(cfg, history)
    v = history.vocab_size
    grad_min = int(history.series("grad_rows").min())
    changed_min = int(history.series("changed_rows").min())
    mean = 100 * float(history.series("input_grad_rows").mean()) / v
    if cfg.tied:
        text = (f"Tied, over {history.n:,} steps: at every step {'all' if grad_min == v else 'at least'} "
                f"{grad_min:,} of the {v:,} rows had a gradient, though the batch's ids were only {mean:.1f} % of "
                "them: the output projection is E itself, and the softmax reaches every row. AdamW's decay moved "
                f"{'every row' if changed_min == v else f'at least {changed_min:,} rows'} at every step.")
    else:
        text = (f"Untied, over {history.n:,} steps: on average only {mean:.1f} % of the {v:,} rows got a gradient "
                f"per step, the rows of the batch's ids. {lesson.rare}")
    text += " The caption under the charts says, step by step, what the optimiser did."
    return Claim(text, (("grad_rows_min", grad_min), ("changed_rows_min", changed_min), ("steps", history.n),
                        ("mean_grad_pct", mean)))


def _context(table, tokenized) -> Iterator[tuple[float, str]]:
    from explorer.core.cost.context import choose_demonstration, context_plan, same_row
    from explorer.core.cost.first_layer import first_layer_states

    word, sentences = choose_demonstration(table)
    same = same_row(table, sentences, word)
    if not same.ok:
        return Claim(f"This model has no word that shows it in two sentences; type one on this page. "
                     f"({same.message})", (("word", None),))
    tid = same.occurrences[0].id
    text = ("" if word == "bank" else f"This model has no “bank”, so it shows the point with “{word}”. ") + (
        f"“{word}” is id {tid} in both “{sentences[0]}” and “{sentences[1]}”: one row, "
        f"{'identical to the last bit' if same.rows_equal else 'not identical?'} — the lookup knows no context.")
    facts = [("word", word), ("id", tid), ("same_id", same.same_id), ("rows_equal", same.rows_equal)]
    plan = context_plan(table, same)
    if plan.ok:
        yield 0.5, "Running the first layer…"
        result = first_layer_states(plan.folder, plan.sequences, plan.picks)
        after = result.stages[-1]
        cos = result.cosine(after)
        text += f" After the first layer the two differ: their cosine is {cos:.3f}, no longer 1."
        facts.append(("cosine_after", cos))
    else:
        text += f" {plan.reason}"
    return Claim(text, tuple(facts))


_CLAIMS = {"rows": _rows, "onehot": _onehot, "address": _address, "cost": _cost, "why": _why, "random": _random,
           "projection": _projection, "backward": _backward}


def claim_job(step: TourStep, table=None, tokenized=None, history=None) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields progress, returns the step's :class:`Claim`.

    ``table`` and ``tokenized`` are what the step opened; ``history`` the
    run of a training step.
    """
    yield 0.0, f"Step “{step.title}”…"
    if step.training is not None:
        return _training(step.training, history)
    if step.key == "context":
        return (yield from _context(table, tokenized))
    return _CLAIMS[step.key](table, tokenized)


def claim_for(step: TourStep, table=None, tokenized=None, history=None) -> Claim:
    """:func:`claim_job` run to its end (tests, the command line)."""
    return run_to_end(claim_job(step, table, tokenized, history))
