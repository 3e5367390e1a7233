"""Where order comes in: a model's input layer, read from its own files. No Qt here.

==================  ==========================================================
``layer``           :class:`InputLayer`, :class:`LayerNormParams`, the error
``detect``          :func:`read_input_layer`: headers and settings -> InputLayer
``stored``          :class:`StoredTensor`: a small tensor read when asked
``vectors``         :func:`input_vectors`: the model's own input vectors
``cache``           :func:`input_layer_of`: one InputLayer per table
``report``          :func:`positions_job`: what the Positions view draws
``text_inputs``     :func:`text_inputs_job`: the input layer for a text
``sinusoidal``      the original Transformer's fixed position table
``rotary``          RoPE settings and angles
==================  ==========================================================
"""

from explorer.core.input_layer.cache import input_layer_of
from explorer.core.input_layer.detect import ROTARY_MODEL_TYPES, describe, read_input_layer
from explorer.core.input_layer.layer import SCHEMES, InputLayer, LayerNormParams, PositionLimitError
from explorer.core.input_layer.report import (
    PathPCA,
    PositionsReport,
    cosine_matrix,
    pca_path,
    positions_job,
    positions_report,
)
from explorer.core.input_layer.rotary import DEFAULT_ROPE_THETA, RotarySettings, rotary_frequencies, rotation_angles
from explorer.core.input_layer.sinusoidal import SINUSOIDAL_BASE, sinusoidal_table, transformer_scale
from explorer.core.input_layer.stored import StoredTensor
from explorer.core.input_layer.text_inputs import TextInputs, text_inputs, text_inputs_job
from explorer.core.input_layer.vectors import InputVectors, input_vectors, layer_norm

__all__ = [
    "InputLayer", "LayerNormParams", "PositionLimitError", "SCHEMES", "read_input_layer", "describe",
    "ROTARY_MODEL_TYPES", "StoredTensor", "InputVectors", "input_vectors", "layer_norm", "sinusoidal_table",
    "SINUSOIDAL_BASE", "transformer_scale", "RotarySettings", "rotary_frequencies", "rotation_angles",
    "DEFAULT_ROPE_THETA", "input_layer_of", "PathPCA", "PositionsReport", "cosine_matrix", "pca_path",
    "positions_job", "positions_report", "TextInputs", "text_inputs", "text_inputs_job",
]
