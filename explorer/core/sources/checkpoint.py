"""Hugging Face model folders and safetensors files -> :class:`EmbeddingTable`.

:func:`folder_facts` and :func:`file_facts` read headers only (what the
picker lists); :func:`open_folder` and :func:`open_safetensors_file` add the
tokenizer and the row reader. No Qt here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.errors import is_rust_panic
from explorer.core.sources.common import (
    DEFAULT_EXAMPLE,
    SourceError,
    ids_example,
    read_json,
    shown,
    table_shape,
    vocabulary_notes,
)
from explorer.core.sources.output import OUTPUT_NAMES, OutputFacts, checkpoint_output
from explorer.core.sources.readers import SafetensorsRows
from explorer.core.sources.safetensors_header import TensorEntry, read_safetensors_header
from explorer.core.sources.table import EmbeddingTable
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, TokenizeError, Tokenizer

__all__ = ["Checkpoint", "CheckpointFacts", "folder_facts", "file_facts", "open_folder", "open_safetensors_file",
           "folder_tokenizer"]

_EMBED_NAMES = (
    "model.embed_tokens.weight",
    "embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "embeddings.word_embeddings.weight",
    "bert.embeddings.word_embeddings.weight",
    "roberta.embeddings.word_embeddings.weight",
    "model.decoder.embed_tokens.weight",
    "transformer.word_embeddings.weight",
    "gpt_neox.embed_in.weight",
    "model.language_model.embed_tokens.weight",
    "language_model.model.embed_tokens.weight",
    "shared.weight",
    "tok_embeddings.weight",
    "token_embd.weight",
)
_EMBED_SUFFIXES = ("embed_tokens.weight", "word_embeddings.weight", "wte.weight", "embed_in.weight")
#: safetensors dtype -> (our dtype name, bytes per element) for embeddings we read
_ST_DTYPES = {"F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2), "F64": ("float64", 8)}
#: config keys that set a model's depth; the architecture is built with one
#: layer to ask for its embedding's name (a config may ask for 10^9 layers)
_DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers", "decoder_layers",
               "num_decoder_layers", "num_encoder_layers")


@dataclass
class Checkpoint:
    """Header facts of a (possibly sharded) safetensors checkpoint."""

    tensors: dict[str, TensorEntry]

    @property
    def shapes(self) -> dict[str, tuple[int, ...]]:
        return {k: e.shape for k, e in self.tensors.items()}

    @property
    def total_params(self) -> int:
        return int(sum(e.n_elements for e in self.tensors.values()))

    @property
    def files(self) -> list[Path]:
        return sorted({e.file for e in self.tensors.values()})


@dataclass
class CheckpointFacts:
    """What the headers of a folder or a safetensors file say, read in
    milliseconds: enough to list a model, not to show its rows."""

    checkpoint: Checkpoint
    config: dict
    embed: str
    name: str
    path: Path
    notes: list[str] = field(default_factory=list)

    @property
    def entry(self) -> TensorEntry:
        return self.checkpoint.tensors[self.embed]

    @property
    def disk_bytes(self) -> int:
        return int(sum(f.stat().st_size for f in self.checkpoint.files))

    @property
    def output(self) -> OutputFacts:
        """The output matrix and tying, decided from the files."""
        return checkpoint_output(self.checkpoint.tensors, self.config, self.embed)

    @property
    def tied(self) -> bool | None:
        return self.output.tied


def read_checkpoint(paths: Sequence[Path]) -> Checkpoint:
    """Headers of every shard in ``paths``."""
    tensors: dict[str, TensorEntry] = {}
    for p in paths:
        try:
            tensors.update(read_safetensors_header(p))
        except FileNotFoundError:
            raise SourceError(
                f"{p}: a shard named by the checkpoint index is missing; copy the whole model folder") from None
    return Checkpoint(tensors)


def _shards_from_index(folder: Path, index_path: Path) -> list[Path]:
    index = read_json(index_path, "the shard index")
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(s, str) for s in weight_map.values()):
        raise SourceError(
            f"{index_path}: the shard index is not valid (it needs a weight_map of tensor name -> file); "
            "fix or replace it"
        )
    names = sorted(set(weight_map.values()))
    for s in names:
        # a shard is a file inside the model folder: no absolute path, no way
        # up through "..". Symlinks inside the folder are fine (the Hugging
        # Face cache links every file to its blob store), so this is checked
        # on the names, not on resolved paths.
        norm = posixpath.normpath(s.replace("\\", "/"))
        if (not s or "\x00" in s or norm.startswith(("/", "../")) or norm in ("..", ".")
                or Path(s).is_absolute() or Path(s).drive):
            raise SourceError(
                f"{index_path}: the shard index names {shown(s)}, which is not a file inside the model "
                "folder; shards must be files inside it, so fix the index"
            )
    shards = [folder / s for s in names]
    missing = [s for s in shards if not s.is_file()]
    if missing:
        raise SourceError(
            f"{folder}: shard {missing[0].name} named by model.safetensors.index.json is missing; "
            "copy the whole model folder"
        )
    return shards


def _read_config(path: Path) -> dict:
    if not path.is_file():
        return {}
    config = read_json(path, "config.json")
    if not isinstance(config, dict):
        raise SourceError(f"{path}: config.json is not a JSON object of settings; fix or replace it")
    return config


def folder_facts(folder: Path, spec: str, deep: bool = True) -> CheckpointFacts | Path:
    """Header facts of a Hugging Face model folder, or the path of the GGUF
    file it holds instead of safetensors weights.

    ``deep`` allows building the architecture on the meta device to find an
    embedding with an unusual name (seconds: it imports transformers).

    Raises
    ------
    SourceError
    """
    if not folder.is_dir():
        raise SourceError(f"{spec}: no such folder")
    config = _read_config(folder / "config.json")
    index_path = folder / "model.safetensors.index.json"
    if index_path.is_file():
        shards = _shards_from_index(folder, index_path)
    elif (folder / "model.safetensors").is_file():
        shards = [folder / "model.safetensors"]
    else:
        shards = sorted(folder.glob("*.safetensors"))
    if not shards:
        ggufs = sorted(folder.glob("*.gguf"))
        if ggufs:
            return ggufs[0]
        pickles = [p.name for p in folder.glob("*.bin")] + [p.name for p in folder.glob("*.pt")]
        if pickles:
            raise SourceError(
                f"{spec}: the folder has only pickled weights ({', '.join(pickles[:3])}), which are not "
                "opened because unpickling can run code; save the model as safetensors and try again"
            )
        raise SourceError(
            f"{spec}: the folder has no .safetensors or .gguf weights; choose a Hugging Face model folder"
        )
    ckpt = read_checkpoint(shards)
    embed = _find_embedding(ckpt, config, deep)
    name = config.get("_name_or_path")
    return CheckpointFacts(ckpt, config, embed, name if isinstance(name, str) and name else folder.name, folder)


def file_facts(path: Path, deep: bool = True) -> CheckpointFacts:
    """Header facts of one ``.safetensors`` file (the config beside it, if
    any and readable, says whether it is tied)."""
    ckpt = read_checkpoint([path])
    try:
        config = _read_config(path.parent / "config.json")
    except SourceError:
        config = {}  # a lone file does not depend on its neighbour's config
    return CheckpointFacts(ckpt, config, _find_embedding(ckpt, config, deep), path.name, path)


def embedding_shape(facts: CheckpointFacts, spec: str) -> tuple[int, int, str, int]:
    """(V, d, dtype, bytes per element) of the embedding, refusing what
    cannot be shown: not 2-D, empty, or a dtype that is not floating point."""
    e = facts.entry
    v, d = table_shape(e.shape, facts.embed, spec)
    if e.dtype not in _ST_DTYPES:
        raise SourceError(
            f"{spec}: the embedding is stored as {shown(e.dtype, 16)[1:-1]}, which is not supported "
            "(float32, float16, bfloat16 and float64 are); convert the checkpoint"
        )
    dtype, item = _ST_DTYPES[e.dtype]
    return int(v), int(d), dtype, item


def open_folder(folder: Path, spec: str, kind: str, name: str | None = None) -> EmbeddingTable:
    """Open the input embedding of a Hugging Face model folder.

    Raises
    ------
    SourceError
    """
    facts = folder_facts(folder, spec)
    if isinstance(facts, Path):
        from explorer.core.sources.gguf_source import open_gguf

        return open_gguf(facts, spec, kind=kind, name=name)
    ex = facts.config.get("explorer_example_text")
    return _table_from_facts(facts, folder_tokenizer(folder), spec, kind, name=name,
                             example_text=ex if isinstance(ex, str) else None,
                             classes_path=folder / "classes.json")


def open_safetensors_file(path: Path, spec: str, kind: str = "safetensors", name: str | None = None) -> EmbeddingTable:
    """Open the embedding of one ``.safetensors`` file; the tokenizer.json
    beside it is used when there is one."""
    facts = file_facts(path)
    tok = folder_tokenizer(path.parent) if (path.parent / "tokenizer.json").is_file() else None
    return _table_from_facts(facts, tok, spec, kind, name=name)


def _load_classes(path: Path, tokenizer: Tokenizer) -> dict[int, str]:
    data = read_json(path, "classes.json")
    if not isinstance(data, dict) or not all(isinstance(c, (str, int)) for c in data.values()):
        raise SourceError(f"{path}: classes.json is not an object of word -> class name")
    out = {}
    for word, cls in data.items():
        tid = tokenizer.id_of(word)
        if tid is not None:
            out[int(tid)] = str(cls)
    return out


def _preload(table: EmbeddingTable) -> None:
    if table.fits_in_memory and table.params <= 8 * 1024 * 1024:
        # small tables are read once so every later computation is instant
        table.matrix()


def _output_factory(facts: CheckpointFacts, out: OutputFacts, tokenizer: Tokenizer, spec: str, kind: str,
                    name: str):
    """A function building the untied output matrix's table (its rows read lazily)."""
    tensor = out.tensor
    e = facts.checkpoint.tensors[tensor]
    if e.dtype not in _ST_DTYPES:
        return None
    dtype, item = _ST_DTYPES[e.dtype]
    v, d = (int(x) for x in e.shape)

    def build() -> EmbeddingTable:
        return EmbeddingTable(
            spec=spec, name=f"{name}: output matrix", kind=kind, vocab_size=v, dim=d, dtype=dtype,
            row_bytes=d * item, tokenizer=tokenizer, _reader=SafetensorsRows(e.file, tensor, e.dtype, (v, d), e.start),
            tied=False, path=Path(facts.path), tensor_name=tensor, output_how=out.how,
        )

    return build


