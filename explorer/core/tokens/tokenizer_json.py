"""Reading a ``tokenizer.json`` in steps the window can breathe between.

``tokenizers.Tokenizer.from_file`` parses the file and builds the tokenizer in
one call into Rust that holds the GIL throughout: 115-160 ms for SmolLM2's
49,152-entry BPE (3.5 MB) on this machine, and the window's GUI thread, which
needs the GIL for every Python slot and paint, stood still for all of it (the
longest stall of opening SmolLM2 in a real window). Here the same file is
read as three shorter holds with Python in between, where the interpreter
hands the GIL to the GUI thread:

1. ``json.loads`` of the text (43-50 ms for SmolLM2);
2. the model (BPE, WordPiece or WordLevel) built from the parsed vocabulary
   and merges by its constructor (40-57 ms);
3. everything else (normalizer, pre-tokenizer, post-processor, decoder, added
   tokens) by ``Tokenizer.from_str`` of the file with the model's vocabulary
   cut to the added tokens (under 1 ms), and the model put in.

The result is the tokenizer ``from_file`` builds: the suite compares the two
(their whole serialised form and their encodings) on real tokenizers and on
small ones made to test every case. Anything this reading is not sure to
build the same way (another model type, a field it does not know, an added
token the library would number otherwise) goes to ``from_str`` whole, and so
does a file that is not JSON, so that the library's own message says why.

The parsed vocabulary also gives the id -> piece map without
``get_vocab`` (another 40 ms hold). The garbage collector is off meanwhile:
the parse's 49,000 new lists set off a full collection in the middle of it,
63-87 ms more holding the GIL in the window (:func:`collector_paused`).

No Qt here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.core.errors import is_rust_panic
from explorer.core.runtime import collector_paused

__all__ = ["ReadTokenizer", "read_tokenizer_json"]

#: the fields of each model type this reading builds, as the tokenizers library writes them
_FIELDS = {
    "BPE": {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk",
            "byte_fallback", "ignore_merges", "vocab", "merges"},
    "WordPiece": {"type", "unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"},
    "WordLevel": {"type", "unk_token", "vocab"},
}


@dataclass(frozen=True)
class ReadTokenizer:
    """A ``tokenizers.Tokenizer`` and, when the file was read in steps, its
    pieces by id (the model's vocabulary and the added tokens)."""

    tokenizer: Any
    pieces: dict[int, str] | None


def read_tokenizer_json(path: str | Path) -> ReadTokenizer:
    """The tokenizer saved in ``path``, built as ``Tokenizer.from_file`` builds it.

    Raises
    ------
    OSError, UnicodeDecodeError
        When the file cannot be read as text.
    Exception
        Whatever ``Tokenizer.from_str`` raises for a file it refuses (a Rust
        panic included, a ``BaseException``).
    """
    from tokenizers import Tokenizer

    text = Path(path).read_text(encoding="utf-8")
    with collector_paused():  # the parse's 49,000 lists set off a full collection inside it otherwise
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        built = _in_steps(data) if isinstance(data, dict) else None
        del data
    if built is None:
        return ReadTokenizer(Tokenizer.from_str(text), None)
    return built


def _in_steps(data: dict) -> ReadTokenizer | None:
    """The tokenizer built from parsed JSON in steps, None when this reading
    cannot be sure to build what ``from_str`` would."""
    model = data.get("model")
    if not isinstance(model, dict):
        return None
    kind = model.get("type")
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    vocab = model.get("vocab")
    if fields is None or not set(model) <= fields or not isinstance(vocab, dict):
        return None
    if not all(type(i) is int and 0 <= i < 2**32 for i in vocab.values()):
        return None
    added = _added_ids(data.get("added_tokens", []), vocab)
    if added is None:
        return None
    merges = _merges(model.get("merges")) if kind == "BPE" else []
    if merges is None:
        return None
    try:
        real = _model(kind, model, vocab, merges)
    except Exception:  # noqa: BLE001 - a value the library refuses: from_str says what is wrong with it
        return None
    from tokenizers import Tokenizer

    shell = dict(data, model=dict(model, vocab=added, **({"merges": []} if kind == "BPE" else {})))
    try:
        tokenizer = Tokenizer.from_str(json.dumps(shell))
    except BaseException as exc:  # noqa: B036 - a Rust panic is a BaseException
        if not isinstance(exc, Exception) and not is_rust_panic(exc):
            raise
        return None  # the file as written goes to from_str, whose message then points into it
    tokenizer.model = real
    pieces = {i: p for p, i in vocab.items()}
    for content, i in added.items():
        pieces[i] = content
    return ReadTokenizer(tokenizer, pieces)


def _added_ids(tokens: Any, vocab: dict[str, int]) -> dict[str, int] | None:
    """The id each added token gets when the library reads the file, None when
    one might not get the id the file gives it.

    The library gives an added token found in the vocabulary its id there, and
    numbers one missing from it itself: after the vocabulary, one by one (and
    by another rule before 0.22, after the highest added id). Both rules agree,
    and agree with a file the library wrote, when no added token in the
    vocabulary has an id past its end; anything else (a vocabulary with gaps,
    an added token with no content, which the library skips) goes to the
    library whole.
    """
    if not isinstance(tokens, list):
        return None
    size = len(vocab)
    fresh = size
    ids: dict[str, int] = {}
    for t in tokens:
        if not isinstance(t, dict) or not isinstance(t.get("content"), str) or type(t.get("id")) is not int:
            return None
        content, given = t["content"], t["id"]
        if not content:
            return None
        if content in ids:
            got = ids[content]
        elif content in vocab:
            got = vocab[content]
            if got >= size:
                return None
        else:
            got, fresh = fresh, fresh + 1
        if got != given:
            return None
        ids[content] = got
    return ids


def _merges(raw: Any) -> list[tuple[str, str]] | None:
    """BPE merges as pairs, from either form the file may use ("a b" or ["a", "b"]),
    None for anything the library would refuse (no merges, the two forms mixed)."""
    if not isinstance(raw, list):
        return None
    form = type(raw[0]) if raw else list
    pairs = []
    for m in raw:
        if type(m) is not form:
            return None
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list):
            parts = m
        else:
            return None
        if len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            return None
        pairs.append((parts[0], parts[1]))
    return pairs


def _model(kind: str, model: dict, vocab: dict[str, int], merges: list[tuple[str, str]]):
    """The model itself, with the file's settings and the library's defaults for the rest."""
    from tokenizers import models

    if kind == "BPE":
        # a setting the file leaves out or sets to null is the library's default, as from_str reads it
        settings = {key: model[key] for key in ("dropout", "unk_token", "continuing_subword_prefix",
                                                "end_of_word_suffix", "fuse_unk", "byte_fallback", "ignore_merges")
                    if model.get(key) is not None}
        return models.BPE(vocab, merges, **settings)
    if kind == "WordPiece":
        return models.WordPiece(
            vocab, unk_token=model.get("unk_token", "[UNK]"),
            max_input_chars_per_word=model.get("max_input_chars_per_word", 100),
            continuing_subword_prefix=model.get("continuing_subword_prefix", "##"))
    return models.WordLevel(vocab, unk_token=model.get("unk_token"))
