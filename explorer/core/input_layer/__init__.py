"""Where order comes in: a model's input layer, read from its own files. No Qt here.

==================  ==========================================================
``layer``           :class:`InputLayer`, :class:`LayerNormParams`, the error
``detect``          :func:`read_input_layer`: headers and settings -> InputLayer
``stored``          :class:`StoredTensor`: a small tensor read when asked
``vectors``         :func:`input_vectors`: the model's own input vectors
``sinusoidal``      the original Transformer's fixed position table
``rotary``          RoPE settings and angles
==================  ==========================================================
"""

from .detect import ROTARY_MODEL_TYPES, describe, read_input_layer
from .layer import SCHEMES, InputLayer, LayerNormParams, PositionLimitError
from .rotary import DEFAULT_ROPE_THETA, RotarySettings, rotary_frequencies, rotation_angles
from .sinusoidal import SINUSOIDAL_BASE, sinusoidal_table, transformer_scale
from .stored import StoredTensor
from .vectors import InputVectors, input_vectors, layer_norm

__all__ = [
    "InputLayer", "LayerNormParams", "PositionLimitError", "SCHEMES", "read_input_layer", "describe",
    "ROTARY_MODEL_TYPES", "StoredTensor", "InputVectors", "input_vectors", "layer_norm", "sinusoidal_table",
    "SINUSOIDAL_BASE", "transformer_scale", "RotarySettings", "rotary_frequencies", "rotation_angles",
    "DEFAULT_ROPE_THETA",
]