def _table_from_facts(facts: CheckpointFacts, tokenizer: Tokenizer | None, spec: str, kind: str,
                      name: str | None = None, example_text: str | None = None,
                      classes_path: Path | None = None) -> EmbeddingTable:
    v, d, dtype, item = embedding_shape(facts, spec)
    e = facts.entry
    reader = SafetensorsRows(e.file, facts.embed, e.dtype, (v, d), e.start)
    notes = []
    if tokenizer is None:
        tokenizer = IdTokenizer(v)
        notes.append("No tokenizer was found beside the weights; type token ids.")
        example = ids_example(v)
    else:
        example = DEFAULT_EXAMPLE
        notes += vocabulary_notes(tokenizer.vocab_size, v)
    out = facts.output
    if out.problem:
        notes.append(f"Output side: {out.problem}.")
    output = _output_factory(facts, out, tokenizer, spec, kind, name or facts.name) if out.tensor else None
    classes = None
    if classes_path is not None and classes_path.is_file():
        try:
            classes = _load_classes(classes_path, tokenizer)
        except SourceError as exc:
            notes.append(f"Colouring by class is off: {exc}")
    t = EmbeddingTable(
        spec=spec,
        name=name or facts.name,
        kind=kind,
        vocab_size=v,
        dim=d,
        dtype=dtype,
        row_bytes=d * item,
        tokenizer=tokenizer,
        _reader=reader,
        tied=out.tied,
        output_how=out.how,
        _output=output,
        model_params=facts.checkpoint.total_params,
        path=Path(facts.path),
        disk_bytes=facts.disk_bytes,
        tensor_name=facts.embed,
        classes=classes,
        notes=tuple(notes),
        example_text=example_text if example_text is not None else example,
    )
    _preload(t)
    return t


