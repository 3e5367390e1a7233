"""A health report in words: the command line's text output and the
sentences the view shows. No Qt here."""

from __future__ import annotations

import math

import numpy as np

from explorer.core.health.indicators import MIN_DIMS
from explorer.core.health.report import CATEGORY_LABELS, HealthReport

__all__ = ["verdict", "category_line", "format_report", "format_number", "lesson", "write_candidates_csv",
           "CSV_COLUMNS", "SIDE_NOTES"]

#: the note on the side scored, by side (the window says it in short in its "Scored on" line)
SIDE_NOTES = {
    "output": "Scored on the output matrix (its own, not tied to E): a token never seen in training keeps its "
              "random input row, while its output row is pushed down with every other unseen token's. The input "
              "rows' norms are the second indicator.",
    "shared": "Tied: the input table is also the output matrix, so it is scored once; a low norm is no sign of "
              "under-training here (frequent tokens have small rows).",
}


_CONDITION_WORDS = {
    "zero": "all-zero rows",
    "non_finite": "rows with a non-finite value",
    "exact_duplicate": "rows with an exact duplicate",
    "near_duplicate": "rows with a near duplicate",
}


def format_number(x: float, digits: int = 3) -> str:
    """A float for a table cell; "–" when not finite."""
    return f"{x:.{digits}f}" if math.isfinite(x) else "–"


def verdict(report: HealthReport) -> str:
    """One sentence: how many rows are flagged, against what bar, and what
    chance alone would flag."""
    n = report.flagged_count
    v = report.vocab_size
    chance = f"random rows would give {report.expected_by_chance:g} by chance"
    if not math.isfinite(report.norm_threshold) and not math.isfinite(report.score_threshold):
        return (f"{n:,} of {v:,} rows flagged (all zero); too few rows to tell what a typical row is, "
                "so the indicators flag nothing.")
    norm = report.norm_threshold
    judged_by_norm = report.side != "shared"  # in a tied model a small row is a frequent token
    bars, asides = [], []
    if judged_by_norm and math.isfinite(norm) and norm > 0:
        bars.append(f"norm below {format_number(norm)}")
    elif judged_by_norm and math.isfinite(norm):  # a bar at or below zero: no norm can be under it
        asides.append("the norms spread too widely for a small one to stand out")
    if report.dim >= MIN_DIMS:
        bars.append(f"score above {format_number(report.score_threshold)}")
    else:  # rows of one or two values: no score bar
        asides.append(f"with {report.dim} value{'s' * (report.dim != 1)} per row the score tells no rows apart "
                      "(once the first principal component is removed, at most one direction is left)")
    if not bars:
        return f"{n:,} of {v:,} rows flagged (all zero); {'; '.join(asides)}, so the indicators flag nothing."
    bar, aside = " or ".join(bars), "".join(f"; {a}" for a in asides)
    if n == 0:
        return f"No row is flagged: none has a {bar}{aside}; {chance}. Nothing here beyond chance."
    return f"{n:,} of {v:,} rows look under-trained ({bar}, or all zero){aside}; {chance}."


#: what the round trip says of a table without a tokenizer
NO_TOKENIZER = "not checked: this table has no tokenizer (ids are typed as numbers), so there is no round trip"


def category_line(report: HealthReport) -> str:
    """Ids per round-trip category, in words; or that there was no tokenizer to check."""
    if not report.round_trip_checked:
        return NO_TOKENIZER
    counts = report.category_counts()
    return ", ".join(f"{c:,} {CATEGORY_LABELS[name]}" for name, c in counts.items() if c or name == "ok")


_SIDE_WORDS = {
    "output": "the output matrix (a second matrix, not tied to E); input norms as the second indicator",
    "shared": "the one matrix both ends share (tied)",
    "input": "the input table E (the files hold no output matrix)",
}


def side_line(report: HealthReport) -> str:
    """Which matrix was scored, in words."""
    return _SIDE_WORDS[report.side]


def candidates_line(report: HealthReport) -> str:
    """How many candidates the cut keeps, of how many reachable tokens."""
    share = 100 * len(report.candidates) / max(1, len(report.ranked))
    return (f"{len(report.candidates):,} candidates: the top {share:.0f} % of the {len(report.ranked):,} tokens "
            "a text can reach (special, unreachable and partial-UTF-8 tokens are listed apart)")


