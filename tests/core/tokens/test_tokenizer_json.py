"""Reading a tokenizer.json in steps builds what ``Tokenizer.from_file`` builds.

Each case compares the two readings of one file: their whole serialised form,
their encodings of texts that reach added tokens, unknown pieces and byte
fallback, and the pieces by id. Real files (MiniLM's, the bundled default's)
and small tokenizers trained here for the cases real files do not show.
"""

from __future__ import annotations

import json
import re

import pytest
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from explorer.core.sources.common import package_path, resources_dir
from explorer.core.tokens.tokenize import HFTokenizer, TokenizeError
from explorer.core.tokens.tokenizer_json import read_tokenizer_json

CORPUS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog", "déjà vu in 東京 🙂",
          "tokens, pieces and merges!"] * 20
TEXTS = ["the cat sat", "  déjà vu 東京 🙂\n\tthe mat", "<|end|> the <mask> cat [CLS] qzx", "x" * 300, "",
         "the cat<|end|>sat<extra_1><extra_2>"]


def _same(path) -> HFTokenizer:
    """Both readings of ``path`` agree in everything; returns the one in steps."""
    lib = Tokenizer.from_file(str(path))
    read = read_tokenizer_json(path)
    assert json.loads(read.tokenizer.to_str()) == json.loads(lib.to_str())
    for text in TEXTS:
        a, b = lib.encode(text), read.tokenizer.encode(text)
        assert (b.ids, b.tokens, b.offsets, b.special_tokens_mask) == (a.ids, a.tokens, a.offsets,
                                                                        a.special_tokens_mask)
    if read.pieces is not None:
        assert read.pieces == {i: p for p, i in lib.get_vocab(with_added_tokens=True).items()}
    ours, theirs = HFTokenizer.from_file(path), HFTokenizer(lib)
    assert [ours.piece(i) for i in range(ours.vocab_size)] == [theirs.piece(i) for i in range(ours.vocab_size)]
    assert ours.special_ids == theirs.special_ids
    return read


def _bpe(byte_fallback=False) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=byte_fallback))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<|end|>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(single="<|end|> $A", special_tokens=[("<|end|>", 1)])
    return tok


def _save(tok: Tokenizer, path, edit=None):
    data = json.loads(tok.to_str())
    if edit is not None:
        edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_real_files_are_read_in_steps_and_agree():
    minilm = package_path("minilm")
    assert minilm is not None, "the MiniLM package is part of the test environment (FACTS.md)"
    for path in (minilm / "tokenizer.json", resources_dir() / "default" / "tokenizer.json"):
        assert _same(path).pieces is not None, path


def test_a_trained_bpe_with_added_tokens_after_its_vocabulary(tmp_path):
    tok = _bpe()
    tok.add_tokens(["<extra_1>", AddedToken("<extra_2>", special=True)])
    tok.add_special_tokens(["<mask>"])
    read = _same(_save(tok, tmp_path / "tokenizer.json"))
    assert read.pieces is not None
    size = tok.get_vocab_size(with_added_tokens=False)
    assert read.tokenizer.token_to_id("<extra_1>") == size and read.tokenizer.token_to_id("<mask>") == size + 2


@pytest.mark.parametrize("form", ["pairs", "strings"])
def test_both_forms_of_merges_and_a_file_from_an_older_writer(tmp_path, form):
    def edit(data):
        if form == "strings":
            data["model"]["merges"] = [" ".join(m) for m in data["model"]["merges"]]
        for key in ("ignore_merges", "byte_fallback", "fuse_unk"):  # fields an older library did not write
            del data["model"][key]

    assert _same(_save(_bpe(byte_fallback=True), tmp_path / "t.json", edit)).pieces is not None


def test_wordpiece_and_wordlevel(tmp_path):
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]", "[CLS]"]))
    wl = Tokenizer(models.WordLevel({"the": 0, "cat": 1, "<unk>": 2}, unk_token="<unk>"))
    wl.pre_tokenizer = pre_tokenizers.Whitespace()
    wl.add_special_tokens(["<|end|>"])
    for name, tok in (("wp", wp), ("wl", wl)):
        assert _same(_save(tok, tmp_path / f"{name}.json")).pieces is not None


def test_what_it_cannot_be_sure_of_goes_to_the_library_whole(tmp_path):
    """An added token numbered otherwise than the library would number it, a
    field this reading does not know, and a Unigram model: read by from_str,
    the same result."""
    tok = _bpe()
    tok.add_tokens(["<extra_1>"])

    def renumber(data):
        data["added_tokens"][-1]["id"] += 5

    def new_field(data):
        data["model"]["some_future_setting"] = True

    uni = Tokenizer(models.Unigram())
    uni.train_from_iterator(CORPUS, trainers.UnigramTrainer(vocab_size=60, special_tokens=["<unk>"], unk_token="<unk>"))
    for path in (_save(tok, tmp_path / "renumbered.json", renumber), _save(tok, tmp_path / "new.json", new_field),
                 _save(uni, tmp_path / "unigram.json")):
        assert _same(path).pieces is None, path
    assert read_tokenizer_json(tmp_path / "renumbered.json").tokenizer.token_to_id("<extra_1>") == \
        Tokenizer.from_file(str(tmp_path / "renumbered.json")).token_to_id("<extra_1>")


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["model"]["merges"].append(["zz_missing", "qq_missing"]), "zz_missing|Merge"),
    (lambda d: d["model"].update(dropout="high"), "dropout|invalid type|expected"),
    (lambda d: d["model"]["vocab"].update({"bad": -3}), "invalid value|expected|-3"),
])
def test_a_broken_file_gets_the_library_s_own_words(tmp_path, edit, words):
    path = _save(_bpe(), tmp_path / "tokenizer.json", edit)
    with pytest.raises(Exception, match=words):
        Tokenizer.from_file(str(path))
    with pytest.raises(TokenizeError, match="tokenizer file cannot be read") as ours:
        HFTokenizer.from_file(path)
    assert re.search(words, str(ours.value))


