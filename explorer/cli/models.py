"""``python -m explorer models [--json]``: the models this machine can open."""

from __future__ import annotations

import json

from explorer.cli.output import print_table

__all__ = ["add_models_parser", "cmd_models"]


def add_models_parser(sub) -> None:
    m = sub.add_parser("models", help="list the models this machine can open")
    m.add_argument("--json", action="store_true")


def cmd_models(args) -> int:
    from explorer.core.sources import list_sources, recent
    from explorer.core.sources.output import tying_word

    infos = list_sources(recent.load())
    if args.json:
        print(json.dumps([i.as_dict() for i in infos], indent=1))
        return 0
    rows = [("spec", "V", "d", "dtype", "tied", "origin", "name")]
    for i in infos:
        rows.append((
            i.spec,
            f"{i.vocab_size:,}" if i.vocab_size else "?",
            f"{i.dim:,}" if i.dim else "?",
            i.dtype or "?",
            tying_word(i.tied, i.origin),
            i.origin,
            i.name if not i.error else f"cannot open: {i.error}",
        ))
    print_table(rows, right=(1, 2))
    return 0
