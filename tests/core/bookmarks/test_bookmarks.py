"""Bookmark files (explorer.core.bookmarks): a round trip, and every bad file is one clear error."""

from __future__ import annotations

import json

import pytest

from explorer.core.bookmarks import Bookmark, BookmarkError, dumps, loads, read_file, write_file


def test_a_file_round_trips(tmp_path):
    marks = [Bookmark("why, on MiniLM", "minilm", "the cat sat", 2, "cost:why"),
             Bookmark("bank ☕ 日本", "default", "the river bank", -1, "matrix")]
    write_file(tmp_path / "b.json", marks)
    data = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert data["format"] == "explorer-bookmarks" and data["version"] == 1 and len(data["bookmarks"]) == 2
    assert read_file(tmp_path / "b.json") == marks
    assert loads(dumps(marks)) == marks


@pytest.mark.parametrize("text, words", [
    ("not json", "not JSON"),
    ("[]", "not an explorer bookmark file"),
    ('{"format": "explorer-bookmarks"}', "no list"),
    ('{"format": "explorer-bookmarks", "bookmarks": [3]}', "JSON object"),
    ('{"format": "explorer-bookmarks", "bookmarks": [{"model": "default"}]}', "no name"),
    ('{"format": "explorer-bookmarks", "bookmarks": [{"name": "a"}]}', "names no model"),
    ('{"format": "explorer-bookmarks", "bookmarks": [{"name": "a", "model": "x", "position": -7}]}', "position"),
    ('{"format": "explorer-bookmarks", "bookmarks": [{"name": "a", "model": "x", "position": true}]}', "position"),
    ('{"format": "explorer-bookmarks", "bookmarks": [{"name": "a", "model": "x", "text": 5}]}', "text"),
])
def test_bad_files_say_what_is_wrong(text, words):
    with pytest.raises(BookmarkError, match=words):
        loads(text)


def test_an_unreadable_file_is_an_error_not_a_crash(tmp_path):
    with pytest.raises(BookmarkError, match="cannot read"):
        read_file(tmp_path / "missing.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BookmarkError):
        read_file(tmp_path / "bin.json")
