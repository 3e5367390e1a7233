"""`python -m explorer train`: per-step JSON, the error exit, text corpora, saving."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from explorer.cli import main
from explorer.core.training.language import make_corpus
from tests.support.paths import REPO as ROOT  # noqa: E402


@pytest.fixture(autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _json_lines(capsys, argv):
    assert main(argv) == 0
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines()]


def test_json_per_step_untied(capsys):
    rows = _json_lines(capsys, ["train", "--steps", "6", "--json", "--untied", "--dim", "8"])
    v = make_corpus(200).vocab_size  # the vocabulary does not depend on the corpus size
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5, 6]
    for r in rows:
        assert {"step", "loss", "vocab_size", "batch_distinct_ids", "grad_rows", "changed_rows"} <= r.keys()
        assert r["vocab_size"] == v
        assert r["grad_rows"] == r["batch_distinct_ids"] < v
        assert r["grad_fraction"] == pytest.approx(r["grad_rows"] / v)
    assert rows[0]["loss"] == pytest.approx(np.log(v), rel=0.05)


def test_json_tied_gradient_is_dense(capsys):
    rows = _json_lines(capsys, ["train", "--steps", "3", "--json", "--tied", "--dim", "8"])
    assert all(r["grad_rows"] == r["vocab_size"] and r["tied"] for r in rows)


def test_json_sparse_adam_and_adamw(capsys):
    rows = _json_lines(capsys, ["train", "--steps", "4", "--json", "--sparse", "--optimizer", "sparse_adam"])
    assert all(r["changed_rows"] <= r["grad_rows"] == r["batch_distinct_ids"] for r in rows)
    rows = _json_lines(capsys, ["train", "--steps", "3", "--json", "--optimizer", "adamw", "--weight-decay", "0.1"])
    assert all(r["changed_rows"] == r["vocab_size"] for r in rows)


@pytest.mark.parametrize("argv,words", [
    (["--sparse", "--tied"], "tying"),
    (["--optimizer", "sparse_adam"], "sparse gradients"),
    (["--sparse", "--optimizer", "adam"], "SparseAdam"),
    (["--sparse", "--optimizer", "sgd", "--weight-decay", "0.1"], "weight decay"),
    (["--optimizer", "lion"], "unknown optimizer"),
    (["--tied", "--untied"], "not allowed"),
    (["--corpus", "/no/such/file.txt"], "cannot read"),
])
def test_impossible_options_exit_2(capsys, argv, words):
    assert main(["train", "--steps", "2", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and words in err and "\n" not in err


def test_divergence_exits_2(capsys):
    assert main(["train", "--steps", "300", "--optimizer", "sgd", "--lr", "10000", "--json"]) == 2
    assert "diverged" in capsys.readouterr().err


def test_text_corpus_and_save(capsys, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("the cat sat on the mat .\nthe dog sat on the log .\n" * 10)
    rows = _json_lines(capsys, ["train", "--steps", "3", "--json", "--corpus", str(text), "--save",
                                str(tmp_path / "m"), "--dim", "4"])
    assert rows[0]["vocab_size"] == 8 + 2  # 8 word types, <bos>, <unk>
    from explorer.core.sources import open_table

    table = open_table(str(tmp_path / "m"))
    assert (table.vocab_size, table.dim) == (10, 4)


def test_as_a_process():
    out = subprocess.run([sys.executable, "-m", "explorer", "train", "--steps", "2", "--json", "--dim", "4"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 2
    bad = subprocess.run([sys.executable, "-m", "explorer", "train", "--sparse", "--tied"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")
