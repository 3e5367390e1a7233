"""A health report in words: the command line's text output and the
sentences the view shows. No Qt here."""

from __future__ import annotations

import math

from ..tokens import display_piece
from .report import CATEGORY_LABELS, HealthReport

__all__ = ["verdict", "category_line", "format_report", "format_number"]


def format_number(x: float, digits: int = 3) -> str:
    """A float for a table cell; "–" when not finite."""
    return f"{x:.{digits}f}" if math.isfinite(x) else "–"


def verdict(report: HealthReport) -> str:
    """One or two sentences: how many rows are flagged, against what bar,
    and what chance alone would flag."""
    n = report.flagged_count
    v = report.vocab_size
    chance = f"a table of random rows would flag {report.expected_by_chance:g} rows on average by chance"
    if not math.isfinite(report.norm_threshold) and not math.isfinite(report.score_threshold):
        return (f"{n:,} of {v:,} rows flagged (all zero); too few rows to tell what a typical row is, "
                "so the indicators flag nothing.")
    bar = (f"norm below {format_number(report.norm_threshold)} or score above "
           f"{format_number(report.score_threshold)}")
    if n == 0:
        return f"No row is flagged: none has a {bar}, and {chance}. Nothing here beyond chance."
    return (f"{n:,} of {v:,} rows look under-trained ({bar}, or all zero); {chance}.")


def category_line(report: HealthReport) -> str:
    """Ids per round-trip category, in words."""
    counts = report.category_counts()
    return ", ".join(f"{c:,} {CATEGORY_LABELS[name]}" for name, c in counts.items() if c or name == "ok")


def format_report(report: HealthReport, top: int, piece_of) -> str:
    """What ``health`` prints without ``--json``."""
    lines = [
        f"{report.name}  [{report.spec}]",
        f"E: {report.vocab_size:,} x {report.dim:,} {report.dtype}; tokenizer {report.tokenizer_size:,} ids; "
        f"checked in {report.seconds:.1f} s",
        f"reference: {report.reference.description}",
        f"tokens: {category_line(report)}",
        f"rows: {verdict(report)}",
    ]
    rows = {k: v for k, v in report.flag_counts().items() if v and k not in ("low_norm", "high_score",
                                                                             "under_trained")}
    if rows:
        lines.append("also: " + ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in rows.items()))
    lines += [f"note: {n}" for n in report.notes]
    cands = report.top(top, piece_of)
    if not cands:
        return "\n".join(lines)
    table = [("rank", "id", "piece", "category", "norm", "score", "flagged", "corpus")]
    for c in cands:
        table.append((str(c.rank + 1), f"{c.id:,}", display_piece(c.piece)[:24], CATEGORY_LABELS[c.category],
                      format_number(c.norm), format_number(c.score), ", ".join(c.flags) if c.flagged else "",
                      "" if c.corpus_count is None else f"{c.corpus_count:,}"))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    right = {0, 1, 4, 5, 7}
    for k, r in enumerate(table):
        lines.append("  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in
                               enumerate(zip(r, widths))).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
