"""`python -m explorer analogy`: A - B + C by cosine, errors as one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.cli import dispatch as cli
from explorer.core.sources import open_table


def call(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_error_line(rc, out, err, word):
    assert rc == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and repr(word) in lines[0], err


@pytest.fixture(scope="module")
def default():
    return open_table("default")


def _expected(table, a, b, c, top, unit=True):
    """A - B + C over unit rows (or the rows as stored), by numpy in float64, inputs excluded."""
    ids = [table.tokenizer.id_of(w) for w in (a, b, c)]
    x = table.matrix().astype(np.float64)
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    target = (u if unit else x)[ids[0]] - (u if unit else x)[ids[1]] + (u if unit else x)[ids[2]]
    cos = u @ target / np.linalg.norm(target)
    cos[ids] = -np.inf
    order = np.argsort(-cos)[:top]
    return order, cos[order]


@pytest.mark.parametrize("query, answer",
                         [(("king", "man", "woman"), "queen"), (("prince", "boy", "girl"), "princess")])
def test_json_answers_are_the_nearest_rows(capsys, default, query, answer):
    rc, out, err = call(capsys, "analogy", "--model", "default", *query, "--top", "4", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["model"] == "default" and data["query"] == list(query)
    answers = data["answers"]
    assert [set(x) for x in answers] == [{"piece", "id", "cosine"}] * 4
    assert answer in [x["piece"] for x in answers[:3]]
    order, cos = _expected(default, *query, 4)
    assert [x["id"] for x in answers] == order.tolist()
    np.testing.assert_allclose([x["cosine"] for x in answers], cos, atol=1e-5)
    assert all(default.piece(x["id"]) == x["piece"] for x in answers)
    assert not {x["piece"] for x in answers} & set(query)


def test_form_plain_is_the_sum_of_the_rows_as_stored(capsys, default):
    rc, out, err = call(capsys, "analogy", "--model", "default", "king", "man", "woman", "--top", "5",
                        "--form", "plain", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert (data["form"], data["formula"]) == ("plain", "a − b + c")
    order, cos = _expected(default, "king", "man", "woman", 5, unit=False)
    assert [x["id"] for x in data["answers"]] == order.tolist()
    np.testing.assert_allclose([x["cosine"] for x in data["answers"]], cos, atol=1e-5)
    rc, out, _ = call(capsys, "analogy", "king", "man", "woman", "--form", "plain")
    assert rc == 0 and "a − b + c: the rows as stored" in out.splitlines()[0]
    rc, out, _ = call(capsys, "analogy", "king", "man", "woman")
    assert rc == 0 and "each row scaled to length 1" in out.splitlines()[0]


def test_text_output_ranks_the_answers(capsys):
    rc, out, err = call(capsys, "analogy", "king", "man", "woman", "--top", "3")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("king - man + woman") and len(lines) == 4
    assert "queen" in out and all("cosine" in ln for ln in lines[1:])


def test_a_table_smaller_than_top_gives_what_it_has(capsys):
    """toy:robot holds robot, arm, box, tool: excluding three leaves one."""
    rc, out, err = call(capsys, "analogy", "--model", "toy:robot", "robot", "arm", "box", "--json")
    assert rc == 0, err
    assert [x["piece"] for x in json.loads(out)["answers"]] == ["tool"]


@pytest.mark.parametrize("words, bad", [
    (("king", "man", "saw"), "saw"),  # not in the bundled vocabulary
    (("kingdom", "man", "woman"), "kingdom"),
    (("king", " ", "woman"), " "),
])
def test_a_word_without_a_row_is_an_error(capsys, words, bad):
    assert_one_error_line(*call(capsys, "analogy", *words), bad)


def test_a_word_split_into_pieces_is_an_error(capsys):
    rc, out, err = call(capsys, "analogy", "--model", "minilm", "king", "unhappiness", "woman")
    assert_one_error_line(rc, out, err, "unhappiness")
    assert "pieces" in err


def test_top_must_be_positive(capsys):
    rc, out, err = call(capsys, "analogy", "king", "man", "woman", "--top", "0")
    assert rc == 2 and err.startswith("error: ")
