"""``inspect --input-layer``: the model's own input vectors for the text.

Adds to the inspection's JSON a ``position_id`` per token (the row of the
position table it reads; its ``position`` is already there) and a top-level
``input_layer`` object::

    {"positions": "learned" | "sinusoidal" | "rotary" | "none",
     "token_types": bool, "layer_norm": bool, "scale": float,
     "vectors": [[...], ...],      # one per token, as the model computes them
     ...}                          # plus the figures behind them

A text longer than the position table raises PositionLimitError (the CLI
prints it as one ``error:`` line, exit 2).
"""

from __future__ import annotations

import numpy as np

from explorer.cli.output import print_table
from explorer.core.tokens.inspection import InspectLimits, finite_list

__all__ = ["add_input_layer", "print_input_layer"]

_DEFAULT_LIMITS = InspectLimits()


def add_input_layer(data: dict, table, tokens, limits: InspectLimits = _DEFAULT_LIMITS) -> dict:
    """Add ``position_id`` to each token of ``data`` and the ``input_layer`` object.

    Parameters
    ----------
    data : dict
        What :meth:`Inspection.as_json` returned for ``tokens``; changed in place.
    table : EmbeddingTable
    tokens : list of Token
        The inspection's tokens (all of them: tokens that name no row still
        take a position; their vector is None).
    limits : InspectLimits
        Vectors are printed while ``row_values`` lasts (None past it, with a note).

    Raises
    ------
    PositionLimitError
        For a text with more tokens than the model's position table has rows.
    """
    from explorer.core.input_layer import input_vectors, read_input_layer

    layer = read_input_layer(table)
    layer.check_length(len(tokens))
    good = [t for t in tokens if t.ok]
    n = min(len(good), max(1, limits.row_values // max(1, table.dim))) if good else 0
    notes = list(layer.notes)
    if n < len(good):
        notes.append(f"Input vectors are printed for the first {n:,} of {len(good):,} tokens "
                     f"(at most {limits.row_values:,} values); inspect a shorter text for the rest.")
    got = input_vectors(table, layer, [t.id for t in good[:n]], [t.position for t in good[:n]])
    vector_of = {int(p): got.vectors[i] for i, p in enumerate(got.positions)}
    norms = {name: _norms(part, got.positions) for name, part in
             (("token", got.token_rows), ("position", got.position_rows), ("type", got.type_rows),
              ("sum", got.sums), ("layer_norm", got.normed))}
    for entry, tok in zip(data["tokens"], tokens):
        entry["position_id"] = int(tok.position + layer.position_offset) if layer.positions is not None \
            else int(tok.position)
    info = {
        "positions": layer.scheme,
        "token_types": layer.token_types is not None,
        "layer_norm": layer.layer_norm is not None,
        "scale": float(layer.scale),
        "max_tokens": layer.max_tokens,
        "position_offset": int(layer.position_offset),
        "layer_norm_eps": None if layer.layer_norm is None else float(layer.layer_norm.eps),
        "rotary": None if layer.rotary is None else {
            "theta": float(layer.rotary.theta), "head_dim": int(layer.rotary.head_dim),
            "rotary_dim": int(layer.rotary.rotary_dim), "context_length": layer.rotary.context_length,
            "source": layer.rotary.source},
        "vectors": [None if t.position not in vector_of else finite_list(vector_of[t.position]) for t in tokens],
        "norms": {name: [None if t.position not in values else values[t.position] for t in tokens]
                  for name, values in norms.items() if values is not None},
        "notes": notes,
    }
    data["input_layer"] = info
    return data


def _norms(part: np.ndarray | None, positions: np.ndarray) -> dict[int, float] | None:
    if part is None:
        return None
    values = np.sqrt(np.einsum("ij,ij->i", part, part, dtype=np.float64))
    return {int(p): (float(v) if np.isfinite(v) else None) for p, v in zip(positions, values)}


def print_input_layer(data: dict) -> None:
    """The readable form: what the model adds, and each token's norms."""
    info = data["input_layer"]
    parts = ["token row" + (f" × {info['scale']:.2f}" if info["scale"] != 1.0 else "")]
    if info["positions"] in ("learned", "sinusoidal"):
        parts.append("position row")
    if info["token_types"]:
        parts.append("token-type row 0")
    formula = " + ".join(parts)
    if info["layer_norm"]:
        formula = f"LayerNorm({formula})"
    print(f"input layer: positions {info['positions']}; input vector = {formula}")
    for note in info["notes"]:
        print(f"note: {note}")
    norms = info["norms"]
    names = [n for n in ("token", "position", "type", "sum", "layer_norm") if n in norms]
    rows = [("#", "pos id", "piece", *[f"|{n}|" for n in names])]
    for i, tok in enumerate(data["tokens"]):
        rows.append((tok["position"], tok["position_id"], tok["shown"],
                     *["-" if norms[n][i] is None else f"{norms[n][i]:.3f}" for n in names]))
    print_table(rows, right=(0, 1, *range(3, 3 + len(names))))
