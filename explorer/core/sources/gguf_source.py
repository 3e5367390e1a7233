"""GGUF files -> :class:`EmbeddingTable`, and the cached GGUF tokenizer.

The header is read by :mod:`explorer.core.sources.ggufio` (milliseconds, checked
against the file); rows are dequantised by the ``gguf`` package. No Qt here.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from explorer.core.errors import is_rust_panic
from explorer.core.sources import ggufio
from explorer.core.sources.common import DEFAULT_EXAMPLE, SourceError, ids_example, table_shape
from explorer.core.sources.output import GGUF_OUTPUT, OutputFacts, gguf_output
from explorer.core.sources.readers import GGUFRows
from explorer.core.sources.table import EmbeddingTable
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, Tokenizer

__all__ = ["GGUFFacts", "gguf_facts", "open_gguf", "tokenizer_cache_dir"]

EMBED_NAME = "token_embd.weight"
#: the largest vocabularies in use have about 262 K entries (building one takes
#: about 5 s here); a tokens array
#: far longer than this is a corrupt header, and transformers would decode
#: every entry into a Python string before failing
_MAX_VOCAB = 1_000_000
_MAX_MERGES = 16_000_000


@dataclass
class GGUFFacts:
    """Header facts of a GGUF file's token embedding (no rows read)."""

    header: ggufio.GGUFHeader
    vocab_size: int
    dim: int
    type_id: int
    dtype: str
    row_bytes: int

    @property
    def output(self) -> OutputFacts:
        """The output matrix and tying: tied when the file holds no output.weight."""
        return gguf_output(self.header, self.header.tensors[EMBED_NAME].shape)

    @property
    def tied(self) -> bool | None:
        return self.output.tied

    @property
    def name(self) -> str:
        name = self.header.metadata.get("general.name")
        return name if isinstance(name, str) and name.strip() else self.header.path.name


def gguf_facts(path: Path, spec: str) -> GGUFFacts:
    """Read and check the header of a GGUF file and its token embedding.

    Raises
    ------
    SourceError
        For a file that is not GGUF, a header that does not match the file,
        a missing, non-2-D or empty embedding, or an unknown type.
    """
    try:
        header = ggufio.read_header(path)
    except ggufio.GGUFError as exc:
        raise SourceError(f"{spec}: not a readable GGUF file: {exc}") from None
    if EMBED_NAME not in header.tensors:
        raise SourceError(f"{spec}: the GGUF file has no token_embd.weight tensor, so no embedding table")
    info = header.tensors[EMBED_NAME]
    v, d = table_shape(info.shape, EMBED_NAME, spec)
    try:
        rb = ggufio.row_bytes(info.type_id, d)
    except ggufio.GGUFError as exc:
        raise SourceError(f"{spec}: not a readable GGUF file: {exc}") from None
    return GGUFFacts(header, int(v), int(d), info.type_id, ggufio.type_name(info.type_id), rb)


def _output_factory(path: Path, header, tokenizer: Tokenizer, spec: str, kind: str, name: str):
    """A function building the table of output.weight (dequantised lazily, like E)."""
    import gguf

    info = header.tensors[GGUF_OUTPUT]
    v, d = table_shape(info.shape, GGUF_OUTPUT, spec)

    def build() -> EmbeddingTable:
        try:
            raw = ggufio.memmap_rows(header, GGUF_OUTPUT)
        except ggufio.GGUFError as exc:
            raise SourceError(f"{spec}: {exc}") from None
        return EmbeddingTable(
            spec=spec, name=f"{name}: output matrix", kind=kind, vocab_size=int(v), dim=int(d),
            dtype=ggufio.type_name(info.type_id), row_bytes=ggufio.row_bytes(info.type_id, int(d)),
            tokenizer=tokenizer, _reader=GGUFRows(raw, gguf.GGMLQuantizationType(info.type_id), int(d)),
            tied=False, path=path, tensor_name=GGUF_OUTPUT, output_how="output.weight is a second matrix",
        )

    return build


