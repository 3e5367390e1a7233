"""``python -m explorer health --model SPEC [--top N] [--verify N] [--json]``:
rows that training left behind, the tokenizer's round trip, and (with
``--verify``) the model's own forward pass asked to repeat the top
candidates (explorer/core/health)."""

from __future__ import annotations

import json

from explorer.cli.errors import CliError
from explorer.cli.output import native_stderr_held, open_table

__all__ = ["add_health_parser", "cmd_health"]


def add_health_parser(sub) -> None:
    h = sub.add_parser("health", help="rows that training left behind, and the tokenizer's round trip")
    h.add_argument("--model", default="default")
    h.add_argument("--top", type=int, default=100, help="candidates to list, most under-trained first")
    h.add_argument("--verify", type=int, default=0, metavar="N",
                   help="ask the model itself to repeat the top N candidates (Magikarp's three prompts; loads the "
                        "whole model, minutes)")
    h.add_argument("--json", action="store_true")


def cmd_health(args) -> int:
    if args.top < 0:
        raise CliError("--top must be 0 or more")
    if args.verify < 0:
        raise CliError("--verify must be 0 or more")
    from explorer.core.health import health_report
    from explorer.core.health.text import format_report
    from explorer.core.health.verify import VerifyUnavailable, iter_verify
    from explorer.core.jobs import run_to_end

    table = open_table(args.model)
    with native_stderr_held():
        report = health_report(table)
    verification, why_not = None, None
    if args.verify:
        ids = [int(i) for i in report.ranked[: args.verify]]
        try:
            with native_stderr_held():
                verification = run_to_end(iter_verify(table, ids, leave_a_core=False))
        except VerifyUnavailable as exc:
            why_not = str(exc)
    if args.json:
        data = report.as_json(args.top, table.piece, lambda i: table.shown_piece(i).text)
        if args.verify:
            data["verification"] = ({"available": False, "reason": why_not} if verification is None
                                    else verification.as_json())
            data["verified"] = None if verification is None else verification.confirmed_count
            said = {} if verification is None else {v.id: v for v in verification.results}
            for c in data["candidates"]:
                if c["id"] in said:
                    c["verification"] = said[c["id"]].as_json()
        print(json.dumps(data, allow_nan=False))
    else:
        print(format_report(report, args.top, table, verification))
        if why_not:
            print(f"verification: not possible here: {why_not}")
    return 0

