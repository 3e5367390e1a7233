"""``python -m explorer analogy --model SPEC A B C [--top N] [--form unit|plain] [--json]``:
the rows nearest by cosine to Â − B̂ + Ĉ (``--form unit``, the default: each row
scaled to length 1 first) or to A − B + C (``--form plain``: the rows as stored),
A, B and C excluded.

Each of A, B, C must be one row of the table (core/word_row.py); otherwise
one ``error:`` line names the word, exit status 2 (cli.main prints it).
"""

from __future__ import annotations

import json

from explorer.core.geometry.analogy import AnalogyForm, analogy_job
from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table
from explorer.core.tokens.word_row import word_row

__all__ = ["add_analogy_parser", "cmd_analogy"]


def add_analogy_parser(sub) -> None:
    a = sub.add_parser("analogy", help="the rows nearest to A - B + C (king - man + woman)")
    a.add_argument("--model", default="default")
    # three positionals, not nargs=3 with a tuple metavar: argparse's help cannot format that (it crashed --help)
    a.add_argument("a", metavar="A", help="the word to start from (king), one row of the table")
    a.add_argument("b", metavar="B", help="the word to take away (man)")
    a.add_argument("c", metavar="C", help="the word to add (woman)")
    a.add_argument("--top", type=int, default=5, help="answers to print")
    a.add_argument("--form", choices=[f.value for f in AnalogyForm], default=AnalogyForm.UNIT.value,
                   help="unit (default): nearest to Â − B̂ + Ĉ, each row scaled to length 1 first; "
                        "plain: nearest to A − B + C, the rows as stored")
    a.add_argument("--json", action="store_true")


def analogy_data(spec: str, words: list[str], top: int, form: str = "unit") -> dict:
    """What ``analogy --json`` prints: ``{"model", "query", "form", "formula", "answers": [{"piece", "id",
    "cosine"}]}``."""
    table = open_table(spec)
    a, b, c = (word_row(table, w) for w in words)
    result = run_to_end(analogy_job(table, a, b, c, k=top, form=form))
    return result.as_json(spec, words, table.piece)


def cmd_analogy(args, error) -> int:
    """Run the subcommand; ``error`` is the CLI's user-error type (printed as ``error: ...``)."""
    if args.top < 1:
        raise error("--top must be at least 1")
    data = analogy_data(args.model, [args.a, args.b, args.c], args.top, args.form)
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    a, b, c = data["query"]
    print(f"{a} - {b} + {c}  [{data['model']}], nearest rows by cosine to {AnalogyForm(data['form']).words} "
          f"({a}, {b}, {c} excluded):")
    width = max([len(x["piece"]) for x in data["answers"]] + [5])
    for rank, x in enumerate(data["answers"], 1):
        print(f"{rank:3d}  {x['piece']:<{width}}  id {x['id']:>7,}  cosine {x['cosine']:+.3f}")
    return 0
