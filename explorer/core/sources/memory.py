"""Tables from objects in this process, for ``explorer.show``: a torch
tensor (V, d), a numpy array, an ``nn.Embedding``, a transformers model, or a
spec string, as an :class:`EmbeddingTable` like any file-backed one. No Qt here.

A float32 tensor or array that is contiguous on the CPU is not copied: the
table's rows are a read-only numpy view of its memory, and the address the
Lookup view shows is the tensor's own ``data_ptr()``. A float16, bfloat16 or
float64 tensor is kept as it is and its rows are converted to float32 when
read, as a bfloat16 file's are. What the app derives from the rows (unit
rows, the overview, neighbours) is computed when the table is opened: after
changing the tensor, call ``show`` again.

Only what cannot be shown at all raises (:class:`SourceError`): an object of
another kind, a tensor that is not 2-D, empty, not floating point, sparse or
on the meta device. Everything else opens with a note saying what was done
(a GPU tensor copied to the CPU, a non-contiguous one made contiguous, NaN
values, a tokenizer larger than the table).
"""

from __future__ import annotations

import itertools
import sys
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from explorer.core.sources.checkpoint import folder_tokenizer
from explorer.core.sources.common import DEFAULT_EXAMPLE, SourceError, ids_example, shown, vocabulary_notes
from explorer.core.sources.hfcache import REPO_ID, find_in_cache
from explorer.core.sources.output import OutputFacts, module_output
from explorer.core.sources.specs import open_table
from explorer.core.sources.table import EmbeddingTable
from explorer.core.tokens.tokenize import HFTokenizer, IdTokenizer, NameTokenizer, TokenizeError, Tokenizer

__all__ = ["MEMORY_KINDS", "TensorRows", "open_object", "held_in_memory", "as_tokenizer", "prepared",
           "device_note"]

#: kinds of the tables made here: a bare tensor (no model around it) and a model in memory
MEMORY_KINDS = ("tensor", "model")
#: stored dtypes kept as they are (others are converted to float32 once, with a note)
_KEPT = ("float32", "float16", "bfloat16", "float64")
#: values checked for NaN and inf per block
_FINITE_BLOCK = 16 * 1024 * 1024
_WHAT_SHOW_TAKES = ("show takes a (V, d) torch tensor, a numpy array, an nn.Embedding, a transformers model "
                    "or a model spec (such as 'default' or a folder)")
_NOT_CONTIGUOUS = ("is not contiguous in memory (a transposed or strided view); the explorer made a contiguous "
                   "copy, so byte offsets and the address are the copy's.")
_numbers = itertools.count(1)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def held_in_memory(table: EmbeddingTable) -> bool:
    """Whether ``table`` was made from an object of this process (its spec
    cannot open it again in another session)."""
    return table.kind in MEMORY_KINDS


class TensorRows:
    """Rows of a CPU tensor held in memory (a row reader; see
    :mod:`explorer.core.sources.readers`). A float32 tensor is read through a
    read-only numpy view of its memory; others are converted per read."""

    def __init__(self, tensor):
        import torch

        self._tensor = tensor
        self.dtype = str(tensor.dtype).removeprefix("torch.")
        self._view = None
        if tensor.dtype == torch.float32:
            view = tensor.numpy()  # the tensor's own memory, no copy
            view.flags.writeable = False  # the app never writes into the user's tensor
            self._view = view
        self.native_itemsize = tensor.element_size() if self.dtype in ("float32", "float16", "bfloat16") else 4

    def read_range(self, start: int, stop: int) -> np.ndarray:
        if self._view is not None:
            return self._view[start:stop]
        import torch

        return self._tensor[start:stop].to(torch.float32).numpy()

    def read(self, ids: np.ndarray) -> np.ndarray:
        if self._view is not None:
            return self._view[ids]
        import torch

        index = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
        return self._tensor.index_select(0, index).to(torch.float32).numpy()

    def whole(self) -> np.ndarray | None:
        return self._view

    def stored(self) -> np.ndarray | None:
        return None

    def native_range(self, start: int, stop: int):
        if self.dtype in ("float32", "float16", "bfloat16"):
            return self._tensor[start:stop]
        import torch

        return torch.from_numpy(np.ascontiguousarray(self.read_range(start, stop)))

    def release_range(self, start: int, stop: int) -> None:
        pass

    def tensor(self):
        """The tensor itself (its ``data_ptr`` is where the table starts)."""
        return self._tensor


