"""The project's error types and the one place that turns any exception into
a sentence for the user. No Qt here.

Errors the user can act on are :class:`ExplorerError` subclasses whose
message already says what was wrong and what to do; everything else (a bug,
a library failing in an unexpected way) is described by its type and text.
Results and signals carry the exception object itself, never a pre-formatted
string, so that callers can tell kinds of failure apart without parsing.
"""

from __future__ import annotations

import unicodedata

__all__ = ["ExplorerError", "user_message", "shown", "is_rust_panic"]


class ExplorerError(Exception):
    """An error whose message is written for the user: what was wrong and
    what to do. Subclasses name the area (sources, tokenizing, training...)."""


def is_rust_panic(exc: BaseException) -> bool:
    """A Rust panic surfacing from a Rust-backed library (tokenizers, safetensors):
    ``pyo3_runtime.PanicException``, a BaseException that ``except Exception`` does
    not catch, and which a reader of a user's file turns into a clear error."""
    return type(exc).__name__ == "PanicException"


def user_message(exc: BaseException) -> str:
    """One line for the user from any exception raised by the core or a job.

    Parameters
    ----------
    exc : BaseException
        The exception (or a BaseException such as a Rust ``PanicException``).

    Returns
    -------
    str
        The message of an :class:`ExplorerError` as is; a short sentence for
        memory errors; otherwise ``"TypeName: text"`` on a single line.
    """
    if isinstance(exc, ExplorerError):
        text = str(exc)
    elif isinstance(exc, MemoryError):
        text = "Not enough memory for this; try a smaller table or a shorter text."
    else:
        detail = str(exc).strip()
        name = type(exc).__name__
        text = f"{name}: {detail}" if detail else name
    # one line whatever the message holds (a path or a spec may contain newlines)
    return " ".join(text.split()) or type(exc).__name__


def shown(value: object, limit: int = 80) -> str:
    """A user-supplied string quoted for a one-line message.

    Control characters, line separators and lone surrogates are escaped (a
    spec with a newline must not make a two-line error) and long values are
    cut to ``limit`` characters.
    """
    text = str(value)
    cut = len(text) > limit
    text = text[:limit]
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii")
                       if cat != "Cs" else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + ("…'" if cut else "'")
