"""The user's metadata file (explorer.core.interop.metadata_file): keyed by id
or by piece, text columns as categories, number columns as bins of equal
counts, ``column=value`` searches, and a clear sentence for every bad file."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.interop.metadata_file import MAX_CATEGORIES, MetadataFileError, read_metadata_file
from explorer.core.sources import open_table


@pytest.fixture(scope="module")
def minilm():
    return open_table("minilm")


def test_by_id_a_tsv_with_text_and_numbers(tmp_path, minilm):
    rng = np.random.default_rng(1)
    ids = rng.choice(minilm.vocab_size, 300, replace=False)
    scores = rng.normal(size=300)
    topics = [["royal", "animal", "place"][k % 3] for k in range(300)]
    lines = ["id\ttopic\tscore"] + [f"{i}\t{t}\t{s:.6f}" for i, t, s in zip(ids, topics, scores)]
    lines += [f"{minilm.vocab_size + 5}\troyal\t1", "nope\troyal\t1"]  # two rows that name no token
    (tmp_path / "m.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    meta = read_metadata_file(tmp_path / "m.tsv", minilm)
    assert (meta.key, meta.rows, meta.matched) == ("id", 302, 300) and "302 rows" in meta.describe()
    topic, score = meta.column("topic"), meta.column("score")
    assert set(topic.labels) == {"royal", "animal", "place"} and not topic.numeric
    assert [topic.labels[topic.codes[i]] for i in ids] == topics
    others = np.setdiff1d(np.arange(minilm.vocab_size), ids)
    assert (topic.codes[others] == -1).all() and (score.codes[others] == -1).all()
    assert score.numeric and len(score.labels) == 6
    counts = np.bincount(score.codes[ids], minlength=6)
    assert counts.min() >= 40  # bins of (about) equal counts: 300 / 6 = 50
    order = np.argsort(scores)
    assert (np.diff(score.codes[ids[order]]) >= 0).all()  # the bins follow the numbers
    col, hits = meta.search("topic=ROY")
    assert col is topic and hits.tolist() == sorted(i for i, t in zip(ids.tolist(), topics) if t == "royal")
    assert meta.search("nothing=1") is None and meta.search("plain words") is None


def test_by_piece_a_csv_and_rare_values_are_other(tmp_path, minilm):
    words = ["king", "queen", "##ing", "paris", "notaword-xyz"]
    rows = ["piece,label"] + [f"{w},{w[:2]}" for w in words]
    rows += [f"{minilm.piece(i)},cat{i}" for i in range(2000, 2000 + MAX_CATEGORIES + 3)]
    (tmp_path / "m.csv").write_text("\n".join(rows), encoding="utf-8")
    meta = read_metadata_file(tmp_path / "m.csv", minilm)
    assert meta.key == "piece" and meta.matched == 4 + MAX_CATEGORIES + 3 and "'notaword-xyz'" in meta.unmatched
    col = meta.column("label")
    assert col.text[minilm.tokenizer.id_of("queen")] == "qu" and col.text[minilm.tokenizer.id_of("##ing")] == "##"
    assert len(col.labels) == MAX_CATEGORIES + 1 and col.labels[-1] == "other"


def test_a_word_start_matches_by_its_word(tmp_path):
    from tests.support import model_factory as mf

    vocab = {"[UNK]": 0, "Ġqueen": 1, "Ġking": 2, "king": 3, "ing": 4}  # byte-level: Ġ is the space
    doc = mf.wordlevel_json(vocab, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False,
                                                  "trim_offsets": True, "use_regex": True})
    table = open_table(str(mf.folder_with_tokenizer(tmp_path / "bl", doc, vocab=len(vocab))))
    assert table.shown_piece(1).text == "␣queen"
    (tmp_path / "m.csv").write_text("piece,x\nqueen,a\nking,b\n␣king,c\nĠqueen,d\n", encoding="utf-8")
    col = read_metadata_file(tmp_path / "m.csv", table).column("x")
    # "queen" names the word start (no row is stored as "queen"); "king" names the row stored as "king";
    # "␣king" (as shown) and "Ġqueen" (as stored) name their rows
    assert [col.text[i] for i in range(5)] == ["", "d", "c", "b", ""]


@pytest.mark.parametrize("content, words", [
    ("", "no rows"),
    ("a,b\n1,2\n", "no id or piece column"),
    ("id\n1\n2\n", "only the id column"),
    ("id,x\n999999999,1\n", "None of the 1 rows"),
])
def test_bad_files_say_what_to_do(tmp_path, minilm, content, words):
    (tmp_path / "m.csv").write_text(content, encoding="utf-8")
    with pytest.raises(MetadataFileError, match=words):
        read_metadata_file(tmp_path / "m.csv", minilm)


def test_unreadable_files(tmp_path, minilm):
    (tmp_path / "bin.csv").write_bytes(b"id,x\n1,\xff\xfe\n")
    with pytest.raises(MetadataFileError, match="not UTF-8"):
        read_metadata_file(tmp_path / "bin.csv", minilm)
    with pytest.raises(MetadataFileError, match="Could not read"):
        read_metadata_file(tmp_path / "missing.csv", minilm)
