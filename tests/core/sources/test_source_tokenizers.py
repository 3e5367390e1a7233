"""The tokenizer that comes with a source: the model's own, the GGUF
vocabulary converted once and cached, and tokenizers that disagree with the
table or fail at run time."""

from __future__ import annotations

import json
import os

import pytest

from explorer.core.sources import open_table
from tests.support import model_factory as mf
from tests.support.paths import REPO


def test_minilm_tokenizer_is_bert_wordpiece(minilm_table, minilm_dir):
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(minilm_dir))
    text = "The river bank had unhappiness."
    toks = minilm_table.tokenizer.encode(text)
    assert [x.id for x in toks] == hf(text)["input_ids"]
    assert [x.piece for x in toks] == hf.convert_ids_to_tokens(hf(text)["input_ids"])
    assert minilm_table.tokenizer.kind == "WordPiece"


def test_tokenizers_differ_between_architectures(zoo):
    """The tokenizer follows the folder: same text, different ids."""
    a = open_table(str(zoo[("gpt2", "float32", True, False)].folder))
    b = open_table(str(zoo[("bert", "float32", True, False)].folder))
    ia = [x.id for x in a.tokenizer.encode(mf.SAMPLE_TEXT)]
    ib = [x.id for x in b.tokenizer.encode(mf.SAMPLE_TEXT)]
    assert ia != ib


def test_tokenizer_larger_than_table_is_flagged(mismatch_folder):
    folder, tok = mismatch_folder
    t = open_table(str(folder))
    assert t.vocab_size == tok.get_vocab_size() - 40
    assert t.tokenizer.vocab_size == tok.get_vocab_size()
    assert t.trained_rows == t.vocab_size
    assert any("ids past the table" in n for n in t.notes)
    high = tok.id_to_token(tok.get_vocab_size() - 1)
    (token,) = t.tokenizer.encode(high)
    assert token.id >= t.vocab_size
    with pytest.raises(IndexError, match="out of range"):
        t.rows([token.id])


def test_tokenizer_with_an_id_of_three_billion_costs_no_memory(tmp_path):
    """The piece table was a list up to the largest id: 24 GB for 3e9."""
    import tracemalloc

    tj = mf.wordlevel_json({"[UNK]": 0, "a": 1, "far": 3_000_000_000})
    t = open_table(str(mf.folder_with_tokenizer(tmp_path / "m", tj)))
    tracemalloc.start()
    try:
        assert t.piece(1) == "a" and t.piece(3_000_000_000) == "far" and t.piece(7) == "<7>"
        assert t.completion_pieces()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024
    (tok,) = t.tokenizer.encode("far")
    assert tok.id == 3_000_000_000  # flagged out of range by its users, not a crash here


@pytest.mark.parametrize("tokenizer, text, pattern", [
    (mf.wordlevel_json({"a": 0, "b": 1}, unk="[UNK]"), "a zzz", "Missing \\[UNK\\] token"),
    (mf.wordlevel_json({"[UNK]": 0, "a": 1}, pre_tokenizer=mf.BACKTRACKING_SPLIT), "a" * 40 + "b", "retry-limit"),
])
def test_tokenizer_failures_are_tokenize_errors(tmp_path, tokenizer, text, pattern):
    from explorer.core.tokens.tokenize import TokenizeError

    t = open_table(str(mf.folder_with_tokenizer(tmp_path / "m", tokenizer)))
    with pytest.raises(TokenizeError, match=pattern) as info:
        t.tokenizer.encode(text)
    assert len(str(info.value).splitlines()) == 1


# --------------------------------------------------------------------------
# GGUF vocabularies converted once, shared between processes
# --------------------------------------------------------------------------


def test_gguf_tokenizer_cache_is_written_under_a_unique_name(gguf_with_vocab, tmp_path, monkeypatch):
    """The old fixed name tokenizer.tmp collided between two processes; a
    folder squatting it now changes nothing, and nothing is left behind."""
    from explorer.core.sources import gguf_source

    cache = tmp_path / "cache"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))
    t = open_table(str(gguf_with_vocab.path))
    (entry,) = list((cache / "gguf-tokenizers").glob("*/tokenizer.json"))
    (entry.parent / "tokenizer.tmp").mkdir()  # where every process used to write
    assert gguf_source.save_atomically(t.tokenizer.backend, entry)
    leftovers = [p.name for p in entry.parent.iterdir() if p.name not in ("tokenizer.json", "tokenizer.tmp")]
    assert leftovers == []
    again = open_table(str(gguf_with_vocab.path))
    assert [x.id for x in again.tokenizer.encode("cat sat")] == [x.id for x in t.tokenizer.encode("cat sat")]


def test_the_gguf_tokenizer_cache_follows_the_file_not_its_place(gguf_with_vocab, tmp_path, monkeypatch):
    """A reinstalled package holds the same file at another path with another mtime: it finds
    the tokenizer built for the first (SmolLM2's took 17 s again in a new environment). A file
    with another vocabulary never does."""
    import shutil

    cache = tmp_path / "cache"
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(cache))

    def entries():
        return sorted(cache.glob("gguf-tokenizers/*/tokenizer.json"))

    first = open_table(str(gguf_with_vocab.path))
    (entry,) = entries()
    written = entry.stat().st_mtime_ns
    moved = tmp_path / "reinstalled" / "vocab.gguf"
    moved.parent.mkdir()
    shutil.copyfile(gguf_with_vocab.path, moved)
    os.utime(moved, ns=(written + 10**9, written + 10**9))  # another path, another mtime
    again = open_table(str(moved))
    assert entries() == [entry] and entry.stat().st_mtime_ns == written  # read, not built again
    assert [x.id for x in again.tokenizer.encode("cat sat")] == [x.id for x in first.tokenizer.encode("cat sat")]
    other = mf.build_gguf(tmp_path / "other.gguf", "Q8_0", tied=True, vocab=40, with_tokenizer=True, seed=11)
    t = open_table(str(other.path))
    assert len(entries()) == 2 and t.tokenizer.vocab_size < first.tokenizer.vocab_size


def test_two_processes_build_the_gguf_tokenizer_at_once(gguf_with_vocab, tmp_path):
    import subprocess
    import sys

    env = dict(os.environ, EXPLORER_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(REPO))
    code = ("import sys; from explorer.core.sources import open_table; "
            "t = open_table(sys.argv[1]); print([x.id for x in t.tokenizer.encode('cat sat')])")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(gguf_with_vocab.path)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-500:] for o in outs]
    assert outs[0][0] == outs[1][0] and outs[0][0].startswith("[")
    folder = tmp_path / "cache" / "gguf-tokenizers"
    files = sorted(p.name for p in folder.rglob("*") if p.is_file())
    assert files == ["tokenizer.json"]
    json.loads(next(folder.rglob("tokenizer.json")).read_text())  # complete, not half written
