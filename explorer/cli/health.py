"""``python -m explorer health --model SPEC [--top N] [--json]``: rows that
training left behind, and the tokenizer's round trip (explorer/core/health)."""

from __future__ import annotations

import json

from explorer.cli.errors import CliError
from explorer.cli.output import native_stderr_held, open_table

__all__ = ["add_health_parser", "cmd_health"]


def add_health_parser(sub) -> None:
    h = sub.add_parser("health", help="rows that training left behind, and the tokenizer's round trip")
    h.add_argument("--model", default="default")
    h.add_argument("--top", type=int, default=100, help="candidates to list, most under-trained first")
    h.add_argument("--json", action="store_true")


def cmd_health(args) -> int:
    if args.top < 0:
        raise CliError("--top must be 0 or more")
    from explorer.core.health import health_report
    from explorer.core.health.text import format_report

    table = open_table(args.model)
    with native_stderr_held():
        report = health_report(table)
    if args.json:
        print(json.dumps(report.as_json(args.top, table.piece, lambda i: table.shown_piece(i).text), allow_nan=False))
    else:
        print(format_report(report, args.top, table))
    return 0
