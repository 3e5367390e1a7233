"""The other end of the model: its output matrix (unembedding, ``lm_head``)
and whether it is the input table itself (weight tying). No Qt here.

Tying is decided from the files, the same way for every source:

* a GGUF file ties when it holds no ``output.weight``;
* a safetensors checkpoint with an output tensor of the input's shape ties
  when that tensor is the same bytes (the same offset in the same file, or
  equal bytes in every row sampled); otherwise it is a second matrix;
* a checkpoint without an output tensor ties when its architecture has a
  language-model head and its config does not say ``tie_word_embeddings:
  false``; an encoder (MiniLM) has no output matrix at all.
* a model in memory (``explorer.show(model)``) ties when its output layer
  holds E itself: the same tensor, or a view of the same memory.

:func:`tying_word` says the result in the words the status bar, the cost
card, the picker, the inspector and the command line all use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.arrays import unique_sorted

__all__ = ["OUTPUT_NAMES", "GGUF_OUTPUT", "STANDALONE_KINDS", "OutputFacts", "checkpoint_output", "gguf_output",
           "module_output", "tying_word", "same_rows_sampled"]

#: names of the output matrix in safetensors checkpoints, most common first
OUTPUT_NAMES = (
    "lm_head.weight",
    "output.weight",
    "embed_out.weight",
    "cls.predictions.decoder.weight",
    "model.lm_head.weight",
)
GGUF_OUTPUT = "output.weight"
#: architectures (by name) whose model ends in a language-model head
_HEAD_ARCHS = ("CausalLM", "LMHead", "MaskedLM", "ForConditionalGeneration", "ToyLM")
#: rows compared byte for byte to tell a stored copy of E from a second matrix
_SAMPLED_ROWS = 16
#: kinds of table that have no model around them (a bare tensor: explorer.show(tensor))
STANDALONE_KINDS = ("random", "toy", "tensor")


@dataclass(frozen=True)
class OutputFacts:
    """What the files say about the output matrix.

    Attributes
    ----------
    tied : bool or None
        True: the output matrix is E itself. False: a second matrix,
        ``tensor`` names it. None: the files hold no output matrix (an
        encoder), or it cannot be read.
    tensor : str or None
        The output tensor's name when it is a second matrix.
    how : str
        How that was decided, in a sentence for the screen.
    problem : str or None
        What is wrong with an output tensor that is there but unusable
        (mis-shaped, unreadable); the table then has no output side.
    """

    tied: bool | None
    tensor: str | None
    how: str
    problem: str | None = None


def _has_head(config: dict) -> bool:
    archs = config.get("architectures") or []
    text = " ".join(str(a) for a in archs) if isinstance(archs, list) else str(archs)
    return any(k in text for k in _HEAD_ARCHS)


def same_rows_sampled(read_a, read_b, rows: int) -> bool:
    """Whether two matrices hold the same bytes in :data:`_SAMPLED_ROWS`
    rows spread over ``rows`` (first and last included); ``read_x(i)`` gives
    row i's bytes."""
    for i in unique_sorted(np.linspace(0, rows - 1, _SAMPLED_ROWS).astype(np.int64)):
        if read_a(int(i)) != read_b(int(i)):
            return False
    return True


def _row_reader(entry, row_bytes: int):
    def read(i: int) -> bytes:
        with open(entry.file, "rb") as f:
            f.seek(entry.start + i * row_bytes)
            return f.read(row_bytes)

    return read


