"""Token Embedding Explorer: see and understand token embedding matrices."""

__version__ = "0.1.0"