def apart_lines(report: HealthReport, table, shown: int = 12) -> list[str]:
    """The lists kept apart from the ranking, a line each."""
    def names(ids) -> str:
        ids = [int(i) for i in ids]
        text = ", ".join(f"{table.shown_piece(i).text}" for i in ids[:shown])
        return text + (f", … ({len(ids) - shown:,} more)" if len(ids) > shown else "")

    lines = []
    special = report.ids_in("special")
    if len(special):
        lines.append(f"special ({len(special):,}): {names(special)}")
    if report.unreachable:
        single = [u.id for u in report.unreachable if u.single]
        multi = [u.id for u in report.unreachable if not u.single]
        lines.append(f"unreachable ({len(report.unreachable):,}: {len(single):,} encode to another single token, "
                     f"{len(multi):,} to several): {names(single + multi)}")
    partial = report.ids_in("undecodable")
    if len(partial):
        lines.append(f"partial UTF-8 ({len(partial):,}): {names(partial)}")
    if report.byte_tokens:
        never = [b for b in report.byte_tokens if b.kind == "never in UTF-8"]
        said = ", ".join(f"0x{b.value:02X} (id {b.id:,})" for b in never[:shown]) if never else "none"
        lines.append(f"single-byte tokens: {len(report.byte_tokens):,}; bytes never in UTF-8: {said}")
    return lines


def format_report(report: HealthReport, top: int, table, verification=None) -> str:
    """What ``health`` prints without ``--json`` (``table``: the table
    checked, for its pieces; ``verification``: what the model said about
    the top candidates, when it was asked)."""
    lines = [
        f"{report.name}  [{report.spec}]",
        f"E: {report.vocab_size:,} x {report.dim:,} {report.dtype}; tokenizer {report.tokenizer_size:,} ids; "
        f"checked in {report.seconds:.1f} s",
        f"scored: {side_line(report)}",
        f"reference: {report.reference.description}",
        f"tokens: {category_line(report)}",
        f"rows: {verdict(report)}",
        f"candidates: {candidates_line(report)}",
    ]
    conditions = {k: v for k, v in report.flag_counts().items() if v and k not in ("low_norm", "high_score",
                                                                                   "under_trained")}
    if conditions:
        lines.append("also: " + ", ".join(f"{v:,} {_CONDITION_WORDS[k]}" for k, v in conditions.items()))
    lines += [f"note: {n}" for n in report.notes]
    lines += apart_lines(report, table)
    if verification is not None:
        lines.append(verification_line(verification))
    cands = report.top(top, table.piece)
    if not cands:
        return "\n".join(lines)
    header = ("rank", "id", "piece", "norm", "score", "flagged", "corpus", "in longer tokens")
    rows = [header + (("repeat p", "verdict") if verification is not None else ())]
    for c in cands:
        longer = ", ".join(table.shown_piece(k).text[:20] for k in report.contained.get(c.id, ())[:2])
        row = (str(c.rank + 1), f"{c.id:,}", table.shown_piece(c.id).text[:24], format_number(c.norm),
               format_number(c.score), ", ".join(c.flags) if c.flagged else "",
               "" if c.corpus_count is None else f"{c.corpus_count:,}", longer)
        if verification is not None:
            v = verification.of(c.id)
            row += ("", "") if v is None else (f"{v.probability:.2g}", v.status)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {0, 1, 3, 4, 6, 8}
    for k, r in enumerate(rows):
        lines.append("  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in
                               enumerate(zip(r, widths))).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verification_line(result) -> str:
    """What the model said, in one line."""
    return (f"verified with {result.model}: {result.confirmed_count:,} of {len(result.results):,} top candidates "
            f"the model cannot repeat (probability below {result.threshold:g}; {result.strong_count:,} below 0.001) "
            f"in {result.seconds:.0f} s")