# -- the objects show() takes ---------------------------------------------------------------


def open_object(obj, tokenizer=None) -> EmbeddingTable:
    """The table ``obj`` holds, with ``tokenizer`` (see :func:`as_tokenizer`).

    Parameters
    ----------
    obj : torch.Tensor (V, d), numpy.ndarray (V, d), torch.nn.Embedding,
        a transformers model (anything with ``get_input_embeddings()``), or str
        A spec string opens like ``--model SPEC``.
    tokenizer : optional
        See :func:`as_tokenizer`. None: token ids (a model's own folder's
        tokenizer when its ``name_or_path`` is a local folder or a cached repo).

    Raises
    ------
    SourceError
        For an object that cannot be shown at all; the message says why and what to do.
    """
    if isinstance(obj, (str, Path)):
        return _from_spec(str(obj), tokenizer)
    torch = sys.modules.get("torch")  # an object of torch's means torch is imported already
    if isinstance(obj, np.ndarray):
        tensor, notes = _from_numpy(obj)
        return _bare_table(tensor, "array", tokenizer, notes)
    if torch is not None and isinstance(obj, torch.Tensor):
        tensor, notes = prepared(obj, "the tensor")
        return _bare_table(tensor, "tensor", tokenizer, notes)
    if torch is not None and isinstance(obj, torch.nn.Embedding):
        tensor, notes = prepared(obj.weight, "the nn.Embedding's weight")
        return _bare_table(tensor, "nn.Embedding", tokenizer, notes, tensor_name="weight")
    if callable(getattr(obj, "get_input_embeddings", None)):
        return _from_model(obj, tokenizer)
    raise SourceError(f"{_WHAT_SHOW_TAKES}; got {type(obj).__module__}.{type(obj).__qualname__}")


def _check_shape(shape: tuple[int, ...], what: str) -> None:
    if len(shape) == 1:
        raise SourceError(
            f"{what} is 1-D, shape ({shape[0]:,},): one vector, not a table of one row per token; show takes "
            f"(V, d): pass x[None, :] to see it as one row, or x[:, None] for {shape[0]:,} rows of one value"
        )
    if len(shape) != 2:
        hint = f"; reshape(-1, {shape[-1]:,}) shows each of its vectors as a row" if len(shape) > 2 else ""
        raise SourceError(f"{what} has shape {tuple(shape)}: {len(shape)} dimensions, where a table has 2 (V, d){hint}")
    if shape[0] == 0 or shape[1] == 0:
        raise SourceError(f"{what} has shape {tuple(shape)}: an empty table has no rows to show")


def device_note(what: str, device, nbytes: int) -> str:
    """The sentence for a tensor (``what``) copied from ``device`` (cuda:0, mps ...) to the CPU."""
    return _sentence(f"{what} was on {device}; the explorer copied it to the CPU ({nbytes / 1e6:,.1f} MB), "
                     "so its address and later changes on the device are not shown.")