def checkpoint_output(tensors: dict, config: dict, embed: str) -> OutputFacts:
    """Tying and the output tensor of a safetensors checkpoint.

    Parameters
    ----------
    tensors : dict of name -> TensorEntry
        The checkpoint's header entries (every shard).
    config : dict
        Its config.json ({} when there is none).
    embed : str
        The input embedding's name.
    """
    e = tensors[embed]
    for name in OUTPUT_NAMES:
        if name == embed or name not in tensors:
            continue
        o = tensors[name]
        if tuple(o.shape) != tuple(e.shape):
            return OutputFacts(None, None, f"{name} has shape {tuple(o.shape)}, not the input's {tuple(e.shape)}",
                               problem=f"the output tensor {name} has shape {tuple(o.shape)} where the input "
                                       f"table is {tuple(e.shape)}; the output side is not shown")
        if o.dtype != e.dtype:
            return OutputFacts(False, name, f"{name} is a second matrix (stored as {o.dtype}, E as {e.dtype})")
        if Path(o.file) == Path(e.file) and o.start == e.start:
            return OutputFacts(True, None, f"{name} is the same tensor as {embed}")
        row_bytes = e.nbytes // max(1, int(e.shape[0]))
        try:
            same = same_rows_sampled(_row_reader(e, row_bytes), _row_reader(o, row_bytes), int(e.shape[0]))
        except OSError as exc:
            return OutputFacts(None, None, f"{name} could not be read", problem=f"{name} could not be read ({exc})")
        if same:
            return OutputFacts(True, None, f"{name} stores the same values as {embed} (tied, saved twice)")
        return OutputFacts(False, name, f"{name} is a second matrix with values of its own")
    if _has_head(config):
        if config.get("tie_word_embeddings", True) is False:
            return OutputFacts(None, None, "the config says tie_word_embeddings: false but the files hold no "
                                           "output matrix",
                               problem="the config says the output matrix is not tied, but no lm_head tensor is "
                                       "in the files; the output side cannot be shown")
        return OutputFacts(True, None, "no output tensor in the files: the head reuses E "
                                       "(tie_word_embeddings)")
    return OutputFacts(None, None, "the model has no language-model head (an encoder)")


def gguf_output(header, embed_shape: tuple[int, ...]) -> OutputFacts:
    """Tying and the output tensor of a GGUF file: tied when it holds no ``output.weight``."""
    info = header.tensors.get(GGUF_OUTPUT)
    if info is None:
        return OutputFacts(True, None, "the GGUF file holds no output.weight: the head reuses token_embd.weight")
    if tuple(info.shape) != tuple(embed_shape):
        return OutputFacts(None, None, f"output.weight has shape {tuple(info.shape)}",
                           problem=f"output.weight has shape {tuple(info.shape)} where token_embd.weight is "
                                   f"{tuple(embed_shape)}; the output side is not shown")
    return OutputFacts(False, GGUF_OUTPUT, "output.weight is a second matrix")


def module_output(embed, output, embed_name: str, output_name: str) -> OutputFacts:
    """Tying and the output matrix of a model in memory (a torch module).

    Parameters
    ----------
    embed : torch.Tensor (V, d)
        The input embedding's weight.
    output : torch.Tensor or None
        The output layer's weight (``get_output_embeddings().weight``), None
        when the model has no output layer (an encoder, a headless model).
    embed_name, output_name : str
        Their names in the model, for the sentence.

    Tied means the output layer holds E itself: the same tensor object, or a
    tensor of the same shape and strides starting at the same address (the
    same memory). Equal values in a separate tensor are a second matrix:
    training would move them apart.
    """
    if output is None:
        return OutputFacts(None, None, "the model has no output layer (get_output_embeddings() is None)")
    if tuple(output.shape) != tuple(embed.shape):
        return OutputFacts(None, None, f"{output_name} has shape {tuple(output.shape)}, not the input's "
                                       f"{tuple(embed.shape)}",
                           problem=f"the output layer {output_name} has shape {tuple(output.shape)} where the input "
                                   f"table is {tuple(embed.shape)}; the output side is not shown")
    same_memory = (output.device == embed.device and output.device.type != "meta" and output.dtype == embed.dtype
                   and output.stride() == embed.stride() and output.data_ptr() == embed.data_ptr())
    if output is embed or same_memory:
        return OutputFacts(True, None, f"{output_name} is the same tensor as {embed_name} (tied: "
                                       f"one matrix, data_ptr 0x{embed.data_ptr():X})")
    return OutputFacts(False, output_name, f"{output_name} is a second matrix with values of its own "
                                           f"(its own memory, data_ptr 0x{output.data_ptr():X})")


def tying_word(tied: bool | None, kind: str) -> str:
    """Weight tying in a word or two, the same everywhere.

    ``tied`` is None when no output matrix was found: for a checkpoint that
    means it has none (an encoder) or it cannot be read; a random or toy
    table (``kind``) has no model around it, so tying is unknown.
    """
    if tied is True:
        return "tied"
    if tied is False:
        return "not tied"
    return "tying unknown" if kind in STANDALONE_KINDS else "no output layer"