def test_not_json_or_not_text(tmp_path):
    for name, data in (("half.json", b'{"model": {"type": "BPE", "vocab": {'), ("bin.json", b"\xff\xfe\x00garbage")):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(TokenizeError, match="tokenizer file cannot be read"):
            HFTokenizer.from_file(tmp_path / name)


def _tiny(vocab, added, merges=()):
    """A BPE tokenizer.json written by hand, as another writer (or an older library) might."""
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for c, i in added],
            "normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": vocab, "merges": list(merges)}}


@pytest.mark.parametrize("case", ["gap in the vocabulary", "added token with no content"])
def test_added_tokens_the_library_numbers_its_own_way(tmp_path, case):
    """A vocabulary with a gap (an added token in it past its end) or an added token with no
    content: the library numbers the new ones its own way (``<x>`` gets 4, or 3, not the file's
    id), and the reading gives them the library's ids too, by leaving the file to it."""
    vocab = {"a": 0, "b": 1, "ab": 2}
    if case == "gap in the vocabulary":
        vocab["<s>"] = 9
        added = [("<s>", 9), ("<x>", 10)]
    else:
        added = [("", 3), ("<x>", 4)]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_tiny(vocab, added, [["a", "b"]])), encoding="utf-8")
    try:
        lib = Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 - a library that refuses the file: then so must the reading
        with pytest.raises(TokenizeError):
            HFTokenizer.from_file(path)
        return
    read = read_tokenizer_json(path)
    assert read.tokenizer.token_to_id("<x>") == lib.token_to_id("<x>")
    assert read.tokenizer.encode("a b <x> ab").ids == lib.encode("a b <x> ab").ids
    assert json.loads(read.tokenizer.to_str()) == json.loads(lib.to_str())


@pytest.mark.parametrize("edit", [
    lambda d: d["model"]["merges"].append("a b"),  # "a b" among ["a", "b"] pairs
    lambda d: d["model"].pop("merges"),
])
def test_merges_the_library_refuses_are_refused(tmp_path, edit):
    data = _tiny({"a": 0, "b": 1, "ab": 2}, [], [["a", "b"]])
    edit(data)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(Exception) as lib:
        Tokenizer.from_file(str(path))
    with pytest.raises(TokenizeError, match="tokenizer file cannot be read") as ours:
        HFTokenizer.from_file(path)
    assert str(lib.value)[:40] in str(ours.value)


def test_a_bad_part_outside_the_model_is_reported_where_it_is_in_the_file(tmp_path):
    """A broken normalizer in a pretty-printed file: the message names its line in the file,
    as the library's does, not a position in a rewritten copy."""
    data = _tiny({"a": 0, "b": 1, "ab": 2}, [], [["a", "b"]])
    data["normalizer"] = {"type": "NoSuchNormalizer"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(Exception) as lib:
        Tokenizer.from_file(str(path))
    where = re.search(r"line \d+ column \d+", str(lib.value))
    assert where is not None and not where.group().startswith("line 1 ")
    with pytest.raises(TokenizeError) as ours:
        HFTokenizer.from_file(path)
    assert where.group() in str(ours.value)


def test_a_file_read_again_gives_the_tokenizer_read_before_until_its_bytes_change(tmp_path):
    """A model opened again takes its tokenizer from those kept (reading SmolLM2's held the GIL
    for 30-50 ms); a file rewritten in place, the same size, is read anew; only a few are kept."""
    from explorer.core.tokens import tokenize
    from tests.support.tokenizer_files import wordlevel_json

    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(wordlevel_json({"[UNK]": 0, "cat": 1, "dog": 2})))
    first = HFTokenizer.from_file(path)
    assert HFTokenizer.from_file(str(path)) is first
    assert HFTokenizer.from_file(tmp_path / "." / "tokenizer.json") is first
    assert [t.id for t in first.encode("dog cat")] == [2, 1]
    path.write_text(json.dumps(wordlevel_json({"[UNK]": 0, "dog": 1, "cat": 2})))  # the same size
    again = HFTokenizer.from_file(path)
    assert again is not first and [t.id for t in again.encode("dog cat")] == [1, 2]
    others = []
    for k in range(tokenize.READ_TOKENIZERS_KEPT):
        other = tmp_path / f"other{k}.json"
        other.write_text(json.dumps(wordlevel_json({"[UNK]": 0, f"w{k}": 1})))
        others.append(HFTokenizer.from_file(other))
    assert HFTokenizer.from_file(tmp_path / "other0.json") is others[0]
    assert HFTokenizer.from_file(path) is not again  # the oldest let go
