"""Driving a core job generator by hand in a test."""

from __future__ import annotations

__all__ = ["drain"]


def drain(gen):
    """Run a job generator to its end: (the values it yielded, its return value)."""
    out = []
    try:
        while True:
            out.append(next(gen))
    except StopIteration as stop:
        return out, stop.value
