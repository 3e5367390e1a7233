"""Tokenization with pieces, character spans, special tokens and word grouping.

Three tokenizers share one small interface:

* :class:`NameTokenizer` for the toy tables: whitespace-separated names.
* :class:`IdTokenizer` for tables without a tokenizer: whitespace-separated
  integer ids.
* :class:`HFTokenizer` wraps a fast ``tokenizers.Tokenizer`` (tokenizer.json),
  the same engine that transformers uses, with offsets and word ids.

No Qt here.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from explorer.core.errors import ExplorerError, is_rust_panic
from explorer.core.tokens.pieces import PieceFamily
from explorer.core.tokens.problems import TokenProblem

__all__ = [
    "Token",
    "Tokenizer",
    "TokenizeError",
    "NameTokenizer",
    "IdTokenizer",
    "HFTokenizer",
    "words_of",
    "mark_rows",
    "representable",
]

#: Texts longer than this are cut before tokenizing so a pasted book never
#: hangs the app; the caller is told through :attr:`Tokenization.truncated`.
MAX_TEXT_CHARS = 50_000
#: tokenizers read from files kept for a model opened again (a switch back, the tour returning to the
#: user's model): reading SmolLM2's took 110-130 ms of its opening, 30-50 of them in one json.loads
#: holding the GIL while the window waited. A file whose bytes changed is read again.
READ_TOKENIZERS_KEPT = 3
#: an id written with more digits than this cannot be a row of any table
#: (int64 has 19), and converting it would cost time (Python refuses ints of
#: more than 4,300 digits outright)
MAX_ID_DIGITS = 18

_SURROGATES = re.compile("[\ud800-\udfff]")


def representable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD.

    Invalid UTF-8 in a command-line argument or a file name reaches Python as
    lone surrogates (``'\\udcff'``), which no tokenizer and no UTF-8 output
    accepts. One code point replaces one code point, so character offsets
    into the result are offsets into the text the user typed.
    """
    if not text.isascii() and _SURROGATES.search(text):
        return _SURROGATES.sub("\ufffd", text)
    return text


