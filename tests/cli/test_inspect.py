"""`inspect`: its JSON checked against the table and numpy, its readable form,
tokens with no row, and texts and tables that crashed or took minutes.

Most checks call explorer.cli.dispatch.main(argv) in-process (capsys); a few run
`python -m explorer` in a subprocess to check the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from explorer.core.sources import open_table
from tests.support import model_factory as mf
from tests.support.cli import call, cli_environment, cli_models, run
from tests.support.paths import REPO


@pytest.fixture(scope="module", autouse=True)
def cli_env(tmp_path_factory):
    """Temporary cache/config folders and an HF cache holding one tiny model (tests/support/cli.py)."""
    yield from cli_environment(tmp_path_factory)


@pytest.fixture(scope="module")
def models(tmp_path_factory, cli_env):
    return cli_models(tmp_path_factory)


# --------------------------------------------------------------------------
# inspect --json, checked against the table and numpy
# --------------------------------------------------------------------------


_TABLES: dict = {}


def _table(spec: str):
    """Each table once per module, with its float64 rows and their norms."""
    if spec not in _TABLES:
        t = open_table(spec)
        m = t.matrix()[: t.trained_rows].astype(np.float64)
        _TABLES[spec] = (t, m, np.linalg.norm(m, axis=1))
    return _TABLES[spec]


def _cosines(m: np.ndarray, norms: np.ndarray, row: np.ndarray) -> np.ndarray:
    q = row.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = m @ q / (norms * np.linalg.norm(q))
    cos[~np.isfinite(cos) | (norms == 0)] = -np.inf
    return cos


def check_inspect(data: dict, spec: str, text: str, k: int = 5):
    table, matrix, norms = _table(spec)
    V, d = table.vocab_size, table.dim
    assert data["model"] == table.spec
    assert (data["vocab_size"], data["dim"], data["dtype"]) == (V, d, table.dtype)
    assert data["params"] == V * d
    assert data["row_bytes"] == table.row_bytes
    assert data["bytes"] == V * table.row_bytes
    assert data["tied"] is table.tied
    toks = table.tokenizer.encode(text)
    assert [t["id"] for t in data["tokens"]] == [t.id for t in toks]
    assert len(data["neighbors"]) == len(data["tokens"])
    for t, nbs in zip(data["tokens"], data["neighbors"]):
        assert t["piece"] == table.piece(t["id"])
        assert t["byte_offset"] == t["id"] * table.row_bytes
        row = np.asarray(t["row"], dtype=np.float32)
        np.testing.assert_array_equal(row, table.matrix()[t["id"]])
        if not t["special"]:
            assert t["text"] == text[t["start"] : t["end"]]
        # top-k other tokens by cosine, from numpy over the whole table
        cos = _cosines(matrix, norms, row)
        cos[t["id"]] = -np.inf
        eligible = int(np.isfinite(cos).sum())
        assert len(nbs) == min(k, eligible)
        ids = [n["id"] for n in nbs]
        assert t["id"] not in ids and len(set(ids)) == len(ids)
        want = np.sort(cos)[::-1][: len(nbs)]
        got = np.asarray([n["cosine"] for n in nbs])
        np.testing.assert_allclose(got, want, atol=1e-5)
        np.testing.assert_allclose(got, cos[ids], atol=1e-5)
        assert [n["piece"] for n in nbs] == [table.piece(i) for i in ids]
    return table


INSPECT_CASES = [
    # spec, text, tied
    ("default", "the quick fox chases the cat", False),  # stores its own lm_head
    ("toy:cat-sat", "the cat sat on the mat", None),
    ("toy:robot", "robot", None),
    ("toy:five-rows", "2", None),
    ("minilm", "Unhappiness at the river bank", None),  # BertModel: no output projection
    ("smollm2", "The unhappiness of a bank", True),  # GGUF without output.weight
    ("random:300x8:4", "42 7 42 299", None),
]


@pytest.mark.parametrize("spec, text, tied", INSPECT_CASES)
def test_inspect_json(capsys, cli_env, spec, text, tied):
    rc, out, err = call(capsys, "inspect", "--model", spec, "--text", text, "--json")
    assert rc == 0 and err == ""
    data = json.loads(out)
    assert data["tied"] is tied
    check_inspect(data, spec, text)


def test_inspect_json_fixed_facts(capsys, cli_env):
    rc, out, _ = call(capsys, "inspect", "--model", "toy:five-rows", "--text", "2", "--json")
    data = json.loads(out)
    assert data["tokens"][0]["row"] == pytest.approx([-0.78, 0.22, 0.05])
    assert data["tied"] is None and data["params"] == 15
    rc, out, _ = call(capsys, "inspect", "--model", "toy:gradient", "--text", "3 1 3", "--json")
    data = json.loads(out)
    assert [t["id"] for t in data["tokens"]] == [3, 1, 3]
    assert data["tokens"][0]["row"] == data["tokens"][2]["row"]
    rc, out, _ = call(capsys, "inspect", "--model", "random:50257x768", "--text", "42", "--json", "--k", "2")
    data = json.loads(out)
    assert data["tokens"][0]["byte_offset"] == 129_024
    assert data["params"] == 38_597_376 and data["bytes"] == 154_389_504
    assert len(data["neighbors"][0]) == 2


def test_inspect_words_and_specials(capsys, cli_env):
    text = "unhappiness"
    rc, out, _ = call(capsys, "inspect", "--model", "minilm", "--text", text, "--json", "--k", "3")
    data = json.loads(out)
    toks = data["tokens"]
    assert toks[0]["piece"] == "[CLS]" and toks[0]["special"] and toks[0]["word"] is None
    assert toks[-1]["piece"] == "[SEP]" and toks[-1]["special"]
    inner = toks[1:-1]
    assert len(inner) > 1 and len({t["word"] for t in inner}) == 1
    (word,) = data["words"]
    assert word["text"] == text and word["positions"] == [t["position"] for t in inner]
    np.testing.assert_allclose(word["mean"], np.mean([t["row"] for t in inner], axis=0), rtol=1e-5, atol=1e-7)
    assert all(len(n) == 3 for n in data["neighbors"])


def test_inspect_model_folder_and_cache(capsys, cli_env, models):
    built = models["gpt2"]
    rc, out, _ = call(capsys, "inspect", "--model", str(built.folder), "--text", mf.SAMPLE_TEXT, "--json")
    data = json.loads(out)
    assert data["dtype"] == "float32" and data["tied"] is True
    rows = np.asarray([t["row"] for t in data["tokens"]], dtype=np.float32)
    np.testing.assert_array_equal(rows, built.embedding[[t["id"] for t in data["tokens"]]])
    assert data["model_params"] == built.n_params
    rc, out, _ = call(capsys, "inspect", "--model", "hf:tiny/gpt", "--text", "the cat", "--json")
    data = json.loads(out)
    assert data["dtype"] == "float16" and data["tied"] is False and data["row_bytes"] == data["dim"] * 2
    check_inspect(data, "tiny/gpt", "the cat")


def test_inspect_empty_text(capsys, cli_env):
    for spec in ("minilm", "toy:cat-sat"):
        rc, out, _ = call(capsys, "inspect", "--model", spec, "--text", "", "--json")
        data = json.loads(out)
        assert rc == 0 and data["tokens"] == [] and data["neighbors"] == []
        rc, out, _ = call(capsys, "inspect", "--model", spec, "--text", "")
        assert rc == 0 and "no tokens" in out


# --------------------------------------------------------------------------
# inspect, readable form
# --------------------------------------------------------------------------


@pytest.mark.parametrize("spec, text", [("toy:cat-sat", "cat sat"), ("minilm", "the bank"), ("default", "the cat")])
def test_inspect_readable(capsys, cli_env, spec, text):
    rc, out, err = call(capsys, "inspect", "--model", spec, "--text", text)
    assert rc == 0 and err == ""
    rc2, js, _ = call(capsys, "inspect", "--model", spec, "--text", text, "--json")
    data = json.loads(js)
    lines = out.splitlines()
    assert f"[{data['model']}]" in lines[0]
    assert f"{data['vocab_size']:,} x {data['dim']:,} {data['dtype']}" in out
    assert f"{data['params']:,} parameters" in out
    body = [ln for ln in lines if ln.lstrip()[:1].isdigit()]
    assert len(body) == len(data["tokens"])
    for ln, t, nbs in zip(body, data["tokens"], data["neighbors"]):
        assert f"{t['id']:,}" in ln
        assert f"{t['byte_offset']:,} = 0x{t['byte_offset']:X}" in ln
        assert f"{t['row'][0]:+.3f}" in ln
        if nbs:
            assert f"{nbs[0]['cosine']:.2f}" in ln


@pytest.mark.parametrize(
    "spec, text, problems",
    [
        ("random:100x8", "5 99 100 -1 abc", [None, None, "past_last_row", "negative", "not_a_number"]),
        ("random:100x8", "hello", ["not_a_number"]),
        ("random:100x8", "3 " + "9" * 5000, [None, "too_many_digits"]),
        ("toy:robot", "robot dog", [None, "unknown_word"]),
    ],
)
def test_inspect_reports_tokens_with_no_row(capsys, cli_env, spec, text, problems):
    """Issue 12: the first bad word ended inspect with an error for the whole text."""
    rc, out, err = call(capsys, "inspect", "--model", spec, "--text", text, "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert [t["problem"] and t["problem"]["kind"] for t in data["tokens"]] == problems
    table = open_table(spec)
    for t, nbs in zip(data["tokens"], data["neighbors"]):
        if t["problem"] is None:  # the good ones are whole, and right
            np.testing.assert_array_equal(np.asarray(t["row"], np.float32), table.matrix()[t["id"]])
            assert t["byte_offset"] == t["id"] * table.row_bytes and nbs
        else:
            assert t["row"] is None and t["byte_offset"] is None and nbs is None
            assert t["problem"]["message"] and t["problem"]["label"]
    bad = [p for p in problems if p]
    assert sum(n[0].isdigit() for n in data["notes"]) == len(set(bad))  # one note per kind, with its count
    rc, out, err = call(capsys, "inspect", "--model", spec, "--text", text)
    assert rc == 0 and "no row: " in out and len(out.splitlines()) < 30


def test_inspect_of_a_book_on_a_table_of_ids_is_summarised(capsys, cli_env):
    book = "It was the best of times, it was the worst of times. " * 20_000
    rc, out, err = call(capsys, "inspect", "--model", "random:100x8", "--text", book)
    assert rc == 0, err
    notes = [ln for ln in out.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 2 and "words are not ids: 'It', 'was', 'the', …" in notes[1]
    assert sum(ln.startswith("token ") for ln in out.splitlines()) == 3  # the first few in full


def test_tokenizer_larger_than_table(capsys, cli_env, models):
    word = models["mismatch_word"]
    rc, out, err = call(capsys, "inspect", "--model", str(models["mismatch"]), "--text", f"the {word} cat", "--json")
    assert rc == 0, err
    data = json.loads(out)
    the, bad, cat = data["tokens"]
    assert the["problem"] is None and cat["problem"] is None and the["row"] and cat["row"]
    assert bad["problem"]["kind"] == "not_in_table" and bad["id"] >= data["vocab_size"]
    assert "the tokenizer does not match this table" in bad["problem"]["message"]
    assert any("ids past the table" in n for n in data["notes"])
    assert any(n.startswith("1 token has an id past the table's last row") for n in data["notes"])


# --------------------------------------------------------------------------
# The real entry point, in subprocesses (few: each costs seconds of imports)
# --------------------------------------------------------------------------


def test_subprocess_inspect_smollm2_json(cli_env, capsys):
    # in-process first, so the GGUF tokenizer is in the shared cache folder
    call(capsys, "inspect", "--model", "smollm2", "--text", "a", "--json")
    text = "The bank"
    p = run(cli_env, "inspect", "--model", "smollm2", "--text", text, "--json")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    check_inspect(json.loads(p.stdout), "smollm2", text)


def test_subprocess_inspect_readable_minilm(cli_env):
    p = run(cli_env, "inspect", "--model", "minilm", "--text", "unhappiness")
    assert p.returncode == 0, p.stderr
    assert "30,522 x 384 float32" in p.stdout
    assert "[CLS] (special)" in p.stdout and "##" in p.stdout
    assert "word 'unhappiness' is split into" in p.stdout


# --------------------------------------------------------------------------
# Issue 11: texts and tables that crashed or took minutes
# --------------------------------------------------------------------------


def test_subprocess_invalid_utf8_text(cli_env):
    """$'\\xff' on the command line arrives as a lone surrogate: every HF
    tokenizer raised TypeError before."""
    p = subprocess.run([sys.executable, "-m", "explorer", "inspect", "--model", "default", "--text",
                        b"the \xff cat", "--json"], cwd=REPO, env=cli_env["env"], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    data = json.loads(p.stdout)
    assert [t["text"] for t in data["tokens"]] == ["the", "\ufffd", "cat"]
    assert [t["start"] for t in data["tokens"]] == [0, 4, 6]


def test_inspect_json_is_strict_with_non_finite_weights(capsys, cli_env, tmp_path):
    import torch
    from safetensors.torch import save_file

    w = torch.randn(50, 8, generator=torch.Generator().manual_seed(0))
    w[3, 1], w[4, 0], w[4, 1] = float("nan"), float("inf"), float("-inf")
    save_file({"model.embed_tokens.weight": w}, str(tmp_path / "model.safetensors"))
    rc, out, err = call(capsys, "inspect", "--model", str(tmp_path), "--text", "3 4 5", "--json")
    assert rc == 0, err

    def refuse(name):
        raise AssertionError(f"bare {name} in the JSON")

    data = json.loads(out, parse_constant=refuse)
    rows = {t["id"]: t["row"] for t in data["tokens"]}
    assert rows[3][1] is None and rows[4][:2] == [None, None] and None not in rows[5]
    assert rows[3][0] == pytest.approx(float(w[3, 0]))
    # the readable form shows them too
    rc, out, _ = call(capsys, "inspect", "--model", str(tmp_path), "--text", "4")
    assert rc == 0 and "nan/inf" in out


def _english(chars: int) -> str:
    words = ("the river bank was quiet unlike the bank downtown and embedding tables map token ids to rows "
             "of numbers while training moves rare rows slowly").split()
    rng = np.random.default_rng(0)
    return " ".join(words[i] for i in rng.integers(0, len(words), chars // 3))[:chars]


@pytest.mark.parametrize("spec", ["smollm2", "random:50257x768"])
def test_inspect_of_the_longest_text_is_bounded(cli_env, spec):
    """20,000 characters ran a whole-vocabulary search per token: 57 s on
    SmolLM2, 101 s and 122 MB of JSON on 50,257 x 768. Each distinct id is
    now searched once, and the work is capped by sizes (no clock here)."""
    from explorer.core.tokens.inspection import InspectLimits, inspect_text
    from explorer.core.tokens.tokenize import MAX_TEXT_CHARS

    table, matrix, norms = _table(spec)
    if spec == "smollm2":
        text = _english(MAX_TEXT_CHARS)
    else:
        text = " ".join(str(i) for i in np.random.default_rng(1).integers(0, 50257, 5000))[:MAX_TEXT_CHARS]
    limits = InspectLimits()
    result = inspect_text(table, text, k=5, limits=limits)
    w = result.work
    distinct = list(dict.fromkeys(t.id for t in result.tokens))
    assert len(result.tokens) > 3000
    assert w.search_macs <= limits.search_macs and w.row_values <= limits.row_values
    assert w.scanned_values <= limits.scan_values
    assert w.searched_ids == min(len(distinct), limits.search_macs // (table.trained_rows * table.dim))
    data = result.as_json()
    assert len(json.dumps(data, allow_nan=False)) < 40_000_000
    # tokens of one id share one search; the searched ones agree with numpy
    by_id = {}
    for t, nbs in zip(data["tokens"], data["neighbors"]):
        if nbs is not None:
            assert by_id.setdefault(t["id"], nbs) == nbs
    for tid in list(by_id)[:5]:
        cos = _cosines(matrix, norms, table.matrix()[tid])
        cos[tid] = -np.inf
        np.testing.assert_allclose([n["cosine"] for n in by_id[tid]], np.sort(cos)[::-1][:5], atol=1e-5)
    if w.searched_ids < len(distinct):
        assert any("Neighbours are searched for the first" in n for n in data["notes"])
    if w.row_values < len(result.tokens) * table.dim:
        assert any("Rows are printed for the first" in n for n in data["notes"])
        assert data["tokens"][-1]["row"] is None


def test_inspect_does_not_search_tables_past_its_budget(capsys, cli_env):
    rc, out, err = call(capsys, "inspect", "--model", "random:10000000x65536", "--text", "5 7 5", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["neighbors"] == [None, None, None]
    assert data["tokens"][0]["row"] == data["tokens"][2]["row"] and len(data["tokens"][0]["row"]) == 65536
    assert any("Neighbours are not searched" in n for n in data["notes"])
