"""What a vocabulary piece stands for, in readable form. No Qt here.

Tokenizers store pieces in their own notations:

* byte-level BPE (GPT-2, SmolLM2, Llama 3) stores *bytes*, each written as
  one printable character of GPT-2's byte-to-unicode table: ``Ġ`` is the
  space byte, ``Ã©`` the two UTF-8 bytes of "é", ``ðŁ`` the first two bytes
  of an emoji, which no piece alone can show;
* SentencePiece marks a word start with ``▁`` and, with byte fallback,
  stores a byte it has no piece for as ``<0xE2>``;
* WordPiece marks a piece that continues a word with ``##`` (kept: it is the
  tokenizer's own notation, and ``decode`` of that piece alone keeps it too).

:func:`display_piece` turns a stored piece into what it stands for: the
decoded text where its bytes form complete UTF-8, byte notation such as
``<F0 9F>`` where they do not, and visible marks for whitespace (``␣`` a
space, ``↵`` a newline, ``⇥`` a tab) and other invisible characters
(``<U+200D>``). Every view shows pieces through it; the raw piece stays
available for tooltips.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from explorer.core.units import shorten

__all__ = [
    "PieceFamily",
    "DisplayPiece",
    "display_piece",
    "piece_bytes",
    "raw_piece_of",
    "set_glyph_check",
    "glyph_check",
    "BYTE_TO_CHAR",
    "CHAR_TO_BYTE",
]


class PieceFamily(str, Enum):
    """The notation a tokenizer stores its pieces in."""

    #: GPT-2's byte-to-unicode characters, one per byte (``Ġ`` is a space)
    BYTE_LEVEL = "byte-level"
    #: ``▁`` marks a word start; ``<0xAB>`` is a byte-fallback piece
    SENTENCEPIECE = "sentencepiece"
    #: ``##`` marks a piece that continues a word
    WORDPIECE = "wordpiece"
    #: pieces are plain text (toy names, typed ids, word-level vocabularies)
    PLAIN = "plain"


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: each of the 256 bytes as one printable character.

    Printable Latin-1 bytes stand for themselves; the 68 others (controls,
    space, soft hyphen...) are moved to U+0100 onwards in byte order, which
    is why a space is ``Ġ`` (U+0120) and a newline ``Ċ`` (U+010A).
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


#: byte -> the character byte-level BPE writes for it
BYTE_TO_CHAR: dict[int, str] = _bytes_to_unicode()
#: the inverse: character of a byte-level piece -> its byte
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_CHAR.items()}

_BYTE_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>")
#: whitespace shown as a visible mark
_MARKS = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}
EMPTY = "∅"


@dataclass(frozen=True)
class DisplayPiece:
    """A vocabulary piece as the user reads it.

    Attributes
    ----------
    text : str
        What the piece stands for: decoded text with visible whitespace marks,
        ``<C3 A9>``-style byte notation for bytes that are not complete UTF-8,
        ``<U+200D>`` for other invisible characters, ``∅`` for an empty piece.
    raw : str
        The piece as the tokenizer stores it (``Ã©``, ``ĠðŁ``, ``<0xE2>``).
    partial_bytes : bool
        Some of the piece's bytes are part of a character that other pieces
        complete (an emoji split over two pieces), shown as byte notation.
    byte_values : bytes or None
        The bytes a byte-level or byte-fallback piece stands for; None for
        pieces stored as text.
    """

    text: str
    raw: str
    partial_bytes: bool = False
    byte_values: bytes | None = None

    @property
    def decoded(self) -> bool:
        """The shown text differs from the stored piece (worth a tooltip line)."""
        return self.text != self.raw

    def short(self, n: int = 16) -> str:
        """:attr:`text` cut to at most ``n`` characters (a label)."""
        return shorten(self.text, n)

    def describe(self) -> str:
        """One line for a tooltip: the stored piece and, for bytes, their values."""
        parts = [f"stored as “{_visible(self.raw)}”"]
        if self.byte_values is not None and not self.byte_values.isascii():
            parts.append("UTF-8 bytes " + " ".join(f"{b:02X}" for b in self.byte_values))
        if self.partial_bytes:
            parts.append("part of a character that the neighbouring pieces complete")
        return "; ".join(parts)


def _visible_char(ch: str) -> str:
    mark = _MARKS.get(ch)
    if mark is not None:
        return mark
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: ␀ ␁ …
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


#: whether the screen's fonts can draw a character (None: assume they can).
#: The UI installs a check at start (:func:`set_glyph_check`); the core has no fonts.
_can_draw: Callable[[str], bool] | None = None


def set_glyph_check(check: Callable[[str], bool] | None) -> None:
    """Install ``check(ch) -> bool``: characters no installed font can draw
    are shown as ``<U+094B>`` instead of an empty box. Clears the cache of
    shown pieces, so call it once, before pieces are shown."""
    global _can_draw
    _can_draw = check
    display_piece.cache_clear()


def glyph_check() -> Callable[[str], bool] | None:
    """The installed :func:`set_glyph_check` check, or None."""
    return _can_draw


def _drawn(ch: str, shown: str) -> str:
    """``shown`` (``ch`` or the mark that stands for it, ␍ for a carriage return),
    or ``ch``'s code point where no font can draw ``shown``."""
    if _can_draw is None or len(shown) != 1 or shown.isascii() or _can_draw(shown):
        return shown
    return f"<U+{ord(ch):04X}>"


