"""The first layer of the model behind a table, run on a few sentences: the
vectors of chosen positions before and after it (see :mod:`.context`, which
decides what to run).

Two kinds of model run here: a transformers architecture with safetensors
weights (e.g. MiniLM) or a GGUF file (e.g. SmolLM2, dequantised by
transformers), through transformers with one layer kept; and the
explorer's own toy model (the bundled one, or one saved by the Training
view), through its module in :mod:`.training`, with torch alone. torch and
transformers are imported only inside the functions that run them. No Qt here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.geometry.vectors import cosine
from explorer.core.sources.runnable import load_arguments
from explorer.core.training.model import TOY_MODEL_TYPE

__all__ = [
    "ContextError",
    "ContextResult",
    "STAGES",
    "TOY_STAGES",
    "toy_window",
    "toy_first_layer",
    "first_layer_states",
    "contextual_job",
]


class ContextError(ExplorerError, ValueError):
    """The first layer cannot be run on these sentences; the message says why."""


def _model_type(folder) -> str:
    try:
        return str(json.loads((Path(folder) / "config.json").read_text()).get("model_type", ""))
    except (OSError, ValueError, AttributeError):
        return ""


@dataclass(frozen=True)
class ContextResult:
    """Vectors of chosen token positions at successive stages of the model.

    Attributes
    ----------
    stages : tuple of str
        The first is always "table row" (E[id]); the last is the first layer's output.
    vectors : dict str -> ndarray, float32, shape (n, d)
        One row per chosen (sequence, position).
    notes : tuple of str
        What each stage includes, one per stage.
    layer : str
        The first layer, in words ("one transformer layer").
    mixing : str
        How that layer brings in the neighbours, one sentence.
    windows : tuple of tuple of int
        For a model that reads a fixed window of tokens: the ids each chosen
        position's layer read (oldest first); empty otherwise.
    """

    stages: tuple
    vectors: dict
    notes: tuple = ()
    layer: str = "one transformer layer"
    mixing: str = ""
    windows: tuple = ()

    def cosine(self, stage: str, a: int = 0, b: int = 1) -> float:
        """Cosine between chosen positions ``a`` and ``b`` at ``stage``."""
        v = self.vectors[stage]
        return cosine(v[a], v[b])


STAGES = ("table row", "embedding layer output", "after transformer layer 1")
STAGE_NOTES = (
    "E[id]: the lookup alone",
    "row + position (+ segment) embeddings, normalised",
    "after attention over the sentence and the feed-forward block",
)
#: the embedding layer's output of a model that adds nothing to the row (no position table, no norm)
ROW_ONLY_NOTE = "the row itself: nothing is added here (positions, if any, act inside attention)"
TOY_STAGES = ("table row", "after layer 1 (tanh)")


def _check_ids(sequences, picks, vocab_size: int) -> None:
    for si, pos in picks:
        seq = sequences[si]
        if not 0 <= pos < len(seq):
            raise ContextError(f"position {pos} is outside sentence {si + 1}")
    if any(not 0 <= int(i) < vocab_size for s in sequences for i in s):
        raise ContextError("a token id is outside the model's vocabulary")


@functools.lru_cache(maxsize=2)
def _load_first_layer(folder: str):
    """The transformers model with only its first transformer layer, eval mode, cached."""
    import torch  # noqa: F401
    from transformers import AutoModel

    from explorer.core.runtime import quiet_transformers

    quiet_transformers()
    where, extra = load_arguments(folder)
    # a GGUF file is dequantised by transformers; a folder is read from safetensors only
    kwargs = dict(local_files_only=True, trust_remote_code=False, **(extra or {"use_safetensors": True}))
    try:
        model = AutoModel.from_pretrained(where, num_hidden_layers=1, **kwargs)
    except (TypeError, ValueError):
        model = AutoModel.from_pretrained(where, **kwargs)
    model.eval()
    return model


def _transformer_first_layer(folder, sequences, picks) -> ContextResult:
    import torch

    model = _load_first_layer(str(folder))
    weight = model.get_input_embeddings().weight
    _check_ids(sequences, picks, weight.shape[0])
    out = {s: [] for s in STAGES}
    cache = {}
    with torch.no_grad():
        for si, pos in picks:
            if si not in cache:
                ids = torch.as_tensor([list(sequences[si])], dtype=torch.long)
                res = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
                cache[si] = (ids, res.hidden_states)
            ids, hs = cache[si]
            out[STAGES[0]].append(weight[ids[0, pos]].float().numpy().copy())
            out[STAGES[1]].append(hs[0][0, pos].float().numpy().copy())
            out[STAGES[2]].append(hs[1][0, pos].float().numpy().copy())
    vectors = {k: np.stack(v).astype(np.float32) for k, v in out.items()}
    notes = STAGE_NOTES
    if np.array_equal(vectors[STAGES[0]], vectors[STAGES[1]]):  # e.g. SmolLM2: nothing added to the row
        notes = (STAGE_NOTES[0], ROW_ONLY_NOTE, STAGE_NOTES[2])
    return ContextResult(STAGES, vectors, notes,
                         layer="one transformer layer",
                         mixing="Attention mixed in the neighbouring words")


@functools.lru_cache(maxsize=2)
def _load_toy(folder: str):
    """(model, config, id of <bos>) of a toy model folder, cached."""
    from tokenizers import Tokenizer

    from explorer.core.training.model import load_model_folder

    model, cfg = load_model_folder(folder)
    try:
        tok = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        bos = tok.token_to_id("<bos>")
    except Exception:  # a folder without a readable tokenizer: the table's loader said so already
        bos = None
    return model, cfg, 0 if bos is None else int(bos)


def toy_window(sequence: Sequence[int], position: int, context: int, bos: int) -> tuple[int, ...]:
    """The ``context`` ids the toy model's layer reads at ``position``: the token
    there and the ones before it, the sentence preceded by <bos> (as every
    sentence of its training corpus is) and <bos> further left."""
    stream = [bos] * context + [int(i) for i in sequence]
    end = context + int(position) + 1
    return tuple(stream[end - context:end])


def toy_first_layer(folder, sequences, picks) -> ContextResult:
    """The explorer's own toy model (see :mod:`.training`): its table row and its
    hidden layer h = tanh(W [E[x_1]; …; E[x_c]] + b) at each pick, computed by
    the model's own module with torch (no transformers)."""
    import torch

    model, cfg, bos = _load_toy(str(folder))
    weight = model.embed_tokens.weight
    _check_ids(sequences, picks, weight.shape[0])
    windows = tuple(toy_window(sequences[si], pos, cfg.context, bos) for si, pos in picks)
    with torch.no_grad():
        ctx = torch.as_tensor(windows, dtype=torch.long)
        hidden = model.hidden(ctx).float().numpy().copy()
        rows = weight[ctx[:, -1]].float().numpy().copy()
    c = cfg.context
    notes = ("E[id]: the lookup alone",
             f"tanh(W·[rows of the {c} tokens ending here] + b): the word and the {c - 1} before it")
    return ContextResult(TOY_STAGES, {TOY_STAGES[0]: rows.astype(np.float32),
                                      TOY_STAGES[1]: hidden.astype(np.float32)}, notes,
                         layer="the toy model's hidden layer",
                         mixing=f"It mixes in the rows of the {c - 1} tokens before the word", windows=windows)


