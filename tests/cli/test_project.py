"""`python -m explorer project`: PCA against numpy, t-SNE and UMAP layouts
with their trustworthiness (UMAP's truth test lives here: UMAP on 800 MiniLM
rows keeps a trustworthiness of at least 0.8, and the same seed gives the
same layout), the JSON keys, and the one-line errors."""

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


def project_json(capsys, *argv):
    rc, out, err = call(capsys, "project", *argv, "--json")
    assert rc == 0, err
    return json.loads(out)


def test_pca_equals_numpys_up_to_sign(capsys):
    data = project_json(capsys, "--model", "minilm", "--method", "pca", "--dims", "3")
    assert {"model", "method", "seed", "ids", "coords", "seconds", "explained"} <= set(data)
    assert "trustworthiness" not in data
    e = open_table("minilm").matrix().astype(np.float64)
    assert data["ids"] == list(range(len(e)))
    centred = e - e.mean(0)
    var, vecs = np.linalg.eigh(centred.T @ centred)  # the right singular vectors, ascending
    ref = centred @ vecs[:, ::-1][:, :3]
    got = np.array(data["coords"])
    assert got.shape == (len(e), 3)
    got *= np.sign((got * ref).sum(0))
    np.testing.assert_allclose(got, ref, atol=1e-3 * np.abs(ref).max())
    np.testing.assert_allclose(data["explained"], var[::-1][:3] / var.sum(), rtol=1e-4)


def test_tsne_json_is_seeded(capsys):
    a = project_json(capsys, "--model", "default", "--method", "tsne", "--sample", "150", "--seed", "4")
    b = project_json(capsys, "--model", "default", "--method", "tsne", "--sample", "150", "--seed", "4", "--recompute")
    assert not b["cached"]  # computed again: the seed, not the layout cache, makes them equal
    assert {"model", "method", "seed", "ids", "coords", "seconds", "trustworthiness"} <= set(a)
    assert (a["model"], a["method"], a["seed"]) == ("default", "tsne", 4) and "explained" not in a
    assert len(a["ids"]) == len(a["coords"]) == 150 and all(len(c) == 2 for c in a["coords"])
    assert 0.5 < a["trustworthiness"] <= 1
    assert a["ids"] == b["ids"]
    np.testing.assert_allclose(a["coords"], b["coords"], atol=1e-3 * np.abs(a["coords"]).max())


def test_umap_keeps_neighbourhoods_is_seeded_and_has_three_dimensions(capsys):
    a = project_json(capsys, "--model", "minilm", "--method", "umap", "--sample", "800", "--seed", "1")
    b = project_json(capsys, "--model", "minilm", "--method", "umap", "--sample", "800", "--seed", "1", "--recompute")
    assert not b["cached"]
    assert len(a["coords"]) == 800 and a["trustworthiness"] >= 0.8
    np.testing.assert_allclose(a["coords"], b["coords"], atol=1e-3 * np.abs(a["coords"]).max())
    data = project_json(capsys, "--model", "default", "--method", "umap", "--sample", "80", "--dims", "3")
    assert len(data["coords"]) == 80 and all(len(c) == 3 for c in data["coords"])
    assert 0 < data["trustworthiness"] <= 1


def test_readable_summary(capsys):
    rc, out, _ = call(capsys, "project", "--model", "default")
    assert rc == 0 and "PCA of default" in out and "explained variance: PC1" in out


@pytest.mark.parametrize("argv, pattern", [
    (["--method", "mds"], "unknown method 'mds'"),
    (["--method", "tsne", "--sample", "2"], "at least 5"),
    (["--sample", "many"], "whole number"),
    (["--dims", "4"], "2 or 3"),
    (["--dims", "1"], "2 or 3"),
    (["--model", "nope:1"], ""),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, pattern):
    rc, out, err = call(capsys, "project", *argv)
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: ")
    assert pattern in lines[0]


def test_exports_for_the_projector_and_embedding_atlas(capsys, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    folder, parquet = tmp_path / "projector", tmp_path / "layout.parquet"
    data = project_json(capsys, "--model", "default", "--method", "tsne", "--sample", "60", "--dims", "3",
                        "--export-projector", str(folder), "--export-atlas", str(parquet))
    assert data["exports"] == {"projector": str(folder), "atlas": str(parquet)}
    got = pq.read_table(parquet).to_pydict()
    table = open_table("default")
    assert got["id"] == data["ids"] and got["piece"] == [table.shown_piece(i).text for i in data["ids"]]
    np.testing.assert_allclose(np.c_[got["x"], got["y"], got["z"]], data["coords"], rtol=1e-6)
    assert got["kind"][0] is not None and got["norm"] == pytest.approx(
        np.linalg.norm(table.rows(data["ids"]).astype(np.float64), axis=1).tolist(), rel=1e-5)
    layout = np.loadtxt(folder / "layout.tsv", delimiter="\t", dtype=np.float32)
    np.testing.assert_allclose(layout, data["coords"], rtol=1e-6)
    shape = (len(data["ids"]), table.dim)
    np.testing.assert_array_equal(np.fromfile(folder / "vectors.bytes", "<f4").reshape(shape),
                                  table.rows(data["ids"]).astype(np.float32))
    assert f"tensor_shape: {shape[1]}" in (folder / "projector_config.pbtxt").read_text()
    rc, out, _ = call(capsys, "project", "--model", "default", "--export-atlas", str(parquet))
    assert rc == 0 and f"embedding-atlas {parquet} --x x --y y --text piece" in out


def test_an_export_that_cannot_be_written_is_one_error_line(capsys, tmp_path):
    (tmp_path / "file").write_text("")
    rc, out, err = call(capsys, "project", "--model", "default", "--export-projector", str(tmp_path / "file"))
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: Could not write")


def test_the_second_layout_comes_from_the_cache_and_recompute_bypasses_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_LAYOUT_CACHE", str(tmp_path / "layouts"))
    argv = ("--model", "default", "--method", "umap", "--sample", "120", "--seed", "2")
    first = project_json(capsys, *argv)
    again = project_json(capsys, *argv)
    fresh = project_json(capsys, *argv, "--recompute")
    assert (first["cached"], again["cached"], fresh["cached"]) == (False, True, False)
    assert again["coords"] == first["coords"] and again["ids"] == first["ids"]
    assert again["trustworthiness"] == first["trustworthiness"]
    other_seed = project_json(capsys, *argv[:-1], "3")
    assert not other_seed["cached"]
    assert not project_json(capsys, "--model", "default", "--method", "pca")["cached"]
    rc, out, _ = call(capsys, "project", *argv)
    assert rc == 0 and "from the layout cache" in out


def test_an_unwritable_cache_still_gives_the_layout_and_says_why(capsys, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EXPLORER_LAYOUT_CACHE", str(blocker / "layouts"))
    data = project_json(capsys, "--model", "default", "--method", "umap", "--sample", "60")
    assert len(data["coords"]) == 60 and not data["cached"]
    assert "not cached" in data["cache_note"]
