"""Layouts handed to other tools (explorer.core.interop): the Embedding
Projector's folder read back with TensorBoard's own parsers (its config
protobuf, its tensor readers) and the Embedding Atlas parquet read back with
pyarrow; pieces holding tabs and line breaks stay one row each."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.interop.atlas import write_atlas
from explorer.core.interop.projector import CONFIG_NAME, METADATA_NAME, write_projector
from explorer.core.interop.rows import METADATA_COLUMNS, layout_rows
from explorer.core.projection import job as pj
from explorer.core.sources import open_table
from explorer.core.tokens.meta import iter_token_metadata
from tests.support import model_factory as mf
from tests.support.jobs import drain

#: pieces a TSV without quoting would break: a tab, a line break, a carriage return, a quote
AWKWARD = ["[UNK]", "tab\there", "two\nlines", "cr\rhere", '"quoted"', "a:b", "plain", "é", "x y"]


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """A real table whose tokenizer's pieces hold tabs and line breaks, its PCA, and its rows."""
    vocab = {p: i for i, p in enumerate(AWKWARD + [f"w{i}" for i in range(23)])}
    folder = mf.folder_with_tokenizer(tmp_path_factory.mktemp("awkward"), mf.wordlevel_json(vocab),
                                      vocab=len(vocab), dim=6, seed=3)
    table = open_table(str(folder))
    _, res = drain(pj.projection_job(table, "all", n_components=3))
    _, meta = drain(iter_token_metadata(table))
    return table, res, layout_rows(res, table, extra_ids=[], meta=meta)


def test_layout_rows_match_the_layout(awkward):
    table, res, rows = awkward
    np.testing.assert_array_equal(rows.ids, res.ids)
    np.testing.assert_array_equal(rows.coords, res.coords)
    assert rows.axes == ("PC1", "PC2", "PC3")
    assert rows.stored == [table.piece(i) for i in res.ids]
    assert not any(ch in p for p in rows.pieces for ch in "\t\n\r")
    assert rows.pieces[AWKWARD.index("tab\there")] == "tab⇥here"
    assert rows.pieces[AWKWARD.index("two\nlines")] == "two↵lines"
    norms = np.linalg.norm(table.rows(res.ids).astype(np.float64), axis=1)
    np.testing.assert_allclose(rows.metadata["norm"], norms, rtol=1e-5)
    assert rows.metadata["shown"] == [True] * len(res.ids) and rows.metadata["class"] == [None] * len(res.ids)


def _tensorboard_reads(folder):
    """The config, and each embedding's tensor, read as TensorBoard's projector plugin reads them."""
    pytest.importorskip("tensorboard")
    from google.protobuf import text_format
    from tensorboard.plugins.projector import projector_plugin as plugin
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

    config = text_format.Parse((folder / CONFIG_NAME).read_text(encoding="utf-8"), ProjectorConfig())
    tensors = {}
    for emb in config.embeddings:
        path = str(folder / emb.tensor_path)
        try:  # the plugin's own order: TSV first, raw float32 bytes when that is not text
            tensors[emb.tensor_name] = plugin._read_tensor_tsv_file(path)
        except UnicodeDecodeError:
            tensors[emb.tensor_name] = plugin._read_tensor_binary_file(path, emb.tensor_shape)
    return config, tensors


def test_projector_folder_opens_in_tensorboard(awkward, tmp_path):
    table, res, rows = awkward
    vectors = table.rows(rows.ids)
    out = write_projector(tmp_path / "proj", rows, axes=(0, 2), vectors=vectors, title="PCA: awkward")
    config, tensors = _tensorboard_reads(tmp_path / "proj")
    assert [e.tensor_name for e in config.embeddings] == list(out.tensor_names) == ["PCA  awkward",
                                                                                    "PCA  awkward, vectors"]
    assert all(e.metadata_path == METADATA_NAME for e in config.embeddings)
    layout, stored = tensors["PCA  awkward"], tensors["PCA  awkward, vectors"]
    np.testing.assert_allclose(layout[:, :2], res.coords[:, [0, 2]], rtol=1e-6, atol=1e-7)
    assert layout.shape[1] == 3 and (layout[:, 2] == 0).all()  # a third column for the projector's own PCA
    np.testing.assert_array_equal(stored, vectors.astype(np.float32))
    assert list(config.embeddings[1].tensor_shape) == list(vectors.shape)
    # the metadata as the projector's front end splits it: lines, a header (more than one column), tabs
    lines = (tmp_path / "proj" / METADATA_NAME).read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) - 2 == len(layout) == len(rows)
    header, body = lines[0].split("\t"), [line.split("\t") for line in lines[1:-1]]
    assert header == ["id", "piece", *METADATA_COLUMNS]
    assert all(len(cells) == len(header) for cells in body)
    assert [int(c[0]) for c in body] == rows.ids.tolist()
    assert [c[1] for c in body] == rows.pieces
    assert body[AWKWARD.index("tab\there")][1] == "tab⇥here"
    assert body[AWKWARD.index('"quoted"')][1] == '"quoted"'


def test_projector_without_vectors_has_one_tensor(awkward, tmp_path):
    _table, res, rows = awkward
    write_projector(tmp_path, rows, axes=(0, 1, 2))
    config, tensors = _tensorboard_reads(tmp_path)
    assert len(config.embeddings) == 1
    np.testing.assert_allclose(next(iter(tensors.values())), res.coords, rtol=1e-6, atol=1e-7)


def test_atlas_parquet_reads_back(awkward, tmp_path):
    import pyarrow.parquet as pq

    table, res, rows = awkward
    path = tmp_path / "layout.parquet"
    assert write_atlas(path, rows, axes=(1, 0)) == len(res.ids)
    got = pq.read_table(path)
    assert got.column_names == ["id", "piece", "stored", *METADATA_COLUMNS, "x", "y"]
    assert str(got.schema.field("length").type) == "int64" and str(got.schema.field("norm").type) == "double"
    data = got.to_pydict()
    assert data["id"] == res.ids.tolist()
    assert data["piece"] == rows.pieces and data["stored"] == [table.piece(i) for i in res.ids]
    np.testing.assert_array_equal(np.asarray(data["x"], np.float32), res.coords[:, 1])
    np.testing.assert_array_equal(np.asarray(data["y"], np.float32), res.coords[:, 0])
    assert data["class"] == [None] * len(res.ids)  # no classes: null, not an empty string
    write_atlas(path, rows, axes=(0, 1, 2))
    np.testing.assert_array_equal(np.asarray(pq.read_table(path).column("z"), np.float32), res.coords[:, 2])