def _reason(exc: BaseException) -> str:
    """The first line of an exception's text, short enough for a message."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first[:160]


class TokenizeError(ExplorerError, ValueError):
    """The text cannot be turned into ids for this table (message is for users)."""


@dataclass(frozen=True)
class Token:
    """One token of a text.

    Attributes
    ----------
    position : int
        Index of the token in the tokenized text (0-based).
    id : int
        Row of the embedding table; -1 when the piece is not in the vocabulary.
    piece : str
        The vocabulary entry as the tokenizer stores it (e.g. ``Ġbank``, ``##ness``).
    start, end : int
        Character span in the input text (``end`` exclusive); equal for
        special tokens that have no text.
    special : bool
        Added by the tokenizer ([CLS], <s>, ...), not typed by the user.
    word : int or None
        Index of the word this piece belongs to; pieces of one word share it.
    problem : TokenProblem or None
        Why the token names no row of the table (None: ``id`` is a row).
        Tokens with a problem stay in the text; consumers skip them.
        ``id`` is then -1, except for ids past the table, which keep their
        value (always at or past V, never negative).
    """

    position: int
    id: int
    piece: str
    start: int
    end: int
    special: bool = False
    word: int | None = None
    problem: TokenProblem | None = None

    @property
    def ok(self) -> bool:
        """The token names a row of the table."""
        return self.problem is None

    def text_in(self, text: str) -> str:
        return text[self.start : self.end]


class Tokenizer(Protocol):
    """What every tokenizer offers."""

    #: number of ids the tokenizer can produce
    vocab_size: int
    #: short description for the UI ("WordPiece, 30,522 entries")
    description: str
    #: the notation its pieces are stored in (see :mod:`explorer.core.tokens.pieces`)
    family: PieceFamily

    def encode(self, text: str) -> list[Token]: ...

    def piece(self, token_id: int) -> str: ...

    def id_of(self, piece: str) -> int | None: ...


def _split_words(text: str) -> Iterable[re.Match[str]]:
    return re.finditer(r"\S+", text)


class NameTokenizer:
    """Whitespace tokenizer over a fixed list of names (the toy tables)."""

    def __init__(self, names: Sequence[str], special: Iterable[str] = ()):
        self.names = list(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        self._special = set(special)
        self.vocab_size = len(self.names)
        self.description = f"whitespace over {len(self.names)} names"
        self.family = PieceFamily.PLAIN

    def encode(self, text: str) -> list[Token]:
        """One token per word; a word the table does not name is kept,
        flagged :attr:`TokenProblem.UNKNOWN_WORD` (id -1)."""
        text = text[:MAX_TEXT_CHARS]
        tokens = []
        for word, m in enumerate(_split_words(text)):
            name = m.group(0)
            tid = self._index.get(name)
            if tid is None:
                tokens.append(Token(len(tokens), -1, name, m.start(), m.end(), False, word,
                                    TokenProblem.UNKNOWN_WORD))
                continue
            special = name in self._special
            # like HFTokenizer: special tokens belong to no word
            tokens.append(
                Token(len(tokens), tid, name, m.start(), m.end(), special, None if special else word)
            )
        return tokens

    def piece(self, token_id: int) -> str:
        return self.names[token_id] if 0 <= token_id < len(self.names) else f"<{token_id}>"

    @property
    def special_ids(self) -> frozenset[int]:
        """Ids of the names marked special."""
        return frozenset(self._index[n] for n in self._special if n in self._index)

    def id_of(self, piece: str) -> int | None:
        return self._index.get(piece)


class IdTokenizer:
    """For tables without a tokenizer: the text is whitespace-separated integer ids.

    Every word becomes a token. One that is not an id of this table is kept
    with its :class:`TokenProblem` (not a number, negative, too many digits,
    past the last row) and the id -1, or its value when it is past the table.
    """

    def __init__(self, vocab_size: int):
        self.vocab_size = int(vocab_size)
        self.description = "integer ids separated by spaces"
        self.family = PieceFamily.PLAIN

    def encode(self, text: str) -> list[Token]:
        text = text[:MAX_TEXT_CHARS]
        tokens = []
        for word, m in enumerate(_split_words(text)):
            s = m.group(0)
            tid, problem = self._parse(s)
            piece = str(tid) if problem is None or problem is TokenProblem.PAST_LAST_ROW else s
            tokens.append(Token(len(tokens), tid, piece, m.start(), m.end(), False, word, problem))
        return tokens

    def _parse(self, s: str) -> tuple[int, TokenProblem | None]:
        """(id, problem) of one typed word."""
        negative = s.startswith("-") and len(s) > 1
        body = s[1:] if negative else s
        # isdecimal, not isdigit: int() refuses digits such as "²" that isdigit accepts
        if not body.isdecimal():
            return -1, TokenProblem.NOT_A_NUMBER
        digits = body.lstrip("0") or "0"
        if negative and digits != "0":
            return -1, TokenProblem.NEGATIVE
        if len(digits) > MAX_ID_DIGITS:
            return -1, TokenProblem.TOO_MANY_DIGITS
        tid = int(digits)
        return tid, (TokenProblem.PAST_LAST_ROW if tid >= self.vocab_size else None)

    def piece(self, token_id: int) -> str:
        return str(token_id)

    def id_of(self, piece: str) -> int | None:
        digits = piece.lstrip("0") or "0"
        return int(digits) if piece.isdecimal() and len(digits) <= MAX_ID_DIGITS else None


_READ: OrderedDict[str, tuple[bytes, HFTokenizer]] = OrderedDict()  # real path -> digest, tokenizer; last used last
_READ_LOCK = threading.Lock()  # loads run in workers


def _file_digest(path: str) -> bytes | None:
    """A digest of the file's bytes (hashlib lets the GIL go: 2-3 ms for SmolLM2's 3.5 MB), or None
    when it cannot be read (it is then read as before, and fails as it fails). A digest, not the
    file's time: a file rewritten within the file system's clock tick is still seen."""
    try:
        return hashlib.blake2b(Path(path).read_bytes(), digest_size=16).digest()
    except (OSError, ValueError):
        return None


class HFTokenizer:
    """A fast Hugging Face tokenizer (``tokenizers`` library) with offsets.

    Parameters
    ----------
    tokenizer : tokenizers.Tokenizer
    kind : str
        The tokenizer model's family, for display ("WordPiece", "BPE", ...).
    pieces : dict[int, str], optional
        Its pieces by id, when the caller has them already (read from the
        file); otherwise asked of the tokenizer when first needed.
    """

    def __init__(self, tokenizer, kind: str | None = None, pieces: dict[int, str] | None = None):
        self._tok = tokenizer
        self.vocab_size = int(tokenizer.get_vocab_size(with_added_tokens=True))
        model = type(tokenizer.model).__name__
        self.kind = kind or model
        self.description = f"{self.kind}, {self.vocab_size:,} entries"
        self.family = piece_family_of(tokenizer)
        self._pieces: dict[int, str] | None = pieces
        # ids of the tokenizer's special tokens ([UNK], <unk>, <|endoftext|>...):
        # the encoding's mask marks only those the post-processor adds
        try:
            self._special_ids = {int(i) for i, t in tokenizer.get_added_tokens_decoder().items() if t.special}
        except Exception:  # pragma: no cover - older tokenizers
            self._special_ids = set()
        # No padding or truncation: we show every piece of the text.
        try:
            tokenizer.no_padding()
            tokenizer.no_truncation()
        except Exception:  # pragma: no cover - older tokenizers
            pass

    @property
    def special_ids(self) -> frozenset[int]:
        """Ids of the tokenizer's special tokens ([CLS], <|endoftext|>...)."""
        return frozenset(self._special_ids)

    @classmethod
    def from_file(cls, path: str | Path) -> HFTokenizer:
        """Load a ``tokenizer.json``, in steps that let the window paint in
        between (:mod:`explorer.core.tokens.tokenizer_json`).

        Raises
        ------
        TokenizeError
            When the file cannot be read or the tokenizers library refuses it
            (a Rust panic included).
        """
        from explorer.core.tokens.tokenizer_json import read_tokenizer_json

        real = os.path.realpath(path)
        digest = _file_digest(real)
        with _READ_LOCK:
            kept = _READ.get(real)
            if kept is not None and digest is not None and kept[0] == digest:
                _READ.move_to_end(real)
                return kept[1]
        try:
            read = read_tokenizer_json(path)
            made = cls(read.tokenizer, pieces=read.pieces)
        except BaseException as exc:  # noqa: B036 - Rust panics are BaseExceptions
            if not isinstance(exc, Exception) and not is_rust_panic(exc):
                raise
            raise TokenizeError(
                f"{path}: the tokenizer file cannot be read ({_reason(exc)}); replace it"
            ) from None
        if digest is not None:
            with _READ_LOCK:
                _READ[real] = (digest, made)
                _READ.move_to_end(real)
                while len(_READ) > READ_TOKENIZERS_KEPT:
                    _READ.popitem(last=False)
        return made

    @property
    def backend(self):
        return self._tok

    def encode(self, text: str) -> list[Token]:
        """Tokens of ``text`` (cut to :data:`MAX_TEXT_CHARS`) with their spans.

        Lone surrogates are replaced by U+FFFD first (:func:`representable`),
        so spans stay offsets into the text as typed.

        Raises
        ------
        TokenizeError
            When the tokenizer fails on this text: a broken tokenizer.json
            (an unknown-token entry missing from its vocabulary) or a Rust
            panic (a pre-tokenizer pattern that backtracks without end).
        """
        text = representable(text[:MAX_TEXT_CHARS])
        if not text:
            # no text, no tokens: a post-processor would otherwise add [CLS] [SEP]
            return []
        try:
            # encode_batch, not encode: the library lets the GIL go only around a batch (a 50,000-character
            # text held it 40-60 ms in encode, and the window stood still for it when a worker tokenized)
            enc = self._tok.encode_batch([text])[0]
            rows = list(zip(enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask, enc.word_ids))
        except BaseException as exc:  # noqa: B036 - Rust panics are BaseExceptions
            if not isinstance(exc, Exception) and not is_rust_panic(exc):
                raise
            raise TokenizeError(
                f"the tokenizer failed on this text ({_reason(exc)}); its tokenizer.json is broken, "
                "so fix or replace it, or type other text"
            ) from None
        tokens = []
        for pos, (tid, piece, (s, e), special, word) in enumerate(rows):
            sp = bool(special) or int(tid) in self._special_ids
            tokens.append(Token(pos, int(tid), piece, int(s), int(e), sp, None if sp else word))
        return tokens

    def _piece_map(self) -> dict[int, str]:
        # a dict, not a list indexed by id: a vocabulary may hold an id of
        # 3,000,000,000, and a list up to it would take 24 GB
        if self._pieces is None:
            vocab = self._tok.get_vocab(with_added_tokens=True)
            self._pieces = {int(i): p for p, i in vocab.items()}
        return self._pieces

    def piece(self, token_id: int) -> str:
        p = self._piece_map().get(int(token_id))
        return p if p else f"<{token_id}>"

    def id_of(self, piece: str) -> int | None:
        return self._tok.token_to_id(piece)


