"""Fuzz texts and ids through the real tokenizers and inspect's data function.

Lone surrogates (what invalid UTF-8 in argv becomes), NUL and other control
characters, texts of a megabyte, words the vocabulary lacks, ids of any
length: each gives tokens whose spans fit the text, bounded work and strict
JSON, or one ExplorerError line.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.core.sources import open_table
from tests.support.fuzzing import check_inspect, fuzz_settings

TABLES = ["default", "toy:cat-sat", "minilm", "smollm2", "random:50257x768", "random:7x3"]

_opened: dict = {}


def table(spec: str):
    if spec not in _opened:
        try:
            _opened[spec] = open_table(spec)
        except Exception as exc:  # a model package that is not installed
            pytest.skip(f"{spec}: {exc}")
    return _opened[spec]


surrogates = st.integers(0xD800, 0xDFFF).map(chr)
controls = st.sampled_from(["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\u2028", "\u2029", "\ufeff", "\u200b",
                            "\ufffd", "\U0001F600", "##", "Ġ", "▁", "<unk>", "[UNK]", "[CLS]", "<s>"])
words = st.sampled_from(["the", "cat", "sat", "bank", "river", "unhappiness", "0", "42", "50256", "50257",
                         "-1", "１２", "²", "9" * 30, "the cat sat on the mat", "robot"])
pieces = st.one_of(st.characters(), surrogates, controls, words)
texts = st.one_of(
    st.lists(pieces, max_size=40).map(" ".join),
    st.lists(pieces, max_size=60).map("".join),
    st.text(max_size=200),
    st.builds(lambda s, n: s * n, st.one_of(words, controls, surrogates), st.integers(1, 25_000)),
)
#: texts of a megabyte: cut to MAX_TEXT_CHARS before tokenizing
huge = st.sampled_from(["a" * 1_000_000, "the cat " * 125_000, "\udcff" * 1_000_000, "\x00" * 1_000_000,
                        "1 " * 500_000, "a" * 40 + "b" + "c" * 999_959])


@pytest.mark.parametrize("spec", TABLES)
@fuzz_settings(60)
@given(text=texts)
def test_texts(spec, text):
    check_inspect(table(spec), text)


@pytest.mark.parametrize("spec", ["default", "minilm", "smollm2", "random:50257x768"])
@fuzz_settings(3)
@given(text=huge)
def test_megabyte_texts(spec, text):
    check_inspect(table(spec), text)


ids = st.one_of(
    st.integers(0, 60_000).map(str),
    st.integers(-10, 10**30).map(str),
    # written as digits: Python itself refuses int <-> str past 4,300 digits
    st.builds(lambda d, n: d * n, st.sampled_from("0123456789"), st.integers(1, 6000)),
    st.sampled_from(["0", "6", "7", "50256", "50257", str(2**31), str(2**63 - 1), str(2**63), str(2**64)]),
)
separators = st.sampled_from([" ", "\n", "\t", "  ", "\u3000", " \x00 ", ","])


@pytest.mark.parametrize("spec", ["random:50257x768", "random:7x3"])
@fuzz_settings(80)
@given(values=st.lists(ids, max_size=30), sep=separators, zeros=st.integers(0, 3))
def test_ids(spec, values, sep, zeros):
    text = sep.join("0" * zeros + v for v in values)
    check_inspect(table(spec), text)