def prepared(tensor, what: str):
    """``tensor`` ready to be read by :class:`TensorRows`: detached, on the
    CPU, strided, contiguous, in a dtype the app keeps. Returns (tensor,
    notes); a CPU tensor that is already contiguous in a kept dtype is
    returned without a copy.

    Raises
    ------
    SourceError
        For a tensor that is not 2-D, empty, not floating point, sparse, or on
        the meta device (it has no values).
    """
    import torch

    t = tensor.detach()  # shares memory; drops the autograd graph
    notes: list[str] = []
    if t.layout != torch.strided:
        raise SourceError(f"{what} is a sparse tensor ({t.layout}); pass a dense one (.to_dense())")
    if t.is_complex() or not t.is_floating_point():
        raise SourceError(f"{what} holds {str(t.dtype).removeprefix('torch.')} values; an embedding table holds "
                          "floating-point numbers: pass .float()")
    _check_shape(tuple(t.shape), what)
    if t.device.type == "meta":
        raise SourceError(f"{what} is on the meta device: it has a shape but no values (a model built without its "
                          "weights); load the weights, then show it")
    if t.device.type != "cpu":
        notes.append(device_note(what, t.device, t.numel() * t.element_size()))  # one copy, then as any CPU tensor
        t = t.to("cpu")
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in _KEPT:
        notes.append(_sentence(f"{what} is stored as {dtype}; the explorer reads it as a float32 copy."))
        t = t.to(torch.float32)
    if not t.is_contiguous():
        notes.append(_sentence(f"{what} {_NOT_CONTIGUOUS}"))
        t = t.contiguous()
    return t, notes


def _from_numpy(arr: np.ndarray):
    import torch

    what = "the array"
    notes: list[str] = []
    if arr.dtype.kind != "f":
        raise SourceError(f"{what} holds {arr.dtype} values; an embedding table holds floating-point numbers: "
                          "pass .astype(np.float32)")
    _check_shape(arr.shape, what)
    if arr.dtype.name not in _KEPT or not arr.dtype.isnative:
        notes.append(_sentence(f"{what} is stored as {arr.dtype.str}; the explorer reads it as a float32 copy."))
        arr = arr.astype(np.float32)
    if not arr.flags.c_contiguous:
        notes.append(_sentence(f"{what} {_NOT_CONTIGUOUS}"))
        arr = np.ascontiguousarray(arr)
    with warnings.catch_warnings():
        # a read-only array (a memory map, np.frombuffer): torch warns that writing
        # through the tensor would be undefined; the explorer only reads
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(arr), notes


