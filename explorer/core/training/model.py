"""A toy next-token model and a generator of per-step metrics.

The model: embedding table E (V x d) -> the concatenated rows of the previous
``context`` tokens -> one tanh layer -> output projection to V logits (tied:
E itself; untied: a separate V x d matrix). Small enough to train in seconds
on a CPU, and enough to show the sparsity of the embedding gradient
(FACTS.md, "Gradient sparsity"). No Qt here.

The settings live in :mod:`.training_config`, the corpora in
:mod:`.training_corpus`, the live run a view watches in :mod:`.training_job`
and :mod:`.training_session`.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.training.config import OPTIMIZERS, ConfigError, TrainConfig
from explorer.core.training.corpus import MAX_CORPUS_CHARS, synthetic_corpus, text_corpus

__all__ = [
    "TrainConfig", "ConfigError", "TrainingDiverged", "StepMetrics", "ToyLM", "train", "save_model_folder",
    "load_model_folder", "ToyModelError", "TOY_MODEL_TYPE", "word_tokenizer", "OPTIMIZERS", "DIVERGED_FACTOR",
    "text_corpus", "synthetic_corpus", "MAX_CORPUS_CHARS",
]

#: a loss above this many times ln V (a uniform guess) counts as divergence
DIVERGED_FACTOR = 100.0
#: config.json's model_type of a saved toy model (transformers does not know it; the explorer does)
TOY_MODEL_TYPE = "explorer-toy-lm"


class TrainingDiverged(ExplorerError, FloatingPointError):
    """The loss became non-finite or absurdly large; the message says at which step."""


class ToyModelError(ExplorerError, ValueError):
    """A saved toy model folder cannot be rebuilt; the message says why."""


@dataclass(frozen=True)
class StepMetrics:
    """What one training step did to the embedding table."""

    step: int
    loss: float
    vocab_size: int
    #: distinct ids among the batch's inputs to the embedding
    batch_distinct_ids: int
    #: rows of the table with a non-zero gradient (with tying: of the shared table)
    grad_rows: int
    #: rows with a non-zero gradient through the input path alone
    input_grad_rows: int
    #: rows whose values changed in this step
    changed_rows: int
    #: rows with no gradient this step that changed only because of weight decay: the
    #: same step with weight decay 0 (same gradient, same optimizer state) would have
    #: left them exactly as they were (0 without weight decay)
    decay_only_rows: int = 0
    #: ids that had gradient / that changed (int32 arrays, copies)
    grad_ids: np.ndarray = field(repr=False, default=None)
    changed_ids: np.ndarray = field(repr=False, default=None)
    #: a copy of E after the step, when a snapshot was asked for
    snapshot: np.ndarray | None = field(repr=False, default=None)

    def as_json(self) -> dict:
        return {
            "step": self.step,
            "loss": self.loss,
            "vocab_size": self.vocab_size,
            "batch_distinct_ids": self.batch_distinct_ids,
            "grad_rows": self.grad_rows,
            "input_grad_rows": self.input_grad_rows,
            "changed_rows": self.changed_rows,
            "decay_only_rows": self.decay_only_rows,
        }


def _torch():
    import torch

    return torch


class ToyLM:
    """Factory for the toy model (a torch nn.Module built lazily)."""

    @staticmethod
    def build(vocab_size: int, cfg: TrainConfig):
        torch = _torch()
        nn = torch.nn

        class _ToyLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed_tokens = nn.Embedding(vocab_size, cfg.dim, sparse=cfg.sparse)
                nn.init.normal_(self.embed_tokens.weight, std=cfg.init_std)
                self.mixer = nn.Linear(cfg.context * cfg.dim, cfg.dim)
                self.lm_head = None if cfg.tied else nn.Linear(cfg.dim, vocab_size, bias=False)

            def hidden(self, ctx):
                """The first (and only) layer: tanh(W [E[x_1]; …; E[x_context]] + b), shape (B, d)."""
                e = self.embed_tokens(ctx)  # (B, context, d)
                return torch.tanh(self.mixer(e.reshape(e.shape[0], -1)))

            def forward(self, ctx):
                h = self.hidden(ctx)
                w = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
                return h @ w.T

        return _ToyLM()


def _make_optimizers(model, cfg: TrainConfig):
    torch = _torch()
    emb = model.embed_tokens.weight
    rest = [p for n, p in model.named_parameters() if not n.startswith("embed_tokens")]
    if cfg.optimizer == "sparse_adam":
        return [torch.optim.SparseAdam([emb], lr=cfg.lr), torch.optim.Adam(rest, lr=cfg.lr)]
    params = list(model.parameters())
    if cfg.optimizer == "sgd":
        return [torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.weight_decay)]
    if cfg.optimizer == "adam":
        return [torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)]
    return [torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)]


def _grad_row_mask(grad, vocab_size: int) -> np.ndarray:
    torch = _torch()
    if grad is None:
        return np.zeros(vocab_size, bool)
    if grad.is_sparse:
        g = grad.coalesce()
        idx = g.indices()[0]
        nz = (g.values() != 0).any(dim=1)
        mask = torch.zeros(vocab_size, dtype=torch.bool)
        mask[idx[nz]] = True
        return mask.numpy()
    return (grad != 0).any(dim=1).numpy()


def _step_without_decay(optimizers, emb, before):
    """Rows of E the coming optimizer step would change if its weight decay were 0.

    Runs the embedding's own optimizer (same class, same hyper-parameters,
    a copy of its state for E) on a copy of E and of its gradient, with
    weight_decay=0; the real optimizers are not touched. Returns a bool
    array (V,). Called before the real step; E is small (V x d), so this
    costs one more optimizer update of E alone.
    """
    torch = _torch()
    opt = next(o for o in optimizers if any(p is emb for g in o.param_groups for p in g["params"]))
    group = next(g for g in opt.param_groups if any(p is emb for p in g["params"]))
    twin = before.clone().requires_grad_(True)
    twin.grad = emb.grad.clone() if emb.grad is not None else torch.zeros_like(twin)
    accepted = inspect.signature(type(opt).__init__).parameters
    hyper = {k: v for k, v in group.items() if k != "params" and k in accepted}
    hyper["weight_decay"] = 0.0
    shadow = type(opt)([twin], **hyper)
    state = opt.state.get(emb)
    if state:
        shadow.state[twin] = {k: (v.clone() if torch.is_tensor(v) else v) for k, v in state.items()}
    shadow.step()
    return (twin.detach() != before).any(dim=1).numpy()


def train(corpus_ids: np.ndarray, vocab_size: int, cfg: TrainConfig, model=None) -> Iterator[StepMetrics]:
    """Train the toy model, yielding :class:`StepMetrics` after every step.

    The generator can be stopped at any yield. Pass ``model`` (from
    :meth:`ToyLM.build`) to keep a handle on it or to continue a run.
    Divergence (a non-finite loss, or one above DIVERGED_FACTOR * ln V)
    raises :class:`TrainingDiverged` (a ``FloatingPointError``).
    """
    cfg.validate()
    torch = _torch()
    ids = torch.as_tensor(np.asarray(corpus_ids, dtype=np.int64))
    if ids.numel() <= cfg.context:
        raise ConfigError("the corpus is shorter than the context window")
    if int(ids.max()) >= vocab_size or int(ids.min()) < 0:
        raise ConfigError("the corpus holds ids outside the table")
    gen = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    if model is None:
        model = ToyLM.build(vocab_size, cfg)
    optimizers = _make_optimizers(model, cfg)
    emb = model.embed_tokens.weight
    offsets = torch.arange(-cfg.context, 0)
    n_pos = ids.numel() - cfg.context
    # a uniform guess costs ln V; a loss 100 times that is divergence even
    # while it is still finite (a huge learning rate can keep it finite for long)
    diverged_above = DIVERGED_FACTOR * math.log(max(vocab_size, 2))
    for step in range(1, cfg.steps + 1):
        pos = torch.randint(0, n_pos, (cfg.batch_size,), generator=gen) + cfg.context
        ctx = ids[pos[:, None] + offsets]  # (B, context)
        target = ids[pos]
        logits = model(ctx)
        loss = torch.nn.functional.cross_entropy(logits, target)
        for opt in optimizers:
            opt.zero_grad(set_to_none=True)
        loss.backward()
        loss_value = float(loss.detach())
        if not math.isfinite(loss_value) or loss_value > diverged_above:
            raise TrainingDiverged(
                f"Training diverged at step {step}: the loss became {loss_value:.4g}; lower the learning rate."
            )
        grad_mask = _grad_row_mask(emb.grad, vocab_size)
        batch_ids = torch.unique(ctx).numpy()
        input_mask = np.zeros(vocab_size, bool)
        input_mask[batch_ids] = True
        before = emb.detach().clone()
        moved_without_decay = _step_without_decay(optimizers, emb, before) if cfg.weight_decay > 0 else None
        for opt in optimizers:
            opt.step()
        changed = (emb.detach() != before).any(dim=1).numpy()
        decay_only = 0
        if moved_without_decay is not None:
            decay_only = int((changed & ~grad_mask & ~moved_without_decay).sum())
        snap = None
        if cfg.snapshot_every and (step % cfg.snapshot_every == 0 or step == 1):
            snap = emb.detach().numpy().copy()
        yield StepMetrics(
            step=step,
            loss=loss_value,
            vocab_size=vocab_size,
            batch_distinct_ids=int(len(batch_ids)),
            grad_rows=int(grad_mask.sum()),
            input_grad_rows=int((grad_mask & input_mask).sum()) if not cfg.tied else int(len(batch_ids)),
            changed_rows=int(changed.sum()),
            decay_only_rows=decay_only,
            grad_ids=np.nonzero(grad_mask)[0].astype(np.int32),
            changed_ids=np.nonzero(changed)[0].astype(np.int32),
            snapshot=snap,
        )


def save_model_folder(model, cfg: TrainConfig, words: list[str], classes: dict[str, str], folder: str | Path,
                      example_text: str = "") -> Path:
    """Save a trained toy model in Hugging Face layout, openable by the explorer.

    Writes config.json, model.safetensors, tokenizer.json (word level) and
    classes.json (word -> class).
    """
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    # the toy model's embedding goes under the name Llama-style checkpoints use
    tensors = {("model." + k if k.startswith("embed_tokens") else k): v for k, v in tensors.items()}
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["ExplorerToyLM"],
        "model_type": TOY_MODEL_TYPE,
        "vocab_size": len(words),
        "hidden_size": cfg.dim,
        "context": cfg.context,
        "tie_word_embeddings": bool(cfg.tied),
        "training": {k: v for k, v in asdict(cfg).items() if k != "snapshot_every"},
    }
    if example_text:
        config["explorer_example_text"] = example_text
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    word_tokenizer(words).save(str(folder / "tokenizer.json"))
    (folder / "classes.json").write_text(json.dumps(classes, indent=1, sort_keys=True) + "\n")
    return folder


def load_model_folder(folder: str | Path):
    """The toy model saved by :func:`save_model_folder`, rebuilt in eval mode.

    Returns
    -------
    (model, TrainConfig)
        ``model`` is the torch module of :meth:`ToyLM.build` with the saved weights.

    Raises
    ------
    ToyModelError
        The folder does not hold a toy model, or its weights do not fit its config.
    """
    from safetensors.torch import load_file

    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ToyModelError(f"cannot read the toy model's config.json: {exc}") from exc
    if not isinstance(config, dict) or config.get("model_type") != TOY_MODEL_TYPE:
        raise ToyModelError(f"{folder} does not hold a toy model saved by the explorer")
    try:
        tensors = load_file(str(folder / "model.safetensors"))
        vocab_size, dim = (int(n) for n in tensors["model.embed_tokens.weight"].shape)
        cfg = TrainConfig(dim=dim, context=int(config["context"]), tied="lm_head.weight" not in tensors)
        model = ToyLM.build(vocab_size, cfg)
        state = {k.removeprefix("model."): v for k, v in tensors.items()}
        model.load_state_dict(state, strict=True)
    except (OSError, KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise ToyModelError(f"the toy model in {folder} cannot be rebuilt: {exc}") from exc
    model.eval()
    return model, cfg


def word_tokenizer(words: list[str]):
    """A word-level fast tokenizer over ``words`` (lower-cased, splits punctuation)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([w for w in words if w.startswith("<") and w.endswith(">")])
    return tok
