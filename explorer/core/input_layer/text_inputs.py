"""The input layer for the typed text: per token its parts and the model's
input vector, with the tokens past the position limit marked. No Qt here."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from explorer.core.input_layer.cache import input_layer_of
from explorer.core.input_layer.layer import InputLayer, PositionLimitError
from explorer.core.input_layer.vectors import InputVectors, input_vectors

__all__ = ["TextInputs", "text_inputs", "text_inputs_job", "MAX_TEXT_TOKENS"]

#: tokens of a text whose parts are computed (a view shows a few dozen)
MAX_TEXT_TOKENS = 512


@dataclass(frozen=True)
class TextInputs:
    """The input layer applied to a text's tokens.

    Attributes
    ----------
    layer : InputLayer
    vectors : InputVectors
        For the tokens that have a row and a position (``vectors.positions``
        says which tokens of the text they are).
    n_tokens : int
        Tokens of the text.
    past_limit : tuple of int
        Positions of the tokens past the position table (no input vector).
    no_row : tuple of int
        Positions of the tokens that name no row of the table.
    not_computed : int
        Tokens past :data:`MAX_TEXT_TOKENS` (within the limit) left out.
    limit_message : str
        The error's sentence when tokens are past the limit, else "".
    """

    layer: InputLayer
    vectors: InputVectors
    n_tokens: int
    past_limit: tuple[int, ...]
    no_row: tuple[int, ...]
    not_computed: int
    limit_message: str = ""


def text_inputs(table, tokens: Sequence, max_tokens: int = MAX_TEXT_TOKENS) -> TextInputs:
    """The parts and input vectors of ``tokens`` (Token objects of the text).

    Tokens past the model's position table get no vector: they are listed
    in ``past_limit`` and ``limit_message`` says why, instead of an error.
    """
    layer = input_layer_of(table)
    limit = layer.max_tokens
    message = ""
    past = tuple(t.position for t in tokens if limit is not None and t.position >= limit)
    if past:
        try:
            layer.check_length(len(tokens))
        except PositionLimitError as exc:
            message = str(exc)
    usable = [t for t in tokens if t.ok and (limit is None or t.position < limit)]
    kept = usable[:max_tokens]
    got = input_vectors(table, layer, [t.id for t in kept], [t.position for t in kept])
    return TextInputs(layer, got, len(tokens), past, tuple(t.position for t in tokens if not t.ok),
                      len(usable) - len(kept), message)


def text_inputs_job(table, tokens: Sequence) -> Iterator[tuple[float, str]]:
    """Generator job around :func:`text_inputs`."""
    yield 0.0, "Adding positions to the token rows…"
    return text_inputs(table, tokens)
