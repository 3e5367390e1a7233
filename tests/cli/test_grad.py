"""`python -m explorer grad`: the lookup's gradient on a text, errors as one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from explorer.cli import dispatch as cli
from explorer.core.sources import open_table


def call(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_is_the_autograd_gradient_of_the_table(capsys):
    text = "the cat sat on the mat and the robot sat on the box"
    rc, out, err = call(capsys, "grad", "--model", "default", "--text", text, "--seed", "3", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert set(data) == {"model", "ids", "upstream", "rows_with_gradient", "grad"} and data["model"] == "default"
    table = open_table("default")
    ids = [t.id for t in table.tokenizer.encode(text)]
    assert data["ids"] == ids
    g = np.asarray(data["upstream"])
    assert g.shape == (len(ids), table.dim)
    e = torch.tensor(table.matrix(), dtype=torch.float64, requires_grad=True)
    (e[torch.tensor(ids)] * torch.tensor(g)).sum().backward()
    ref = e.grad.numpy()
    assert data["rows_with_gradient"] == sorted(set(ids)) == np.flatnonzero(ref.any(axis=1)).tolist()
    assert set(data["grad"]) == {str(i) for i in set(ids)}
    for k, row in data["grad"].items():
        np.testing.assert_allclose(row, ref[int(k)], atol=1e-6)


def test_the_seed_sets_the_upstream_gradient(capsys):
    runs = [json.loads(call(capsys, "grad", "--model", "toy:gradient", "--text", "3 1 3", "--seed", s, "--json")[1])
            for s in ("0", "0", "1")]
    assert runs[0] == runs[1] and runs[0]["upstream"] != runs[2]["upstream"]
    assert runs[0]["rows_with_gradient"] == [1, 3]


def test_text_output_names_the_repeated_row(capsys):
    rc, out, err = call(capsys, "grad", "--model", "toy:gradient", "--text", "3 1 3")
    assert rc == 0, err
    assert "2 of 6 rows get a gradient, 4 rows are exactly zero" in out
    assert "sum of 2 contributions (positions 0, 2)" in out


@pytest.mark.parametrize("spec, text", [("random:10x4", "3 1 99"), ("random:10x4", "-1"), ("default", "")])
def test_ids_outside_the_table_are_one_error_line(capsys, spec, text):
    rc, out, err = call(capsys, "grad", "--model", spec, "--text", text)
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