def folder_tokenizer(folder: Path) -> Tokenizer | None:
    """The tokenizer saved in a model folder (tokenizer.json, or the files
    transformers builds a fast one from), None when there is none.

    Raises
    ------
    SourceError
        For a tokenizer.json the tokenizers library refuses.
    """
    tj = folder / "tokenizer.json"
    if tj.is_file():
        try:
            return HFTokenizer.from_file(tj)
        except TokenizeError as exc:
            raise SourceError(str(exc)) from None
    markers = ("vocab.txt", "vocab.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
    if any((folder / m).is_file() for m in markers):
        try:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True, trust_remote_code=False)
            backend = getattr(tok, "backend_tokenizer", None)
            if backend is not None:
                return HFTokenizer(backend)
        except BaseException as exc:  # noqa: B036 - a Rust panic is a BaseException
            if not isinstance(exc, Exception) and not is_rust_panic(exc):
                raise
            return None
    return None


# -- which tensor is the embedding --------------------------------------------------


def _find_embedding(ckpt: Checkpoint, config: dict, deep: bool = True) -> str:
    shapes = ckpt.shapes
    names = list(shapes)
    for n in _EMBED_NAMES:
        if n in shapes and len(shapes[n]) == 2:
            return n
    for n in names:
        if n.endswith(_EMBED_SUFFIXES) and len(shapes[n]) == 2:
            return n
    if deep:
        meta = _embedding_name_from_architecture(config, names)
        if meta:
            return meta
    v = config.get("vocab_size")
    d = _config_dim(config)
    twod = [n for n in names if len(shapes[n]) == 2]
    if v and d:
        cands = [n for n in twod if shapes[n] == (v, d) and n not in OUTPUT_NAMES]
        if cands:
            return cands[0]
    if len(twod) == 1:
        return twod[0]
    if twod:
        # the largest 2-D tensor with more rows than columns is the usual table
        tall = [n for n in twod if shapes[n][0] > shapes[n][1] and n not in OUTPUT_NAMES]
        if tall:
            return max(tall, key=lambda n: shapes[n][0])
    raise SourceError("no 2-D tensor that could be an embedding table was found in the checkpoint")


