"""What a piece stands for (issue 12, item 2): byte-level pieces such as
"Ã©" and "ðŁ" were shown raw. Checked against each tokenizer's own decode."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.tokens.pieces import (
    BYTE_TO_CHAR,
    CHAR_TO_BYTE,
    PieceFamily,
    display_piece,
    piece_bytes,
    raw_piece_of,
)
from explorer.core.tokens.tokenize import HFTokenizer

BYTES, SP, WP, PLAIN = PieceFamily.BYTE_LEVEL, PieceFamily.SENTENCEPIECE, PieceFamily.WORDPIECE, PieceFamily.PLAIN
ISSUE_TEXT = "héllo 👋🏽 مرحبا"

_MARKS = {"␣": " ", "↵": "\n", "⇥": "\t", "␍": "\r", "␡": "\x7f"}


def unmark(shown: str) -> str:
    """The text a complete piece's display stands for, marks turned back into characters."""
    shown = re.sub(r"<U\+([0-9A-F]{4,6})>", lambda m: chr(int(m.group(1), 16)), shown)
    if shown.startswith("◌") and len(shown) > 1 and unicodedata.category(shown[1]).startswith("M"):
        shown = shown[1:]  # the dotted circle a lone combining mark is shown on
    return "".join(_MARKS.get(c, chr(ord(c) - 0x2400) if 0x2400 <= ord(c) < 0x2420 else c) for c in shown)


def check_whole_vocabulary(tok: HFTokenizer, vocab_size: int) -> int:
    """Every piece's display against the tokenizer's own ``decode([id])``;
    returns how many pieces are partial UTF-8."""
    backend, partial = tok.backend, 0
    for i in range(vocab_size):
        raw = tok.piece(i)
        shown = display_piece(raw, tok.family)
        want = backend.decode([i], skip_special_tokens=False)
        assert shown.raw == raw
        if shown.partial_bytes:
            partial += 1
            # decode replaces what is not complete UTF-8 by U+FFFD; we show its bytes instead
            assert shown.byte_values.decode("utf-8", "replace") == want, (i, raw, shown.text)
            assert re.search(r"<[0-9A-F]{2}( [0-9A-F]{2})*>", shown.text), shown.text
        elif want:
            assert unmark(shown.text) == want, (i, raw, shown.text, want)
        else:
            assert shown.text == "∅"
    return partial


# --------------------------------------------------------------------------
# the byte table
# --------------------------------------------------------------------------


def test_byte_table_is_gpt2s():
    from tokenizers.pre_tokenizers import ByteLevel

    assert sorted(BYTE_TO_CHAR) == list(range(256))
    assert set(BYTE_TO_CHAR.values()) == set(ByteLevel.alphabet())
    assert all(CHAR_TO_BYTE[c] == b for b, c in BYTE_TO_CHAR.items())
    assert (BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("\n")], BYTE_TO_CHAR[ord("a")]) == ("Ġ", "Ċ", "a")
    # the pre-tokenizer writes text the same way
    pre = ByteLevel(add_prefix_space=False, use_regex=False)
    ((written, _),) = pre.pre_tokenize_str(ISSUE_TEXT)
    assert written == "".join(BYTE_TO_CHAR[b] for b in ISSUE_TEXT.encode("utf-8"))


