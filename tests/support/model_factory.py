"""Build small *real* models and files for the source tests.

Everything here writes genuine files with the field's own libraries
(transformers ``save_pretrained``, tokenizers trainers, gguf.GGUFWriter), so
the explorer reads exactly what a user's disk would hold. Nothing is mocked.

The builders live by kind in :mod:`tests.support.tokenizer_files`,
:mod:`tests.support.hf_folders`, :mod:`tests.support.gguf_files` and
:mod:`tests.support.bad_inputs`; this module gathers them under one name, so
tests keep writing ``from tests.support import model_factory as mf``.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.bad_inputs import BAD_FILES, make_bad_input, nested_json, write_safetensors
from tests.support.gguf_files import (
    GGUF_KEYS,
    BuiltGGUF,
    build_gguf,
    gguf_vocab,
    patch_gguf_tensor_type,
    write_gguf,
)
from tests.support.hf_folders import ARCHS, ZOO_KEYS, BuiltModel, build_model, tiny_model, zoo_id
from tests.support.tokenizer_files import (
    BACKTRACKING_SPLIT,
    SAMPLE_TEXT,
    SENTENCES,
    SPECIAL,
    folder_with_tokenizer,
    save_tokenizer,
    train_bpe,
    train_wordlevel,
    wordlevel_json,
)

__all__ = [
    "explorer_dirs",
    # tokenizers
    "SENTENCES", "SAMPLE_TEXT", "SPECIAL", "train_bpe", "train_wordlevel", "save_tokenizer", "wordlevel_json",
    "BACKTRACKING_SPLIT", "folder_with_tokenizer",
    # transformers model folders
    "ARCHS", "ZOO_KEYS", "zoo_id", "BuiltModel", "build_model", "tiny_model",
    # GGUF files
    "GGUF_KEYS", "BuiltGGUF", "build_gguf", "gguf_vocab", "patch_gguf_tensor_type", "write_gguf",
    # bad inputs
    "BAD_FILES", "make_bad_input", "nested_json", "write_safetensors",
]

#: the name the source tests call it by (it was private when everything lived here)
_gguf_vocab = gguf_vocab


def explorer_dirs(tmp_path_factory) -> tuple[Path, Path]:
    """(cache, config) folders shared by every test of one session, so the
    slow GGUF tokenizer of smollm2 is built once, in-process or not."""
    base = tmp_path_factory.getbasetemp()
    cache, config = base / "explorer-cache", base / "explorer-config"
    cache.mkdir(parents=True, exist_ok=True)
    config.mkdir(parents=True, exist_ok=True)
    return cache, config
