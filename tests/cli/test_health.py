"""`python -m explorer health`: its JSON, its text, and its one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from explorer.cli import dispatch as cli
from explorer.core.sources import open_table


def call(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_error_line(rc, out, err):
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err


def test_health_json_minilm(capsys):
    rc, out, err = call(capsys, "health", "--model", "minilm", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert {"model", "vocab_size", "dim", "seconds", "reference", "categories", "candidates"} <= set(data)
    assert (data["model"], data["vocab_size"], data["dim"]) == ("minilm", 30522, 384)
    assert data["reference"]["kind"] == "unused_tokens" and data["reference"]["count"] == 994
    assert sum(data["categories"].values()) == 30522 and data["categories"]["special"] == 5
    cands = data["candidates"]
    assert len(cands) == 100  # the default --top
    assert all({"id", "piece", "category", "norm", "score"} <= set(c) for c in cands)
    # [unusedN] no text reaches: listed apart, never ranked among reachable tokens
    assert all(c["category"] == "ok" for c in cands)
    unreachable = data["unreachable"]
    assert sum(bool(re.fullmatch(r"\[unused\d+\]", u["piece"])) for u in unreachable) == 994
    assert all(u["kind"] == "multi-token" for u in unreachable if re.fullmatch(r"\[unused\d+\]", u["piece"]))
    assert [s["piece"] for s in data["special"]] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert data["scored_matrix"] == "input" and data["tied"] is None
    assert [c["score"] for c in cands[:10]] == sorted((c["score"] for c in cands[:10]), reverse=True)


def test_health_text_bundled(capsys):
    rc, out, err = call(capsys, "health", "--model", "default", "--top", "5")
    assert rc == 0, err
    v = open_table("default").vocab_size
    assert f"3 of {v} rows look under-trained" in out
    table_lines = out.splitlines()[-5:]
    # "of" never occurs in the corpus; <pad> and <unk> are special tokens, listed apart from the ranking
    assert table_lines[0].split()[2] == "of"
    assert "special (3): <pad>, <unk>, <bos>" in out
    assert "scored: the output matrix" in out


@pytest.mark.parametrize(
    "argv, pattern",
    [
        (["health", "--model", "toy:nope"], "unknown toy table"),
        (["health", "--model", "random:0x5"], "out of range"),
        (["health", "--model", "toy:robot", "--top", "-1"], "--top must be 0 or more"),
    ],
)
def test_health_bad_arguments_exit_2(capsys, argv, pattern):
    rc, out, err = call(capsys, *argv)
    assert_one_error_line(rc, out, err)
    assert pattern in err


def test_health_unreadable_file_exit_2(capsys, tmp_path):
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    rc, out, err = call(capsys, "health", "--model", str(bad))
    assert_one_error_line(rc, out, err)
