"""The model's own input vectors for a text, part by part. No Qt here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.input_layer.layer import InputLayer

__all__ = ["InputVectors", "input_vectors", "layer_norm"]


@dataclass(frozen=True)
class InputVectors:
    """What enters the first block for each token, and the parts it is made of.

    All arrays are float32 of shape (T, d) for T tokens, or None when the
    model has no such part.

    Attributes
    ----------
    ids : numpy.ndarray
        int64 (T,): the token ids.
    positions : numpy.ndarray
        int64 (T,): each token's position in the text (0, 1, 2, ...).
    position_ids : numpy.ndarray
        int64 (T,): the row of the position table each token reads
        (positions + the model's offset; equal to positions without a table).
    token_rows : numpy.ndarray
        E[ids], times the model's scale.
    position_rows, type_rows : numpy.ndarray or None
    sums : numpy.ndarray
        token_rows + position_rows + type_rows (the parts the model has).
    normed : numpy.ndarray or None
        LayerNorm(sums), for a model with an input LayerNorm.
    scale : float
    """

    ids: np.ndarray
    positions: np.ndarray
    position_ids: np.ndarray
    token_rows: np.ndarray
    position_rows: np.ndarray | None
    type_rows: np.ndarray | None
    sums: np.ndarray
    normed: np.ndarray | None
    scale: float = 1.0

    @property
    def vectors(self) -> np.ndarray:
        """The model's input vectors: the LayerNorm output, or the sums."""
        return self.normed if self.normed is not None else self.sums

    @staticmethod
    def norms(part: np.ndarray | None) -> np.ndarray | None:
        """L2 norm of each row of a part, float64 (T,)."""
        if part is None:
            return None
        return np.sqrt(np.einsum("ij,ij->i", part, part, dtype=np.float64))


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis
    (the biased variance, as torch's LayerNorm), computed in float64.

    Returns
    -------
    numpy.ndarray
        float32, the shape of ``x``.
    """
    x64 = np.asarray(x, dtype=np.float64)
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + eps) * np.asarray(weight, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return y.astype(np.float32)


def input_vectors(table, layer: InputLayer, ids, positions=None) -> InputVectors:
    """The input vectors of tokens ``ids`` as the model computes them before
    its first block: dropout off, token type 0.

    BERT: LayerNorm(E[id] + P[pos] + T[0]); GPT-2: E[id] + P[pos]; rotary
    (Llama) and tables without positions: scale * E[id].

    Parameters
    ----------
    table : EmbeddingTable
    layer : InputLayer
        From :func:`read_input_layer` for the same table.
    ids : sequence of int
        Token ids, each a row of the table.
    positions : sequence of int, optional
        Each token's position in the text (default 0, 1, 2, ...). A text
        with tokens that name no row passes the positions of the others.

    Raises
    ------
    PositionLimitError
        When a position is past the model's position table.
    IndexError
        For an id outside the table.
    """
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    pos = np.arange(len(ids), dtype=np.int64) if positions is None else np.asarray(positions, np.int64).reshape(-1)
    if len(pos) != len(ids):
        raise ValueError("ids and positions must have the same length")
    if len(pos):
        layer.check_length(int(pos.max()) + 1)
    tok = table.rows(ids) if len(ids) else np.empty((0, layer.dim), np.float32)
    if layer.scale != 1.0:
        tok = (tok * np.float32(layer.scale)).astype(np.float32)
    total = tok.copy()
    pos_rows = type_rows = None
    pids = pos + layer.position_offset if layer.positions is not None else pos
    if layer.positions is not None:
        pos_rows = layer.positions.take(pids)
        total += pos_rows
    if layer.token_types is not None:
        type_rows = np.repeat(layer.token_types.read(0, 1), len(ids), axis=0)
        total += type_rows
    normed = None
    if layer.layer_norm is not None:
        ln = layer.layer_norm
        normed = layer_norm(total, ln.weight.vector(), None if ln.bias is None else ln.bias.vector(), ln.eps)
    return InputVectors(ids, pos, pids, tok, pos_rows, type_rows, total, normed, float(layer.scale))
