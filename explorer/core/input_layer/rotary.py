"""Rotary positions (RoPE): settings and the angles they turn. No Qt here.

A rotary model adds nothing to its input vectors. Inside every attention
layer it turns each pair of dimensions (j, j + head_dim/2 in the Llama
layout) of a query and a key by the angle ``position * theta^(-2j /
head_dim)``: pair 0 turns one radian per token, the last pairs turn very
slowly. A dot product of a rotated query and key then depends on their
distance, not on where they stand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RotarySettings", "rotary_frequencies", "rotation_angles", "DEFAULT_ROPE_THETA"]

#: what transformers assumes when a config names no rope_theta
DEFAULT_ROPE_THETA = 10_000.0


@dataclass(frozen=True)
class RotarySettings:
    """Where a rotary model's settings say how positions turn.

    Attributes
    ----------
    theta : float
        The base of the frequencies (``rope_theta``, GGUF ``rope.freq_base``).
    head_dim : int
        Width of one attention head; its first ``rotary_dim`` values turn.
    rotary_dim : int
        Values per head that are rotated (``head_dim`` unless a partial
        rotary factor or GGUF ``rope.dimension_count`` says fewer).
    context_length : int or None
        The longest text the model was trained on, when known.
    scaling : str or None
        The kind of ``rope_scaling`` the config names (linear, yarn, llama3...);
        the angles shown are the unscaled ones.
    source : str
        Where the settings were read ("config.json", "GGUF metadata").
    """

    theta: float
    head_dim: int
    rotary_dim: int
    context_length: int | None = None
    scaling: str | None = None
    source: str = "config.json"

    @property
    def pairs(self) -> int:
        """Rotated pairs per head (rotary_dim // 2)."""
        return self.rotary_dim // 2


def rotary_frequencies(settings: RotarySettings) -> np.ndarray:
    """Radians per position of each rotated pair: theta^(-2j / rotary_dim).

    Returns
    -------
    numpy.ndarray
        float64, shape (pairs,), from 1.0 (pair 0) down.
    """
    j = np.arange(settings.pairs, dtype=np.float64)
    return np.power(float(settings.theta), -2.0 * j / settings.rotary_dim)


def rotation_angles(settings: RotarySettings, positions: np.ndarray, pairs) -> np.ndarray:
    """Angle (radians, unwrapped) by which pairs ``pairs`` turn at ``positions``.

    Returns
    -------
    numpy.ndarray
        float64, shape (len(positions), len(pairs)).
    """
    freqs = rotary_frequencies(settings)[np.asarray(pairs, dtype=np.int64)]
    return np.asarray(positions, dtype=np.float64)[:, None] * freqs[None, :]
