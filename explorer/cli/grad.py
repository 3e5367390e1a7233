"""``python -m explorer grad --model SPEC --text TEXT [--seed S] [--json]``:
the gradient a lookup gives the table, dL/dE = one_hot(x)ᵀ G, for the loss
L = Σ_t ⟨G_t, E[x_t]⟩ with a seeded upstream gradient G (core/lookup_backward.py).

A token without a row (an id past the table) is one ``error:`` line, exit 2
(cli.main prints it).
"""

from __future__ import annotations

import json

from explorer.core.lookup.backward import lookup_backward, text_ids, upstream_gradient
from explorer.core.sources import open_table

__all__ = ["add_grad_parser", "cmd_grad", "grad_data"]


def add_grad_parser(sub, text_help: str) -> None:
    g = sub.add_parser("grad", help="the gradient a lookup of TEXT gives the table (rows hit, their sums)")
    g.add_argument("--model", default="default")
    g.add_argument("--text", required=True, help=f"the text; {text_help}")
    g.add_argument("--seed", type=int, default=0, help="seed of the upstream gradient G")
    g.add_argument("--json", action="store_true")


def grad_data(spec: str, text: str, seed: int = 0):
    """(table, LookupBackward, the JSON data ``grad --json`` prints)."""
    table = open_table(spec)
    ids = text_ids(table, text)
    back = lookup_backward(ids, upstream_gradient(ids.size, table.dim, seed), table.vocab_size)
    return table, back, back.as_json(spec)


def cmd_grad(args, error) -> int:
    """Run the subcommand; ``error`` is the CLI's user-error type (printed as ``error: ...``)."""
    table, back, data = grad_data(args.model, args.text, args.seed)
    if back.ids.size == 0:
        raise error("the text gives no tokens: nothing is looked up, so nothing gets a gradient")
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    print(f"L = sum_t <G_t, E[x_t]>  [{args.model}], G seeded with {args.seed}: {back.ids.size} positions, "
          f"{back.distinct_ids} distinct ids")
    print(f"dL/dE = one_hot(x)^T G: {back.rows.size} of {table.vocab_size:,} rows get a gradient, "
          f"{back.zero_rows:,} rows are exactly zero")
    for row, grad, where in zip(back.rows, back.grad, back.positions):
        first = ", ".join(f"{v:+.3f}" for v in grad[:4]) + (", ..." if grad.size > 4 else "")
        sums = f"sum of {len(where)} contributions (positions {', '.join(map(str, where))})" if len(where) > 1 \
            else f"position {where[0]}"
        print(f"  row {int(row):>7,}  {table.piece(int(row))!r:<14} [{first}]  {sums}")
    return 0
