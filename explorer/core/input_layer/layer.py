"""What a model does to its token rows before its first block. No Qt here."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import ExplorerError
from explorer.core.input_layer.rotary import RotarySettings
from explorer.core.input_layer.stored import StoredTensor

__all__ = ["InputLayer", "LayerNormParams", "PositionLimitError", "SCHEMES"]

#: how a model tells positions apart
SCHEMES = ("learned", "sinusoidal", "rotary", "none")


class PositionLimitError(ExplorerError, ValueError):
    """A text has more tokens than the model's position table has rows."""


@dataclass(frozen=True)
class LayerNormParams:
    """The input LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias.

    Attributes
    ----------
    weight, bias : StoredTensor
        Vectors of length d (bias None for a model without one).
    eps : float
        From config.json (``layer_norm_eps``) or the GGUF metadata.
    """

    weight: StoredTensor
    bias: StoredTensor | None
    eps: float


@dataclass(frozen=True)
class InputLayer:
    """A model's input layer: how positions enter and what is added to E's rows.

    Attributes
    ----------
    scheme : str
        One of :data:`SCHEMES`: "learned" (a position table added to the
        rows), "sinusoidal" (a fixed table added), "rotary" (positions turn
        queries and keys inside attention; the input is the token row) or
        "none" (no positions the explorer can find).
    dim : int
        d, the width of the token rows.
    scale : float
        Factor on the token rows before anything is added (1.0, or sqrt(d)
        for a model that scales them).
    positions : StoredTensor or None
        The position table (rows = positions it can hold + ``position_offset``).
    position_offset : int
        Row of the table read for the first token (RoBERTa starts at 2).
    token_types : StoredTensor or None
        The token-type (segment) table; its row 0 is added to every token.
    layer_norm : LayerNormParams or None
    rotary : RotarySettings or None
    model : str
        What the settings call the model (its model_type or GGUF
        architecture), "" when nothing says.
    notes : tuple of str
        Sentences for the user: what the model has and how order enters it.
    """

    scheme: str
    dim: int
    scale: float = 1.0
    positions: StoredTensor | None = None
    position_offset: int = 0
    token_types: StoredTensor | None = None
    layer_norm: LayerNormParams | None = None
    rotary: RotarySettings | None = None
    model: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        if self.scheme not in SCHEMES:
            raise ValueError(f"unknown position scheme {self.scheme!r}")

    @property
    def max_tokens(self) -> int | None:
        """Tokens a text may have (positions the table holds), None for no limit."""
        if self.positions is None:
            return None
        return max(0, self.positions.rows - self.position_offset)

    def check_length(self, n_tokens: int) -> None:
        """Raise :class:`PositionLimitError` for a text longer than the position table.

        Raises
        ------
        PositionLimitError
        """
        limit = self.max_tokens
        if limit is not None and n_tokens > limit:
            raise PositionLimitError(
                f"the text has {n_tokens:,} tokens but the model's position table holds only {limit:,} "
                f"positions (0 to {limit - 1:,}); shorten the text to at most {limit:,} tokens"
            )
