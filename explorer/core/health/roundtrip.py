"""Tokenizer round trips over the whole vocabulary. No Qt here.

Each id gets one category (:data:`~.report.CATEGORIES`):

* ``special``: one of the tokenizer's special tokens ([CLS], <|endoftext|>...);
* ``ok``: decoding the id and encoding the text gives the id back; a piece
  that continues a word (``##ing``, or a piece without a leading-space
  mark) is also tried after a short word it can follow (``a`` + ``ing``);
* ``undecodable``: its text is not whole UTF-8 (a byte-level piece holding
  part of a character: the decoder gives U+FFFD);
* ``unreachable``: its text encodes to other ids, so no text ever selects
  this row (BERT's ``[unused0]`` becomes ``[``, ``unused``, ``##0``, ``]``);
* ``no_piece``: a row the tokenizer has no piece for (padding rows past its
  vocabulary); ``no_row``: an id of the tokenizer past the table's rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from explorer.core.errors import is_rust_panic
from explorer.core.health.report import CATEGORIES
from explorer.core.jobs import run_to_end
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, TokenizeError

__all__ = ["iter_token_categories", "token_categories", "CODE"]

#: category name -> code
CODE = {name: i for i, name in enumerate(CATEGORIES)}
#: ids per batch handed to the tokenizer (one call each), and between two yields: a chance to stop, and
#: for the window to have the GIL to itself. A worker gives way only between steps, and a tokenizer's
#: call holds the GIL while it turns the texts and encodings into Python objects (py-spy --gil put half
#: of a SmolLM2 health check's holding there; a call of 8,192 ids once held it for 62-78 ms of its
#: 88-108). With batches of 1,024 the window waited at most 25-33 ms for the GIL during a round trip
#: of SmolLM2 in four runs, against 24-54 ms with 8,192
_BATCH = 1024
#: short words tried in front of a piece that failed alone
_ANCHOR_TEXTS = ("a", "x", "q", "z", "1")


def iter_token_categories(tokenizer, rows: int) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns the categories.

    Parameters
    ----------
    tokenizer : Tokenizer
        The table's tokenizer.
    rows : int
        The table's V.

    Returns
    -------
    ndarray (max(V, tokenizer size),) int8
        Codes into :data:`CATEGORIES`.
    """
    size = int(tokenizer.vocab_size)
    out = np.full(max(rows, size), CODE["no_piece"], np.int8)
    out[rows:] = CODE["no_row"]
    if isinstance(tokenizer, IdTokenizer):
        out[: min(rows, size)] = CODE["ok"]  # ids are typed as numbers: every one reaches its row
        return out
    if isinstance(tokenizer, HFTokenizer):
        yield from _hf_categories(tokenizer.backend, size, out, rows)
    else:
        yield from _generic_categories(tokenizer, size, out, rows)
    return out


def token_categories(tokenizer, rows: int) -> np.ndarray:
    """:func:`iter_token_categories` run to the end."""
    return run_to_end(iter_token_categories(tokenizer, rows))


def _keep_row_gaps(out: np.ndarray, rows: int, i: int, code: int) -> None:
    # an id past the table's rows stays "no_row" whatever its round trip says
    if i < rows:
        out[i] = code


def _generic_categories(tokenizer, size: int, out: np.ndarray, rows: int) -> Iterator[tuple[float, str]]:
    """Word-list tokenizers (toy tables): encode each piece."""
    for i in range(size):
        piece = tokenizer.piece(i)
        try:
            toks = tokenizer.encode(piece)
        except TokenizeError:
            toks = []
        if len(toks) == 1 and toks[0].id == i:
            code = CODE["special"] if toks[0].special else CODE["ok"]
        else:
            code = CODE["unreachable"]
        _keep_row_gaps(out, rows, i, code)
        if i % _BATCH == _BATCH - 1:
            yield (i + 1) / size, f"Checking the tokenizer… {i + 1:,} of {size:,} ids"


def _anchors(tok) -> list[int]:
    """Ids of one-letter words to put in front of a piece that failed alone.

    Letters that begin no longer piece come first: after one of them a
    greedy tokenizer (WordPiece) must end its first piece right there, so
    the piece that follows is the one being tried (``φ`` + ``ing`` gives
    ``φ ##ing`` where ``a`` + ``ing`` gives ``ai ##ng``)."""
    try:
        vocab = tok.get_vocab(with_added_tokens=False)
    except Exception:  # noqa: BLE001 - a broken tokenizer: only the plain round trip
        return []
    starts = {p[0] for p in vocab if len(p) > 1}
    lone = sorted((p for p in vocab if len(p) == 1 and p.isalpha() and p not in starts and ord(p) < 0x0530),
                  key=ord)
    found: list[int] = []
    for text in lone[:8] + list(_ANCHOR_TEXTS):
        try:
            ids = tok.encode(text, add_special_tokens=False).ids
        except Exception:  # noqa: BLE001 - skip a text the tokenizer refuses
            continue
        if len(ids) == 1 and ids[0] not in found:
            found.append(int(ids[0]))
        if len(found) == 4:
            break
    return found


def _hf_categories(tok, size: int, out: np.ndarray, rows: int) -> Iterator[tuple[float, str]]:
    try:
        special = {int(i) for i, t in tok.get_added_tokens_decoder().items() if t.special}
    except Exception:  # noqa: BLE001 - older tokenizers
        special = set()
    anchors = _anchors(tok)
    try:
        present = np.zeros(size, bool)
        held = np.fromiter(tok.get_vocab(with_added_tokens=True).values(), np.int64)
        present[held[(held >= 0) & (held < size)]] = True
    except Exception:  # noqa: BLE001 - a broken tokenizer: ask id by id
        present = np.array([tok.id_to_token(i) is not None for i in range(size)], bool)
    for start in range(0, size, _BATCH):
        ids = (np.nonzero(present[start : start + _BATCH])[0] + start).tolist()
        plain = [i for i in ids if i not in special]
        for i in ids:
            if i in special:
                _keep_row_gaps(out, rows, i, CODE["special"])
        failed = _round_trip(tok, plain, out, rows)
        for a in anchors:
            if not failed:
                break
            failed = _round_trip(tok, failed, out, rows, anchor=a)
        for i in failed:
            _keep_row_gaps(out, rows, i, CODE["unreachable"])
        done = min(start + _BATCH, size)
        yield done / size, f"Checking the tokenizer… {done:,} of {size:,} ids"


def _round_trip(tok, ids: list[int], out: np.ndarray, rows: int, anchor: int | None = None) -> list[int]:
    """Mark the ids whose text encodes back to them; return the others.

    Without ``anchor`` a text with U+FFFD marks its id undecodable."""
    if not ids:
        return []
    seqs = [[i] if anchor is None else [anchor, i] for i in ids]
    try:
        texts = tok.decode_batch(seqs, skip_special_tokens=False)
        # without offsets when the library offers it: a third faster
        encode = getattr(tok, "encode_batch_fast", tok.encode_batch)
        encs = encode(texts, add_special_tokens=False)
    except BaseException as exc:  # noqa: B036 - a Rust panic is a BaseException
        if not isinstance(exc, Exception) and not is_rust_panic(exc):
            raise
        return list(ids)
    failed = []
    for i, seq, text, enc in zip(ids, seqs, texts, encs):
        if enc.ids == seq:
            _keep_row_gaps(out, rows, i, CODE["ok"])
        elif anchor is None and "\ufffd" in text:
            _keep_row_gaps(out, rows, i, CODE["undecodable"])
        else:
            failed.append(i)
    return failed