def _embedding_name_from_architecture(config: dict, names: list[str]) -> str | None:
    """Build the architecture on the meta device and ask for its input
    embeddings (slow: imports transformers; only for unknown layouts).

    Never runs remote code; the model is built with one layer, since only
    the embedding's name is wanted and a config may ask for any depth.
    """
    if not isinstance(config.get("model_type"), str):
        return None
    try:
        import torch
        from transformers import AutoConfig, AutoModel

        small = {k: (1 if k in _DEPTH_KEYS else v) for k, v in config.items()}
        small.pop("auto_map", None)
        cfg = AutoConfig.for_model(**small)
        if not all(isinstance(getattr(cfg, k, 1), int) and 0 <= getattr(cfg, k, 1) <= 1 for k in _DEPTH_KEYS):
            return None
        with torch.device("meta"):
            model = AutoModel.from_config(cfg, trust_remote_code=False)
        emb = model.get_input_embeddings().weight
        for pname, p in model.named_parameters():
            if p is emb:
                for n in names:
                    if n == pname or n.endswith("." + pname) or pname.endswith("." + n):
                        return n
    except Exception:
        return None
    return None


def _config_dim(config: dict) -> int | None:
    for k in ("hidden_size", "n_embd", "d_model", "dim", "embedding_size", "word_embed_proj_dim"):
        if isinstance(config.get(k), int):
            return config[k]
    return None
