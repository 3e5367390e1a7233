"""Per-token metadata (explorer.core.tokens.meta) on the real vocabularies:
kinds from the tokenizer's own notation, lengths, and norms against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.jobs import run_to_end
from explorer.core.sources import open_table
from explorer.core.tokens.meta import KINDS, iter_token_metadata, piece_kind
from explorer.core.tokens.pieces import PieceFamily


def kind_of(raw, family, special=False):
    code, length = piece_kind(raw, family, special)
    return KINDS[code], length


def test_minilm_kinds_lengths_and_norms():
    t = open_table("minilm")
    m = run_to_end(iter_token_metadata(t))
    counts = m.counts()
    assert sum(counts.values()) == t.vocab_size == 30522 and counts["special"] == 5
    pick = {p: int(m.kind[t.tokenizer.id_of(p)]) for p in ("[CLS]", "##ing", "the", "7", "!", "1999")}
    assert {p: KINDS[k] for p, k in pick.items()} == {"[CLS]": "special", "##ing": "continuation", "the": "word start",
                                                      "7": "number", "!": "punctuation", "1999": "number"}
    assert m.length[t.tokenizer.id_of("##ing")] == 3 and m.length[t.tokenizer.id_of("queen")] == 5
    np.testing.assert_allclose(m.norm, np.linalg.norm(t.matrix().astype(np.float64), axis=1), rtol=1e-5)


@pytest.mark.parametrize("raw, family, want", [
    ("Ġthe", PieceFamily.BYTE_LEVEL, ("word start", 3)),
    ("ing", PieceFamily.BYTE_LEVEL, ("continuation", 3)),
    ("Ċ", PieceFamily.BYTE_LEVEL, ("whitespace", 1)),
    ("ĠðŁ", PieceFamily.BYTE_LEVEL, ("byte", 0)),  # a space and half an emoji
    ("Ġ42", PieceFamily.BYTE_LEVEL, ("number", 2)),
    ("Ġ...", PieceFamily.BYTE_LEVEL, ("punctuation", 3)),
    ("▁river", PieceFamily.SENTENCEPIECE, ("word start", 5)),
    ("side", PieceFamily.SENTENCEPIECE, ("continuation", 4)),
    ("<0xE2>", PieceFamily.SENTENCEPIECE, ("byte", 0)),
    ("<0x0A>", PieceFamily.SENTENCEPIECE, ("whitespace", 1)),
    ("<s>", PieceFamily.SENTENCEPIECE, ("special", 3)),
])
def test_piece_kinds_by_notation(raw, family, want):
    assert kind_of(raw, family, special=raw == "<s>") == want


def test_smollm2_has_every_byte_level_kind():
    t = open_table("smollm2")
    m = run_to_end(iter_token_metadata(t))
    counts = m.counts()
    assert all(counts[k] > 0 for k in KINDS), counts
    eot = t.tokenizer.id_of("<|endoftext|>")
    assert KINDS[m.kind[eot]] == "special"


def test_the_pieces_are_read_a_thousand_at_a_time_between_yields():
    """A worker gives way to the window only between the steps of its job: each step of
    reading the pieces is at most 1,024 of them (on MiniLM: 30 steps at least)."""
    t = open_table("minilm")
    steps = sum(1 for _, message in iter_token_metadata(t) if message.startswith("Reading the pieces"))
    assert steps >= 1 + t.vocab_size // 1024
