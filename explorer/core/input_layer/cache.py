"""One :class:`InputLayer` per opened table, read once. No Qt here."""

from __future__ import annotations

import threading
import weakref

from explorer.core.input_layer.detect import read_input_layer
from explorer.core.input_layer.layer import InputLayer

__all__ = ["input_layer_of"]

_LOCK = threading.Lock()
_LAYERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def input_layer_of(table) -> InputLayer:
    """:func:`read_input_layer` of ``table``, kept as long as the table lives
    (tables are immutable, so their input layer is too)."""
    with _LOCK:
        layer = _LAYERS.get(table)
    if layer is None:
        layer = read_input_layer(table)
        with _LOCK:
            layer = _LAYERS.setdefault(table, layer)
    return layer