def open_gguf(path: Path, spec: str, kind: str = "gguf", name: str | None = None) -> EmbeddingTable:
    """Open the token embedding of a GGUF file.

    Its type must be one the ``gguf`` package can dequantise: the first row
    is dequantised here, so an unsupported type is refused at open, by name,
    rather than at the first row read.

    Raises
    ------
    SourceError
    """
    facts = gguf_facts(path, spec)
    header = facts.header
    try:
        raw = ggufio.memmap_rows(header, EMBED_NAME)
    except ggufio.GGUFError as exc:
        raise SourceError(f"{spec}: {exc}") from None
    import gguf

    reader = GGUFRows(raw, gguf.GGMLQuantizationType(facts.type_id), facts.dim)
    try:
        first = reader.read_range(0, 1)
    except NotImplementedError:
        raise SourceError(
            f"{spec}: token_embd.weight is stored as {facts.dtype}, which the gguf package cannot "
            "dequantise; convert the model to another type (F16, Q8_0, Q4_K) and try again"
        ) from None
    except (ValueError, TypeError) as exc:
        raise SourceError(f"{spec}: token_embd.weight ({facts.dtype}) cannot be read ({exc})") from None
    if first.shape != (1, facts.dim):
        raise SourceError(f"{spec}: token_embd.weight ({facts.dtype}) does not dequantise to rows of {facts.dim}")
    notes = []
    tokenizer: Tokenizer | None = None
    try:
        tokenizer = _gguf_tokenizer(path, header)
    except BaseException as exc:  # noqa: B036 - a GGUF without a usable vocabulary still has a table
        if not isinstance(exc, Exception) and not is_rust_panic(exc):
            raise
        notes.append(f"The tokenizer inside the GGUF file could not be built ({str(exc)[:160]}); type token ids.")
    v = facts.vocab_size
    if tokenizer is None:
        tokenizer = IdTokenizer(v)
    example = ids_example(v) if isinstance(tokenizer, IdTokenizer) else DEFAULT_EXAMPLE
    out = facts.output
    if out.problem:
        notes.append(f"Output side: {out.problem}.")
    output = _output_factory(path, header, tokenizer, spec, kind, name or facts.name) if out.tensor else None
    arch = header.metadata.get("general.architecture", "")
    if isinstance(arch, str) and arch:
        notes.append(f"GGUF architecture {arch}; the embedding is stored as {facts.dtype}.")
    return EmbeddingTable(
        example_text=example,
        spec=spec,
        name=name or facts.name,
        kind=kind,
        vocab_size=v,
        dim=facts.dim,
        dtype=facts.dtype,
        row_bytes=facts.row_bytes,
        tokenizer=tokenizer,
        _reader=reader,
        tied=out.tied,
        output_how=out.how,
        _output=output,
        model_params=int(sum(ti.n_elements for ti in header.tensors.values())),
        path=path,
        disk_bytes=path.stat().st_size,
        tensor_name=EMBED_NAME,
        notes=tuple(notes),
    )


def tokenizer_cache_dir() -> Path:
    """Where built GGUF tokenizers are kept (``EXPLORER_CACHE_DIR`` or the
    user's cache folder)."""
    override = os.environ.get("EXPLORER_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("embedding-explorer"))


def _gguf_tokenizer(path: Path, header: ggufio.GGUFHeader) -> Tokenizer | None:
    """The GGUF file's own vocabulary as a fast tokenizer.

    Building it through transformers takes seconds (17 s for SmolLM2), so
    the result is saved in the cache folder, keyed by the bytes it is built
    from: the file's header (its metadata, the vocabulary among them, and its
    tensor directory). The same file in another place (a reinstalled package,
    a new environment, a copy) finds it; a file with another vocabulary has
    another key.
    """
    n_tokens = header.array_lengths.get("tokenizer.ggml.tokens")
    if n_tokens is None:
        return None
    if n_tokens > _MAX_VOCAB or header.array_lengths.get("tokenizer.ggml.merges", 0) > _MAX_MERGES:
        raise ValueError(f"its vocabulary of {n_tokens:,} entries is far larger than any real one")
    key = _tokenizer_key(path, header)
    cached = tokenizer_cache_dir() / "gguf-tokenizers" / key / "tokenizer.json"
    if cached.is_file():
        try:
            return HFTokenizer.from_file(cached)
        except Exception:
            pass  # a damaged cache entry is rebuilt below
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name, local_files_only=True)
    backend = tok.backend_tokenizer
    save_atomically(backend, cached)
    return HFTokenizer(backend)


def _tokenizer_key(path: Path, header: ggufio.GGUFHeader) -> str:
    """The cache key of a GGUF file's tokenizer: a hash of its header's bytes (a few MB for a
    128k vocabulary, hashed in milliseconds)."""
    digest = hashlib.sha1(b"gguf-tokenizer|")
    with open(path, "rb") as fh:
        left = header.header_size
        while left > 0:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
    return digest.hexdigest()[:16]


def save_atomically(backend, target: Path) -> bool:
    """Save a ``tokenizers.Tokenizer`` to ``target`` through a temporary file
    of a unique name in the same folder, then rename it into place.

    Two processes opening the same GGUF for the first time both build its
    tokenizer; each writes its own temporary file, and the rename makes
    ``target`` either absent or complete, never half written. A cache that
    cannot be written (read-only, full) only costs the next opening time.

    Returns
    -------
    bool
        Whether ``target`` was written.
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tokenizer-", suffix=".json.tmp", dir=target.parent)
    except OSError:
        return False
    os.close(fd)
    try:
        backend.save(tmp)
        os.replace(tmp, target)
        return True
    except Exception:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