# --------------------------------------------------------------------------
# the examples of the issue
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, family, text, partial",
    [
        ("Ã©", BYTES, "é", False),
        ("ðŁ", BYTES, "<F0 9F>", True),
        ("ĠðŁ", BYTES, "␣<F0 9F>", True),
        ("Ø±", BYTES, "ر", False),
        ("ĳĭ", BYTES, "<91 8B>", True),  # two continuation bytes in a row: one group
        ("Ã©ðŁ", BYTES, "é<F0 9F>", True),
        ("ðŁĳĭ", BYTES, "👋", False),
        ("Ġbank", BYTES, "␣bank", False),
        ("Ċ", BYTES, "↵", False),
        ("ĉ", BYTES, "⇥", False),
        ("Ā", BYTES, "␀", False),  # byte 0
        ("<|endoftext|>", BYTES, "<|endoftext|>", False),
        ("<|im_start|>", BYTES, "<|im_start|>", False),
        ("▁the", SP, "␣the", False),
        ("<0xE2>", SP, "<E2>", True),
        ("<0x0A>", SP, "↵", False),
        ("<0x41>", SP, "A", False),
        ("<s>", SP, "<s>", False),
        ("##ness", WP, "##ness", False),
        ("[CLS]", WP, "[CLS]", False),
        ("", BYTES, "∅", False),
        ("a b", PLAIN, "a␣b", False),
        ("\u200d", PLAIN, "<U+200D>", False),
        ("Ġbank", PLAIN, "Ġbank", False),  # a word-level vocabulary's pieces are text
    ],
)
def test_display_piece_examples(raw, family, text, partial):
    shown = display_piece(raw, family)
    assert (shown.text, shown.raw, shown.partial_bytes) == (text, raw, partial)
    assert shown.short(3) == (text if len(text) <= 3 else text[:2] + "…")


def test_describe_keeps_the_raw_piece_and_its_bytes():
    shown = display_piece("ĠðŁ", BYTES)
    line = shown.describe()
    assert "ĠðŁ" in line and "20 F0 9F" in line and "complete" in line
    assert display_piece("Ġbank", BYTES).describe() == "stored as “Ġbank”"  # ASCII bytes: no byte list
    assert not display_piece("bank", BYTES).decoded and display_piece("Ã©", BYTES).decoded


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.binary(min_size=1, max_size=12))
def test_byte_level_pieces_of_any_bytes(data):
    raw = "".join(BYTE_TO_CHAR[b] for b in data)
    shown = display_piece(raw, BYTES)
    assert shown.byte_values == data == piece_bytes(raw, BYTES)
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        assert shown.partial_bytes
    else:
        assert not shown.partial_bytes and unmark(shown.text) == decoded
        if all((c.isprintable() or c in " \n\t") and c not in "␣↵⇥" for c in decoded):  # unambiguous
            assert raw_piece_of(shown.text, BYTES) == raw


@pytest.mark.parametrize("family", [BYTES, SP, WP, PLAIN])
def test_raw_piece_of_inverts_the_display(family):
    for raw in {BYTES: ["Ġbank", "Ã©", "Ċ"], SP: ["▁bank", "é"], WP: ["##ness", "bank"], PLAIN: ["the"]}[family]:
        assert raw_piece_of(display_piece(raw, family).text, family) == raw


# --------------------------------------------------------------------------
# the real tokenizers, whole vocabularies against their own decode
# --------------------------------------------------------------------------


def test_smollm2_whole_vocabulary_against_its_decode(smollm2_table):
    tok = smollm2_table.tokenizer
    assert tok.family is BYTES
    partial = check_whole_vocabulary(tok, smollm2_table.vocab_size)
    assert 100 < partial < 2000  # byte-level vocabularies hold a few hundred partial pieces


def test_smollm2_on_the_issue_text(smollm2_table):
    tok = smollm2_table.tokenizer
    toks = tok.encode(ISSUE_TEXT)
    shown = [display_piece(t.piece, tok.family) for t in toks]
    texts = [s.text for s in shown]
    assert texts[:3] == ["h", "é", "llo"]  # was "h + Ã© + llo"
    assert "ر" in texts and "Ø±" not in texts
    assert texts[3] == "␣<F0 9F>" and shown[3].partial_bytes
    # the pieces' bytes are exactly the text's UTF-8: nothing lost or invented
    assert b"".join(s.byte_values for s in shown) == ISSUE_TEXT.encode("utf-8")
    # complete pieces read as the text they cover
    for t, s in zip(toks, shown):
        if not s.partial_bytes:
            assert unmark(s.text) == ISSUE_TEXT[t.start:t.end]


def test_minilm_whole_vocabulary_against_its_decode(minilm_table):
    tok = minilm_table.tokenizer
    assert tok.family is WP
    assert check_whole_vocabulary(tok, minilm_table.vocab_size) == 0
    assert display_piece(tok.piece(tok.id_of("##ness")), WP).text == "##ness"