def _finite_note(tensor) -> str | None:
    """A sentence on the NaN and infinite values of ``tensor``, None when every value is finite."""
    import torch

    v, d = tensor.shape
    values = rows = 0
    first = None
    step = max(1, _FINITE_BLOCK // d)
    for start in range(0, v, step):
        bad = ~torch.isfinite(tensor[start : start + step])
        n = int(bad.sum())
        if n:
            values += n
            hit = bad.any(dim=1)
            rows += int(hit.sum())
            if first is None:
                first = start + int(hit.nonzero()[0, 0])
    if not values:
        return None
    are = f"{values:,} values are" if values > 1 else "1 value is"
    where = (f"in {rows:,} rows (the first is row {first:,}): those rows have" if rows > 1
             else f"in row {first:,}: it has")
    return (f"{are} NaN or infinite, {where} no neighbours, and one-hot @ E turns whole columns NaN where the "
            "gather stays finite.")


def _number() -> int:
    return next(_numbers)


def _table(tensor, *, name: str, kind: str, tokenizer: Tokenizer | None, notes: list[str],
           **extra) -> EmbeddingTable:
    """The table of a prepared CPU tensor, with its tokenizer's notes and its example text."""
    v, d = (int(x) for x in tensor.shape)
    if tokenizer is None:
        tokenizer = IdTokenizer(v)
        notes.append("No tokenizer was given; type token ids (or pass tokenizer= to show).")
    finite = _finite_note(tensor)
    notes += vocabulary_notes(int(tokenizer.vocab_size), v) + ([finite] if finite else [])
    rows = TensorRows(tensor)
    return EmbeddingTable(
        spec=f"python:{kind}-{_number()}", name=name, kind=kind, vocab_size=v, dim=d, dtype=rows.dtype,
        row_bytes=d * tensor.element_size(), tokenizer=tokenizer, _reader=rows, notes=tuple(notes),
        example_text=_example(tokenizer, v), **extra,
    )


def _example(tokenizer: Tokenizer, rows: int) -> str:
    if isinstance(tokenizer, IdTokenizer):
        return ids_example(rows)
    if isinstance(tokenizer, NameTokenizer):
        return " ".join(tokenizer.names[: min(6, rows)])
    return DEFAULT_EXAMPLE


def _bare_table(tensor, what: str, tokenizer, notes: list[str], tensor_name: str | None = None) -> EmbeddingTable:
    v, d = tensor.shape
    name = f"{what} {v:,}×{d:,} {str(tensor.dtype).removeprefix('torch.')}"
    return _table(tensor, name=name, kind="tensor", tokenizer=as_tokenizer(tokenizer), notes=notes,
                  tensor_name=tensor_name)


def _module_names(model) -> dict[int, str]:
    try:
        return {id(m): n for n, m in model.named_modules()}
    except Exception:  # a model-like object without the torch module tree
        return {}


def _from_model(model, tokenizer) -> EmbeddingTable:
    """The input embedding of a model in memory, its output matrix and tying."""
    cls = type(model).__name__
    try:
        emb = model.get_input_embeddings()
    except (NotImplementedError, AttributeError) as exc:  # transformers' default for models without one
        raise SourceError(f"{cls}.get_input_embeddings() gives no table ({type(exc).__name__}: {exc}); pass the "
                          "embedding weight itself") from None
    weight = getattr(emb, "weight", None)
    if weight is None:
        raise SourceError(f"{cls}.get_input_embeddings() gives {type(emb).__name__}, which has no weight to show")
    names = _module_names(model)
    embed_name = f"{names.get(id(emb)) or 'input embeddings'}.weight"
    tensor, notes = prepared(weight, f"{cls}'s {embed_name}")
    try:
        out_module = model.get_output_embeddings() if callable(getattr(model, "get_output_embeddings", None)) else None
    except (NotImplementedError, AttributeError):
        out_module = None  # no output layer the model can name: shown as none
    out_weight = getattr(out_module, "weight", None)
    output_name = f"{names.get(id(out_module)) or 'output layer'}.weight"
    facts = module_output(weight, out_weight, embed_name, output_name)
    if facts.problem:
        notes.append(f"Output side: {facts.problem}.")
    config = getattr(model, "config", None)
    origin = getattr(config, "_name_or_path", "") or getattr(config, "name_or_path", "")
    origin = origin if isinstance(origin, str) else ""
    tok = as_tokenizer(tokenizer) if tokenizer is not None else _tokenizer_beside(origin, notes)
    try:
        params = int(sum(p.numel() for p in model.parameters()))
    except Exception:
        params = None
    name = f"{cls} ({origin})" if origin else cls
    output = None
    if facts.tied is False:
        out_tensor, _ = prepared(out_weight, f"{cls}'s {output_name}")
        output = _output_factory(out_tensor, name, facts, tok)
    return _table(tensor, name=name, kind="model", tokenizer=tok, notes=notes, tied=facts.tied,
                  output_how=facts.how, _output=output, model_params=params, tensor_name=embed_name)


def _output_factory(tensor, name: str, facts: OutputFacts, tokenizer: Tokenizer | None):
    """A function building the untied output matrix's table (read in place, like E)."""

    def build() -> EmbeddingTable:
        v, d = (int(x) for x in tensor.shape)
        rows = TensorRows(tensor)
        return EmbeddingTable(
            spec=f"python:output-{_number()}", name=f"{name}: output matrix", kind="model", vocab_size=v, dim=d,
            dtype=rows.dtype, row_bytes=d * tensor.element_size(), tokenizer=tokenizer or IdTokenizer(v),
            _reader=rows, tied=False, tensor_name=facts.tensor, output_how=facts.how,
        )

    return build


def _retokenized(build, tokenizer: Tokenizer):
    """``build`` (an output matrix's factory) giving its table ``tokenizer``."""
    if build is None:
        return None
    return lambda: replace(build(), tokenizer=tokenizer)


def _tokenizer_beside(origin: str, notes: list[str]) -> Tokenizer | None:
    """The tokenizer of the folder (or cached repo) a model was loaded from, if there is one."""
    if not origin:
        return None
    folder = Path(origin).expanduser() if Path(origin).expanduser().is_dir() else None
    if folder is None and REPO_ID.fullmatch(origin):
        folder = find_in_cache(origin)
    if folder is None:
        return None
    try:
        tok = folder_tokenizer(folder)
    except SourceError:
        return None
    if tok is not None:
        notes.append(f"The tokenizer was read from {folder}, where the model was loaded from.")
    return tok


def _from_spec(spec: str, tokenizer) -> EmbeddingTable:
    table = open_table(spec)
    tok = as_tokenizer(tokenizer)
    if tok is None:
        return table
    # the notes about the model's own tokenizer (its size, or its absence) go with it
    own = set(vocabulary_notes(int(table.tokenizer.vocab_size), table.vocab_size))
    notes = [n for n in table.notes if n not in own and "type token ids" not in n]
    notes += vocabulary_notes(int(tok.vocab_size), table.vocab_size)
    return replace(table, tokenizer=tok, notes=tuple(notes), example_text=_example(tok, table.vocab_size),
                   _output=_retokenized(table._output, tok))


# -- tokenizers -----------------------------------------------------------------------------


def as_tokenizer(tokenizer) -> Tokenizer | None:
    """One of the app's tokenizers from what a user may hand to ``show``.

    Parameters
    ----------
    tokenizer : None, tokenizers.Tokenizer, a transformers fast tokenizer,
        a sequence of str (one piece per row), a path to a tokenizer.json or
        a folder, or a model spec whose tokenizer is wanted ('minilm').
        The user's own tokenizer object is copied, never changed (the app
        turns padding and truncation off).

    Raises
    ------
    SourceError
        For an object that is none of these, a slow transformers tokenizer
        (no character offsets), a path without a tokenizer, or an unknown spec.
    """
    if tokenizer is None or isinstance(tokenizer, (HFTokenizer, NameTokenizer, IdTokenizer)):
        return tokenizer
    if isinstance(tokenizer, (str, Path)):
        return _named_tokenizer(str(tokenizer))
    if isinstance(tokenizer, Sequence) and tokenizer and all(isinstance(p, str) for p in tokenizer):
        return NameTokenizer(list(tokenizer))
    backend = getattr(tokenizer, "backend_tokenizer", None)  # a transformers fast tokenizer
    if backend is None and callable(getattr(tokenizer, "to_str", None)) and hasattr(tokenizer, "encode_batch"):
        backend = tokenizer  # a tokenizers.Tokenizer
    if backend is not None:
        from tokenizers import Tokenizer as Backend

        return HFTokenizer(Backend.from_str(backend.to_str()))
    if hasattr(tokenizer, "convert_ids_to_tokens"):
        raise SourceError(f"tokenizer: {type(tokenizer).__name__} is a slow (Python) transformers tokenizer, "
                          "which gives no character offsets; load the fast one (AutoTokenizer.from_pretrained(..., "
                          "use_fast=True)) or pass its tokenizer.json")
    raise SourceError(f"tokenizer: {type(tokenizer).__name__} is not a tokenizer the explorer can use; pass a "
                      "transformers or tokenizers tokenizer, a tokenizer.json path, a model spec or a list of pieces")


def _named_tokenizer(name: str) -> Tokenizer:
    path = Path(name).expanduser()
    try:
        if path.is_file() and path.suffix.lower() == ".json":
            return HFTokenizer.from_file(path)
        if path.is_dir():
            tok = folder_tokenizer(path)
            if tok is not None:
                return tok
    except TokenizeError as exc:
        raise SourceError(f"tokenizer: {exc}") from None
    try:
        return open_table(name).tokenizer
    except SourceError as exc:
        raise SourceError(f"tokenizer {shown(name)}: {exc}") from None
