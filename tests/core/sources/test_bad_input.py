"""Bad input: each a SourceError with a message that says what is wrong, in
one line, never a crash, the wrong bytes or code run from a pickle
(issue 11)."""

from __future__ import annotations

import pytest

from explorer.core.sources import SourceError, open_table
from tests.support import model_factory as mf


@pytest.fixture
def bad_inputs(tmp_path, gpt2_single, llama_sharded, ggufs):
    def make(name):
        fn, _ = mf.BAD_FILES[name]
        return fn(tmp_path, gpt2=gpt2_single, sharded=llama_sharded, gguf_file=ggufs[("Q8_0", True)].path)

    return make


@pytest.mark.parametrize("name", list(mf.BAD_FILES))
def test_bad_files_raise_source_error(bad_inputs, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = bad_inputs(name)
    with pytest.raises(SourceError, match=mf.BAD_FILES[name][1]) as info:
        open_table(str(path))
    msg = str(info.value)
    assert "\n" not in msg and len(msg) < 400
    assert not (tmp_path / "PWNED").exists()  # nothing was unpickled


@pytest.mark.parametrize(
    "spec, pattern",
    [
        ("", "no model given"),
        ("   ", "no model given"),
        ("what is this?", "unknown model spec"),
        ("toy:", "unknown toy table"),
        ("random:axb", "bad random spec"),
        ("random:0x5", "out of range"),
        ("not-a-repo-here", "Hugging Face cache"),
    ],
)
def test_bad_specs(spec, pattern):
    with pytest.raises(SourceError, match=pattern):
        open_table(spec)


@pytest.mark.parametrize("spec, pattern", [
    ("~nosuchuser-explorer/x", "not a user of this machine"),
    ("random:" + "9" * 5000 + "x4", "out of range"),
    ("random:4x" + "9" * 5000, "out of range"),
    ("random:4x4:" + "9" * 5000, "seed .* too long"),
    ("toy:robot\nrm -rf", "unknown toy table"),
    ("what\nis\u2028this", "unknown model spec"),
    ("a\x00b", "NUL"),
    ("hf:../../etc", "not a repo id"),
])
def test_bad_specs_are_one_line(spec, pattern):
    with pytest.raises(SourceError, match=pattern) as info:
        open_table(spec)
    msg = str(info.value)
    assert len(msg.splitlines()) == 1 and "\u2028" not in msg and len(msg) < 400


def test_id_checks():
    t = open_table("toy:robot")
    with pytest.raises(IndexError):
        t.row(4)
    with pytest.raises(IndexError):
        t.rows([0, -1])
    with pytest.raises(TypeError):
        t.byte_offset(1.5)
