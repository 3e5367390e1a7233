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


def _class_structure(matrix: np.ndarray) -> tuple[float, float]:
    """(silhouette by cosine, share of content words whose nearest neighbour
    shares their class) of a vocabulary-ordered table."""
    from sklearn.metrics import silhouette_score

    content, labels, index = _content_words()
    x = matrix[[index[w] for w in content]].astype(np.float64)
    sil = float(silhouette_score(x, labels, metric="cosine"))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    s = x @ x.T
    np.fill_diagonal(s, -np.inf)
    return sil, float(np.mean([labels[i] == labels[j] for i, j in enumerate(s.argmax(1))]))


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """The bundled model built again here, once for the module."""
    out = tmp_path_factory.mktemp("rebuilt")
    bundled.build_default(out)
    return out


@pytest.mark.slow
def test_build_default_regenerates_what_matters(rebuilt):
    """`build-default` on any CPU: the same vocabulary, config and classes,
    tensors of the same names, shapes and dtypes, and the same lesson (the
    classes cluster as well). Not the same bits: training is chaotic, and a
    CPU whose float kernels sum in another order (AVX-512 against AVX2, ARM)
    ends 4,000 Adam steps elsewhere: a 1e-7 relative nudge of the initial
    weights moves the embedding by 30 % of its norm, while its silhouette
    stays within 0.41 +- 0.01 and its nearest-neighbour agreement above 0.95."""
    from safetensors.torch import load_file

    tmp_path = rebuilt
    for name in ("config.json", "classes.json", "tokenizer.json"):
        assert json.loads((tmp_path / name).read_text()) == json.loads((DEFAULT_DIR / name).read_text()), name
    new, old = load_file(str(tmp_path / "model.safetensors")), load_file(str(DEFAULT_DIR / "model.safetensors"))
    assert {k: (tuple(v.shape), v.dtype) for k, v in new.items()} == {k: (tuple(v.shape), v.dtype) for k, v in old.items()}
    for k in old:
        assert torch.isfinite(new[k]).all(), k
        ratio = float(new[k].double().norm() / old[k].double().norm())
        assert 0.8 < ratio < 1.25, (k, ratio)  # the same scale of weights
    name = "model.embed_tokens.weight"
    sil_new, nn_new = _class_structure(new[name].numpy())
    sil_old, nn_old = _class_structure(old[name].numpy())
    assert sil_old > 0.3 and nn_old > 0.9  # the bundled file itself
    assert abs(sil_new - sil_old) < 0.08 and sil_new > 0.3
    assert nn_new > 0.85
    # and the regenerated folder opens like the bundled one
    t = open_table(str(tmp_path))
    assert (t.vocab_size, t.dim, t.dtype, t.tied) == (214, bundled.DEFAULT_CONFIG.dim, "float32", False)
    assert t.classes and len(t.classes) == len(json.loads((DEFAULT_DIR / "classes.json").read_text()))


@pytest.mark.slow
def test_build_default_is_deterministic_on_one_machine(rebuilt, tmp_path):
    """Same corpus, same seed, one thread: two builds on the same CPU give
    the same bytes (what "bit for bit" can promise on any machine)."""
    bundled.build_default(tmp_path)
    assert (tmp_path / "model.safetensors").read_bytes() == (rebuilt / "model.safetensors").read_bytes()
