"""``python -m explorer inspect --model SPEC --text TEXT [--k N] [--json] [--input-layer] [--output-layer]``:
tokenize a text and show each token's row and its nearest rows by cosine.

``--json`` prints :func:`inspect_data` (strict JSON); ``--input-layer``
adds the model's own input vectors (explorer/cli/input_layer.py);
``--output-layer`` each token's row of the output matrix.
"""

from __future__ import annotations

import json

from explorer.cli.errors import CliError
from explorer.cli.output import native_stderr_held, open_table, print_table

__all__ = ["add_inspect_parser", "cmd_inspect", "inspect_data"]


def add_inspect_parser(sub, text_help: str) -> None:
    i = sub.add_parser("inspect", help="tokenize a text and show its rows and neighbours")
    i.add_argument("--model", default="default")
    i.add_argument("--text", required=True, help=f"the text; {text_help}")
    i.add_argument("--k", type=int, default=5, help="neighbours per token")
    i.add_argument("--json", action="store_true")
    i.add_argument("--input-layer", action="store_true",
                   help="add each token's position id and the model's input vectors "
                        "(positions, token types, LayerNorm)")
    i.add_argument("--output-layer", action="store_true",
                   help="add each token's row of the output matrix (lm_head: logits = h @ W_out.T); "
                        "E's own row when tied")


def add_output_layer(data: dict, table) -> dict:
    """Each token's ``output_row``: its row of the output matrix, the one the
    model computes its logit with (E's own row when tied; None when the files
    hold no output matrix, or the token's ``row`` was not printed)."""
    from explorer.core.sources.output import tying_word
    from explorer.core.tokens.inspection import finite_list

    out = table.output_table()
    data["output_layer"] = {
        "tied": table.tied,
        "tying": tying_word(table.tied, table.kind),
        "how": table.output_how,
        "tensor": None if out is None else out.tensor_name,
    }
    for tok in data["tokens"]:
        ok = out is not None and tok["id"] is not None and tok["row"] is not None
        tok["output_row"] = finite_list(out.row(int(tok["id"]))) if ok else None
    if out is None:
        data["notes"].append(f"No output matrix: {table.output_how or 'the table has no model around it'}.")
    return data


def inspect_data(spec: str, text: str, k: int = 5, input_layer: bool = False, output_layer: bool = False) -> dict:
    """Everything `inspect --json` prints, as strict JSON data (no NaN or
    Infinity: non-finite values are None). See :func:`explorer.core.tokens.inspection.inspect_text`;
    ``input_layer``: :func:`explorer.cli.input_layer.add_input_layer`."""
    from explorer.core.tokens.inspection import inspect_text

    table = open_table(spec)
    with native_stderr_held():
        result = inspect_text(table, text, k)
    data = result.as_json()
    if output_layer:
        add_output_layer(data, table)
    if input_layer:
        from explorer.cli.input_layer import add_input_layer

        return add_input_layer(data, table, result.tokens)
    return data


def cmd_inspect(args) -> int:
    if args.k < 1:
        raise CliError("--k must be at least 1")
    data = inspect_data(args.model, args.text, args.k, args.input_layer, args.output_layer)
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    from explorer.core.sources.output import tying_word

    tied = tying_word(data["tied"], data.get("kind", ""))
    print(f"{data['name']}  [{data['model']}]")
    print(f"E: {data['vocab_size']:,} x {data['dim']:,} {data['dtype']}, {data['params']:,} parameters, "
          f"{data['bytes']:,} bytes, row stride {data['row_bytes']:,} bytes, {tied}")
    for note in data["notes"]:
        print(f"note: {note}")
    if not data["tokens"]:
        print("(no tokens: the text is empty)")
        return 0
    rows = [("#", "piece", "id", "byte offset", "row (first values)", "nearest by cosine")]
    for t, nb in zip(data["tokens"], data["neighbors"]):
        piece = t["shown"] + (" (special)" if t["special"] else "")
        ident = "-" if t["id"] is None else f"{t['id']:,}"
        if t["problem"] is not None:
            rows.append((t["position"], piece, ident, "-", f"no row: {t['problem']['label']}", "-"))
            continue
        rows.append((t["position"], piece, ident, f"{t['byte_offset']:,} = 0x{t['byte_offset']:X}",
                     _first_values(t["row"]),
                     "(not searched)" if nb is None else
                     ", ".join(f"{n['shown']} {n['cosine']:.2f}" for n in nb[:3])))
    print_table(rows, right=(0, 2, 3))
    # the notes count every kind of bad token; the first few are explained in full
    for t in [t for t in data["tokens"] if t["problem"] is not None][:3]:
        print(f"token {t['position']}: {t['problem']['message']}")
    for w in data["words"]:
        print(f"word {w['text']!r} is split into {len(w['positions'])} pieces; their mean pooled row starts "
              f"{_first_values(w['mean'])}")
    if args.input_layer:
        from explorer.cli.input_layer import print_input_layer

        print_input_layer(data)
    return 0


def _first_values(row: list | None) -> str:
    if row is None:
        return "(not printed)"
    vals = ", ".join("nan/inf" if x is None else f"{x:+.3f}" for x in row[:4])
    return f"[{vals}{', ...' if len(row) > 4 else ''}]"