def _visible(text: str) -> str:
    """``text`` with whitespace and invisible characters made visible, a
    combining mark that starts it on a dotted circle (``◌ो``, as type
    specimens show one), and characters no font can draw as code points."""
    if text.isascii() and text.isprintable() and " " not in text:
        return text
    out = [_drawn(ch, _visible_char(ch)) for ch in text]
    if out and len(out[0]) == 1 and unicodedata.category(text[0]).startswith("M"):
        out[0] = "◌" + out[0]
    return "".join(out)


def _hex(data: bytes | bytearray) -> str:
    return "<" + " ".join(f"{b:02X}" for b in data) + ">"


def _show_bytes(data: bytes) -> tuple[str, bool]:
    """Bytes as text where they are complete UTF-8, as ``<XX YY>`` where not
    (one group per run of such bytes); and whether there were any of those."""
    out: list[str] = []
    pending = bytearray()  # bytes that belong to no complete character, in a row
    partial = False
    i = 0
    while i < len(data):
        try:
            good, stop, bad = data[i:].decode("utf-8"), len(data), b""
        except UnicodeDecodeError as exc:
            stop = i + max(exc.end, exc.start + 1)
            good, bad = data[i : i + exc.start].decode("utf-8"), data[i + exc.start : stop]
            partial = True
        if good:
            if pending:
                out.append(_hex(pending))
                pending.clear()
            out.append(_visible(good))
        pending.extend(bad)
        i = stop
    if pending:
        out.append(_hex(pending))
    return "".join(out), partial


def piece_bytes(raw: str, family: PieceFamily) -> bytes | None:
    """The bytes a byte-level or byte-fallback piece stands for, else None.

    A byte-level piece with a character outside the byte table (an added
    token such as ``<|im_start|>`` is all ASCII, so it does decode) is text.
    """
    if family is PieceFamily.BYTE_LEVEL:
        try:
            return bytes(CHAR_TO_BYTE[c] for c in raw)
        except KeyError:
            return None
    if family is PieceFamily.SENTENCEPIECE:
        m = _BYTE_FALLBACK.fullmatch(raw)
        return bytes([int(m.group(1), 16)]) if m else None
    return None


#: a few thousand distinct pieces are on screen at once; a whole vocabulary (a
#: completion list) passes through without keeping ~400 bytes per piece
@lru_cache(maxsize=32_768)
def display_piece(raw: str, family: PieceFamily = PieceFamily.PLAIN) -> DisplayPiece:
    """What the stored piece ``raw`` of a ``family`` tokenizer stands for.

    Parameters
    ----------
    raw : str
        The piece as the vocabulary stores it.
    family : PieceFamily
        The tokenizer's notation (``tokenizer.family``).

    Returns
    -------
    DisplayPiece
        e.g. byte-level ``Ã©`` -> ``é``; ``ĠðŁ`` -> ``␣<F0 9F>`` (partial);
        ``Ċ`` -> ``↵``; SentencePiece ``▁the`` -> ``␣the``, ``<0xE2>`` ->
        ``<E2>`` (partial), ``<0x0A>`` -> ``↵``; WordPiece ``##ness`` stays.
    """
    if not raw:
        return DisplayPiece(EMPTY, raw)
    data = piece_bytes(raw, family)
    if data is not None:
        if data.isascii():
            return DisplayPiece(_visible(data.decode("ascii")), raw, False, data)
        text, partial = _show_bytes(data)
        return DisplayPiece(text, raw, partial, data)
    if family is PieceFamily.SENTENCEPIECE:
        return DisplayPiece(_visible(raw.replace("▁", " ")), raw)
    return DisplayPiece(_visible(raw), raw)


def raw_piece_of(text: str, family: PieceFamily) -> str:
    """The stored form of the piece whose display text is ``text`` (the
    inverse of :func:`display_piece` for complete text): what a search box
    looks up when the user picks a shown piece such as ``␣bank`` or ``é``."""
    plain = text.replace("␣", " ").replace("↵", "\n").replace("⇥", "\t")
    if family is PieceFamily.BYTE_LEVEL:
        return "".join(BYTE_TO_CHAR[b] for b in plain.encode("utf-8", "surrogatepass"))
    if family is PieceFamily.SENTENCEPIECE:
        return plain.replace(" ", "▁")
    return plain
