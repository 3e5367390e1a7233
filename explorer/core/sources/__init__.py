"""Model specs -> :class:`EmbeddingTable`: open only the input embedding, lazily.

The package is split along its seams:

==================  ==========================================================
``specs``           what a spec names, and :func:`open_table`
``table``           :class:`EmbeddingTable`, immutable once built
``readers``         row readers: in memory, random, safetensors, GGUF
``checkpoint``      Hugging Face folders and safetensors files
``safetensors_header``  the safetensors header, checked against its file
``gguf_source``     GGUF files and their cached tokenizer
``memory``          objects of this process: tensors, arrays, models (``explorer.show``)
``hfcache``         the local Hugging Face cache
``catalog``         listing what can be opened, from headers only
``common``          the error type, resource paths, JSON reading
==================  ==========================================================

Everything that used to be imported from ``explorer.core.sources`` still is.
No Qt here.
"""

from explorer.core.sources.catalog import SourceInfo, list_sources, peek
from explorer.core.sources.common import (
    DEFAULT_EXAMPLE,
    PACKAGE_MODELS,
    RANDOM_STD,
    TOY_NAMES,
    SourceError,
    package_path,
    resources_dir,
)
from explorer.core.sources.gguf_source import tokenizer_cache_dir
from explorer.core.sources.hfcache import cached_repos, find_in_cache, hf_cache_dir
from explorer.core.sources.specs import (
    MAX_RANDOM_DIM,
    MAX_RANDOM_VOCAB,
    ResolvedSpec,
    expand_path,
    open_table,
    parse_random_spec,
    resolve_spec,
)
from explorer.core.sources.table import CACHE_ELEMENTS, EmbeddingTable, StoredBuffer

__all__ = [
    "SourceError",
    "EmbeddingTable",
    "StoredBuffer",
    "open_table",
    "resolve_spec",
    "ResolvedSpec",
    "expand_path",
    "SourceInfo",
    "peek",
    "list_sources",
    "resources_dir",
    "package_path",
    "tokenizer_cache_dir",
    "hf_cache_dir",
    "find_in_cache",
    "cached_repos",
    "parse_random_spec",
    "TOY_NAMES",
    "PACKAGE_MODELS",
    "RANDOM_STD",
    "DEFAULT_EXAMPLE",
    "CACHE_ELEMENTS",
    "MAX_RANDOM_VOCAB",
    "MAX_RANDOM_DIM",
]
