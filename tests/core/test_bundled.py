"""The bundled default model (resources/default, explorer.core.bundled)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open

from explorer.core import bundled
from explorer.core.corpus import CLASSES, make_corpus, vocabulary
from explorer.core.sources import open_table, resources_dir
from explorer.core.training import ToyLM, TrainConfig

DEFAULT_DIR = resources_dir() / "default"


@pytest.fixture(scope="module")
def table():
    return open_table("default")


def _content_words():
    words, classes = vocabulary()
    content = [w for w in words if classes.get(w, "function") != "function"]
    return content, [classes[w] for w in content], {w: i for i, w in enumerate(words)}


def test_default_opens_with_its_vocabulary(table):
    words, classes = vocabulary()
    assert table.vocab_size == len(words)
    assert table.dim == bundled.DEFAULT_CONFIG.dim
    assert table.dtype == "float32"
    assert table.tied is False
    # the tokenizer maps every word to its own row, in vocabulary order
    for i, w in enumerate(words):
        assert table.tokenizer.id_of(w) == i
    # the table read by the explorer is the tensor in the file
    with safe_open(str(DEFAULT_DIR / "model.safetensors"), framework="pt") as f:
        ref = f.get_tensor(table.tensor_name).numpy()
    np.testing.assert_array_equal(table.matrix(), ref)
    ids = [t.id for t in table.tokenizer.encode(bundled.EXAMPLE_TEXT)]
    assert ids == [words.index(w) for w in bundled.EXAMPLE_TEXT.split()]
    # classes.json names each content word's class
    data = json.loads((DEFAULT_DIR / "classes.json").read_text())
    assert {w: c for w, c in data.items()} == classes
    assert table.classes is not None
    assert all(table.classes[words.index(w)] == c for w, c in classes.items())


def test_classes_cluster_far_above_a_fresh_table(table):
    from sklearn.metrics import silhouette_score

    content, labels, index = _content_words()
    ids = [index[w] for w in content]
    trained = silhouette_score(table.rows(ids), labels, metric="cosine")
    cfg = TrainConfig(**bundled.DEFAULT_CONFIG.__dict__)
    torch.manual_seed(123)
    fresh_model = ToyLM.build(table.vocab_size, cfg)
    fresh = fresh_model.embed_tokens.weight.detach().numpy()[ids]
    untrained = silhouette_score(fresh, labels, metric="cosine")
    assert abs(untrained) < 0.1
    assert trained > 0.2
    assert trained > untrained + 0.2
    # nearest neighbour (by cosine) of most content words shares its class
    x = table.rows(ids).astype(np.float64)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    s = x @ x.T
    np.fill_diagonal(s, -np.inf)
    nn = s.argmax(1)
    same = np.mean([labels[i] == labels[j] for i, j in enumerate(nn)])
    assert same > 0.7


def test_corpus_is_deterministic_and_zipfian():
    a, b = make_corpus(500, 0), make_corpus(500, 0)
    np.testing.assert_array_equal(a.ids, b.ids)
    assert not np.array_equal(a.ids, make_corpus(500, 1).ids)
    counts = make_corpus(bundled.CORPUS_SENTENCES, bundled.CORPUS_SEED).counts()
    words, _ = vocabulary()
    for cls, ws in CLASSES.items():
        c = np.sort(counts[[words.index(w) for w in ws]])[::-1]
        assert c[0] > 5 * max(c[-1], 1), cls  # frequent head, rare tail


@pytest.mark.slow
def test_build_default_regenerates_the_same_bytes(tmp_path):
    bundled.build_default(tmp_path)
    assert (tmp_path / "model.safetensors").read_bytes() == (DEFAULT_DIR / "model.safetensors").read_bytes()
    for name in ("config.json", "classes.json"):
        assert json.loads((tmp_path / name).read_text()) == json.loads((DEFAULT_DIR / name).read_text())