def piece_family_of(tokenizer) -> PieceFamily:
    """The notation a ``tokenizers.Tokenizer`` stores its pieces in, from its
    decoder, pre-tokenizer and model (each one small JSON object)."""

    def config(part) -> str:
        try:
            return part.__getstate__().decode("utf-8", "replace") if part is not None else ""
        except Exception:  # pragma: no cover - a component without state
            return ""

    decoder, pre = config(tokenizer.decoder), config(tokenizer.pre_tokenizer)
    if '"ByteLevel"' in decoder or '"ByteLevel"' in pre:
        return PieceFamily.BYTE_LEVEL
    if '"Metaspace"' in decoder or '"Metaspace"' in pre or '"ByteFallback"' in decoder:
        return PieceFamily.SENTENCEPIECE
    if '"WordPiece"' in decoder or type(tokenizer.model).__name__ == "WordPiece":
        return PieceFamily.WORDPIECE
    return PieceFamily.PLAIN


def mark_rows(tokens: Sequence[Token], vocab_size: int) -> tuple[Token, ...]:
    """``tokens`` with every id outside the table flagged.

    A typed id is flagged by the IdTokenizer itself; an id the tokenizer
    gives at or past ``vocab_size`` (a tokenizer larger than its table)
    gets :attr:`TokenProblem.NOT_IN_TABLE` here. Tokens that are fine are
    returned as they are.
    """
    out = []
    for t in tokens:
        if t.problem is None and not 0 <= t.id < vocab_size:
            t = replace(t, problem=TokenProblem.NOT_IN_TABLE if t.id >= 0 else TokenProblem.NEGATIVE)
        out.append(t)
    return tuple(out)


def words_of(tokens: Sequence[Token]) -> list[list[Token]]:
    """Group tokens by word, in order; special tokens form no word.

    Returns
    -------
    list of lists of Token
        One list per word, holding its pieces in order.
    """
    groups: dict[int, list[Token]] = {}
    for t in tokens:
        if t.word is None:
            continue
        groups.setdefault(t.word, []).append(t)
    return [groups[k] for k in sorted(groups)]


def ids_array(tokens: Sequence[Token]) -> np.ndarray:
    """The ids of ``tokens`` as an int64 array of shape (n,)."""
    return np.fromiter((t.id for t in tokens), dtype=np.int64, count=len(tokens))