def first_layer_states(folder, sequences: Sequence[Sequence[int]], picks: Sequence[tuple[int, int]]) -> ContextResult:
    """Run the model's embedding layer and first layer.

    Parameters
    ----------
    folder : path
        A Hugging Face model folder with safetensors weights (never
        ``trust_remote_code``), a GGUF file, or a toy model saved by the
        explorer (what :func:`~explorer.core.sources.runnable.runnable_model` found).
    sequences : list of list of int
        Token ids of each sentence, as the tokenizer gives them (specials
        included), each run on its own.
    picks : list of (sequence index, position)
        The token positions whose vectors are returned.

    Returns
    -------
    ContextResult
        For each stage an array of shape (len(picks), d). A transformers model:
        the table row E[id], the embedding layer's output (row plus positions,
        normalised, as the model computes it) and the hidden state after its
        first layer. The toy model: the table row and its hidden layer.

    Raises
    ------
    ContextError
        A position or an id outside the sentence or the vocabulary.
    """
    if _model_type(folder) == TOY_MODEL_TYPE:
        return toy_first_layer(folder, sequences, picks)
    return _transformer_first_layer(folder, sequences, picks)


def contextual_job(folder, sequences, picks) -> Iterator[tuple[float, str]]:
    """:func:`first_layer_states` as a job: yields progress, returns ContextResult."""
    if _model_type(folder) == TOY_MODEL_TYPE:
        yield 0.1, "Loading the toy model…"
        _load_toy(str(folder))
        yield 0.6, "Running its hidden layer on both sentences…"
    else:
        yield 0.05, "Loading torch and transformers…"
        import torch  # noqa: F401
        import transformers  # noqa: F401

        yield 0.4, "Loading the model's first layer…"
        _load_first_layer(str(folder))
        yield 0.8, "Running the first layer on both sentences…"
    result = first_layer_states(folder, sequences, picks)
    yield 1.0, "Done"
    return result