def lesson(report: HealthReport, table, shown: int = 4) -> str:
    """Two or three sentences linking what the check found to the training
    lesson (a row moves only when its token is in a batch).

    On the bundled model the flagged words are named with their counts in
    the corpus it was trained on; on a table where nothing stands out,
    that is said.
    """
    flagged = [int(i) for i in report.flagged[:shown]]
    rule = "As the Training tab shows, a row moves only when its token is in a batch"
    if not flagged:
        return ("A table of random rows looks like this, and so does one whose every token was seen often "
                f"enough in training. {rule}; a token the training text never holds would stand out here.")
    words = ", ".join(_named(report, i, table) for i in flagged)
    more = f" and {report.flagged_count - len(flagged):,} more" if report.flagged_count > len(flagged) else ""
    if report.corpus_counts is not None:
        counts = report.corpus_counts[report.corpus_counts >= 0]
        typical = int(np.median(counts)) if len(counts) else 0
        theirs, usual = _median(report.norms[flagged]), _median(report.norms)
        norms = (f", norm about {theirs:.2f} against {usual:.2f} for a typical row" if theirs is not None
                 and usual is not None else " (their norms are not finite numbers)")
        return (f"Flagged: {words}{more}, occurring {_times(report, flagged)} in the model's training corpus "
                f"(a typical word: {typical:,} times). {rule}: these never were, so their rows kept their random "
                f"start{norms}.")
    kind = {"unused_tokens": "the tokenizer's unused tokens", "model": "the rows the model never trained",
            "lowest_norm": "the shortest input rows"}.get(report.reference.kind, "the reference rows")
    shorter = "" if report.side == "shared" else ", or far shorter than typical"
    return (f"First: {words}{more}, pointing like {kind} once the direction all rows share is removed{shorter}. "
            f"{rule}: these tokens were (almost) never in the training text, so their rows kept (almost) their "
            "start. They are the \"glitch tokens\" that make models misbehave.")


def _median(values: np.ndarray) -> float | None:
    """The median of the finite values, or None when there is none."""
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if finite.size else None


def _named(report: HealthReport, i: int, table) -> str:
    count = ""
    if report.corpus_counts is not None and report.corpus_counts[i] >= 0:
        count = f" ({int(report.corpus_counts[i]):,})"
    return f"“{table.shown_piece(i).text}”{count}"


def _times(report: HealthReport, ids) -> str:
    counts = sorted({int(report.corpus_counts[i]) for i in ids if report.corpus_counts[i] >= 0})
    if counts == [0]:
        return "0 times"
    if not counts:
        return "no times"
    return f"{counts[0]:,} to {counts[-1]:,} times"


CSV_COLUMNS = ("rank", "id", "piece", "shown", "category", "norm", "norm_z", "score", "flagged", "flags",
               "duplicate_of", "corpus_count", "repeat_probability", "glitch_confirmed", "list", "contained_in",
               "detail")


def write_candidates_csv(path, report: HealthReport, table, n: int, verification=None) -> int:
    """Write the ``n`` most under-trained rows as CSV (:data:`CSV_COLUMNS`);
    the last two columns are filled for the tokens a
    :class:`~.verify.VerificationResult` covers. Returns the rows written
    (the header not counted)."""
    import csv

    cands = report.top(n, table.piece)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for c in cands:
            v = verification.of(c.id) if verification is not None else None
            w.writerow([c.rank + 1, c.id, c.piece, table.shown_piece(c.id).text, c.category, _g(c.norm),
                        _g(c.norm_z), _g(c.score), int(c.flagged), " ".join(c.flags),
                        "" if c.duplicate_of is None else c.duplicate_of,
                        "" if c.corpus_count is None else c.corpus_count,
                        "" if v is None else f"{v.probability:.6g}", "" if v is None else int(v.confirmed),
                        "ranking", " ".join(str(k) for k in report.contained.get(c.id, ())), ""])
        apart = [("special", int(i), "") for i in report.ids_in("special")]
        apart += [("unreachable", u.id, ("single-token " if u.single else "multi-token ") +
                   " ".join(map(str, u.encodes_to))) for u in report.unreachable]
        apart += [("partial_utf8", int(i), "") for i in report.ids_in("undecodable")]
        apart += [("byte", b.id, f"0x{b.value:02X} {b.kind}") for b in report.byte_tokens]
        for kind, i, detail in apart:
            w.writerow(["", i, table.piece(i), table.shown_piece(i).text, report.category_of(i),
                        _g(float(report.norms[i])), "", _g(float(report.scores[i])), "", "", "", "", "", "", kind, "",
                        detail])
    return len(cands)


def _g(x: float) -> str:
    return f"{x:.6g}" if math.isfinite(x) else ""