def _byte_level_bpe():
    """A GPT-2-style tokenizer (byte-level pre-tokenizer, decoder and BPE) trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(["the café by the river bank", "naïve 👋 señor", "日本語のテキスト", ISSUE_TEXT] * 5,
                            trainer)
    return tok


def test_gpt2_style_byte_level_vocabulary_against_its_decode():
    backend = _byte_level_bpe()
    tok = HFTokenizer(backend)
    assert tok.family is BYTES
    check_whole_vocabulary(tok, tok.vocab_size)
    text = "the 日本 café 👋🏽"
    toks = tok.encode(text)
    shown = [display_piece(t.piece, BYTES) for t in toks]
    assert b"".join(s.byte_values for s in shown) == text.encode("utf-8")
    assert any(s.partial_bytes for s in shown)  # "🏽" was never seen in training: single bytes


def _sentencepiece_with_byte_fallback():
    """A Llama-style tokenizer: ▁ for spaces, <0xXX> pieces for unknown bytes."""
    from tokenizers import Tokenizer, decoders, models, normalizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for piece in ["▁", "h", "e", "l", "o", "é", "▁h", "he", "ll", "▁he"]:
        vocab[piece] = len(vocab)
    merges = [("▁", "h"), ("h", "e"), ("l", "l"), ("▁h", "e")]
    tok = Tokenizer(models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    return tok


def test_sentencepiece_byte_fallback_against_its_decode():
    backend = _sentencepiece_with_byte_fallback()
    tok = HFTokenizer(backend)
    assert tok.family is SP
    toks = tok.encode("hello 👋 é\n")
    shown = [display_piece(t.piece, SP) for t in toks]
    assert [s.text for s in shown] == ["␣he", "ll", "o", "␣", "<F0>", "<9F>", "<91>", "<8B>", "␣", "é", "↵"]
    assert [s.partial_bytes for s in shown][4:8] == [True] * 4
    assert shown[-1].byte_values == b"\n" and shown[-1].raw == "<0x0A>"
    for i in range(tok.vocab_size):
        s = display_piece(tok.piece(i), SP)
        want = backend.decode([i], skip_special_tokens=False)
        if s.partial_bytes:
            assert want == "\ufffd"
        elif want.strip():
            # the decoder strips the word-start space of a lone piece; we show it as ␣
            assert unmark(s.text).removeprefix(" ") == want.removeprefix(" "), (tok.piece(i), s.text, want)


def test_characters_no_font_can_draw_show_their_code_point():
    from explorer.core.tokens import pieces

    before = pieces.glyph_check()
    try:
        pieces.set_glyph_check(lambda ch: ch not in "\u094b\U0001f44b")
        assert display_piece("ðŁĳĭ", PieceFamily.BYTE_LEVEL).text == "<U+1F44B>"
        assert display_piece("##\u094b", PieceFamily.WORDPIECE).text == "##<U+094B>"
        assert display_piece("戦", PieceFamily.PLAIN).text == "戦"
        # the mark that stands for a control character is checked too (fonts without the control
        # pictures drew SmolLM2's "\r\r\n" piece as boxes): its code point where it has no glyph
        pieces.set_glyph_check(lambda ch: not "\u2400" <= ch <= "\u2421")  # ␀ to ␡, not ␣
        assert display_piece("čĊĠx", PieceFamily.BYTE_LEVEL).text == "<U+000D>↵␣x"
        assert display_piece("Ā", PieceFamily.BYTE_LEVEL).text == "<U+0000>"
        pieces.set_glyph_check(lambda ch: True)
        assert display_piece("Ā", PieceFamily.BYTE_LEVEL).text == "␀"

        # a combining mark that starts a piece sits on a dotted circle, as in type specimens
        assert display_piece("\u094b", PieceFamily.PLAIN).text == "◌\u094b"
        assert display_piece("क\u094b", PieceFamily.PLAIN).text == "क\u094b"
    finally:
        pieces.set_glyph_check(before)
