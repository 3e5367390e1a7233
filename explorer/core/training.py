"""A toy next-token model and a generator of per-step metrics.

The model: embedding table E (V x d) -> the concatenated rows of the previous
``context`` tokens -> one tanh layer -> output projection to V logits (tied:
E itself; untied: a separate V x d matrix). Small enough to train in seconds
on a CPU, and enough to show the sparsity of the embedding gradient
(FACTS.md, "Gradient sparsity"). No Qt here.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from .errors import ExplorerError
from .runtime import limit_torch_threads

__all__ = [
    "TrainConfig", "ConfigError", "StepMetrics", "ToyLM", "train", "save_model_folder", "OPTIMIZERS",
    "TrainingControl", "training_job", "text_corpus", "TrainingRun",
    "live_training_job", "synthetic_corpus",
]

OPTIMIZERS = ("sgd", "adam", "adamw", "sparse_adam")
#: a loss above this many times ln V (a uniform guess) counts as divergence
DIVERGED_FACTOR = 100.0


class ConfigError(ExplorerError, ValueError):
    """A combination of options that cannot work; the message explains why."""


@dataclass
class TrainConfig:
    steps: int = 1000
    dim: int = 32
    context: int = 3
    batch_size: int = 64
    lr: float = 0.01
    optimizer: str = "adam"
    weight_decay: float = 0.0
    tied: bool = False
    sparse: bool = False
    seed: int = 0
    init_std: float = 0.02
    #: yield a copy of E every this many steps (0: never)
    snapshot_every: int = 0

    def validate(self) -> None:
        """Raise ConfigError for impossible combinations (explained)."""
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
        if self.steps < 0 or self.dim < 1 or self.context < 1 or self.batch_size < 1:
            raise ConfigError("steps, d, context and batch size must be positive")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError("the learning rate must be a positive number")
        if self.weight_decay < 0 or not math.isfinite(self.weight_decay):
            raise ConfigError("weight decay must be zero or positive")
        if self.sparse and self.tied:
            raise ConfigError(
                "sparse gradients cannot be used with tying: the tied output projection gives "
                "every row a gradient each step, so the table's gradient is dense"
            )
        if self.optimizer == "sparse_adam" and not self.sparse:
            raise ConfigError("SparseAdam needs sparse gradients: turn on sparse gradients (--sparse)")
        if self.sparse and self.optimizer in ("adam", "adamw"):
            raise ConfigError(
                "dense Adam/AdamW cannot take sparse gradients: use SparseAdam with sparse gradients, "
                "or turn sparse gradients off"
            )
        if self.sparse and self.weight_decay > 0:
            raise ConfigError(
                "weight decay is not supported with sparse gradients (it would have to touch every row); "
                "set weight decay to 0 or turn sparse gradients off"
            )


@dataclass
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

            def forward(self, ctx):
                e = self.embed_tokens(ctx)  # (B, T, d)
                h = torch.tanh(self.mixer(e.reshape(e.shape[0], -1)))
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


def train(corpus_ids: np.ndarray, vocab_size: int, cfg: TrainConfig, model=None) -> Iterator[StepMetrics]:
    """Train the toy model, yielding :class:`StepMetrics` after every step.

    The generator can be stopped at any yield. Pass ``model`` (from
    :meth:`ToyLM.build`) to keep a handle on it or to continue a run.
    Divergence (a non-finite loss, or one above DIVERGED_FACTOR * ln V)
    raises ``FloatingPointError``.
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
            raise FloatingPointError(
                f"training diverged at step {step}: the loss became {loss_value:.4g}; lower the learning rate"
            )
        grad_mask = _grad_row_mask(emb.grad, vocab_size)
        batch_ids = torch.unique(ctx).numpy()
        input_mask = np.zeros(vocab_size, bool)
        input_mask[batch_ids] = True
        before = emb.detach().clone()
        for opt in optimizers:
            opt.step()
        changed = (emb.detach() != before).any(dim=1).numpy()
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
        "model_type": "explorer-toy-lm",
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


def word_tokenizer(words: list[str]):
    """A word-level fast tokenizer over ``words`` (lower-cased, splits punctuation)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([w for w in words if w.startswith("<") and w.endswith(">")])
    return tok


# -- running the generator for a live view ----------------------------------------------


class TrainingControl:
    """Flags a GUI sets and a running :func:`training_job` reads between steps.

    Plain attribute writes are atomic in CPython; the job polls them, so no
    lock is needed. ``steps_per_second`` <= 0 means as fast as possible.
    """

    def __init__(self, steps_per_second: float = 0.0):
        self.steps_per_second = float(steps_per_second)
        self._paused = threading.Event()
        self._stopped = threading.Event()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def pause(self) -> None:
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def stop(self) -> None:
        self._stopped.set()
        self._paused.clear()


def training_job(corpus_ids: np.ndarray, vocab_size: int, cfg: TrainConfig, model=None,
                 control: TrainingControl | None = None, batch_seconds: float = 0.03,
                 poll_seconds: float = 0.02) -> Iterator[list[StepMetrics]]:
    """Run :func:`train` for a live view: metrics in batches, pause, stop and pace.

    Yields
    ------
    list of StepMetrics
        The steps done since the last yield; a batch is yielded once
        ``batch_seconds`` have passed (so a view gets ~30 batches a second
        however fast the steps are), when pausing, and at the end.

    Returns
    -------
    int
        The last step done.

    While ``control.paused`` the job sleeps in ``poll_seconds`` slices and
    yields nothing; ``control.stopped`` ends it at the next step. A
    diverging run yields the steps done so far, then raises
    ``FloatingPointError``.
    """
    control = control or TrainingControl()
    limit_torch_threads()
    pending: list[StepMetrics] = []
    last_yield = time.perf_counter()
    # pacing: step n of the current pace is due at pace_t0 + n / pace
    pace, pace_t0, pace_n = None, 0.0, 0
    last_step = 0
    gen = train(corpus_ids, vocab_size, cfg, model=model)
    try:
        while not control.stopped:
            if control.paused:
                if pending:
                    yield pending
                    pending = []
                while control.paused and not control.stopped:
                    time.sleep(poll_seconds)
                pace = None  # restart the pacing clock after a pause
                last_yield = time.perf_counter()
                continue
            try:
                m = next(gen)
            except StopIteration:
                break
            pending.append(m)
            last_step = m.step
            sps = control.steps_per_second
            now = time.perf_counter()
            if sps > 0:
                if pace != sps:
                    pace, pace_t0, pace_n = sps, now, 0
                pace_n += 1
                due = pace_t0 + pace_n / sps
                while now < due and not control.stopped and not control.paused:
                    time.sleep(min(poll_seconds, due - now))
                    now = time.perf_counter()
            else:
                pace = None
            if now - last_yield >= batch_seconds:
                yield pending
                pending = []
                last_yield = now
    except FloatingPointError:
        if pending:
            yield pending
        raise
    finally:
        gen.close()
    if pending:
        yield pending
    return last_step


# -- corpora from a text file -------------------------------------------------------------

#: the largest text read from a file, in characters
MAX_CORPUS_CHARS = 4_000_000
#: words beyond this many distinct types become <unk>
MAX_TEXT_VOCAB = 4096
_WORD = re.compile(r"\w+|[^\w\s]")


def text_corpus(text: str, tokenizer=None, max_vocab: int = MAX_TEXT_VOCAB):
    """A training corpus from plain text.

    Parameters
    ----------
    text : str
        At most MAX_CORPUS_CHARS characters are used.
    tokenizer : object with ``encode(text) -> list[Token]`` and ``piece(id)``, optional
        None: lower-cased words and punctuation marks. Otherwise the model's
        tokenizer; its ids are renumbered 0..n-1 in order of frequency so the
        toy table has one row per piece that occurs.
    max_vocab : int
        Keep the most frequent ``max_vocab - 2`` types; the rest become <unk>.

    Returns
    -------
    explorer.core.corpus.Corpus
        ``words`` (row names; "<bos>" and "<unk>" first), ``ids`` (int64, lines
        separated by <bos>), ``classes`` empty, ``sentences`` the non-empty lines.

    Raises
    ------
    ConfigError
        The text holds fewer than 8 tokens.
    """
    from .corpus import Corpus

    text = (text or "")[:MAX_CORPUS_CHARS]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    streams: list[list[str]] = []
    for ln in lines:
        if tokenizer is None:
            streams.append(_WORD.findall(ln.lower()))
        else:
            # the tokenizer's pieces, keyed by id so equal-looking pieces stay apart
            out = []
            for k in range(0, len(ln), 10_000):
                out.extend(f"{t.id}\x00{t.piece}" for t in tokenizer.encode(ln[k:k + 10_000]) if not t.special)
            streams.append(out)
    counts: dict[str, int] = {}
    for s in streams:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    if sum(counts.values()) < 8:
        raise ConfigError("the text is too short to train on: it needs at least 8 words")
    special = ["<bos>", "<unk>"]
    kept = sorted(counts, key=lambda w: (-counts[w], w))[: max(1, max_vocab - len(special))]
    index = {w: i + len(special) for i, w in enumerate(kept)}
    unk = 1
    ids: list[int] = []
    for s in streams:
        ids.append(0)
        ids.extend(index.get(w, unk) for w in s)
    names = special + [w.split("\x00", 1)[-1] for w in kept]
    # row names must be unique for a word-level tokenizer of the saved model
    seen: dict[str, int] = {}
    unique = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        unique.append(n if k == 0 else f"{n}#{k}")
    return Corpus(unique, {}, np.asarray(ids, dtype=np.int64), lines)


# -- a whole live run: corpus, model, then the steps ----------------------------------------


@dataclass
class TrainingRun:
    """What a live run hands the view before its first step.

    ``model`` is the torch module being trained: read it only once the job
    has ended or while it is paused (the job then sleeps between steps).
    """

    corpus: object
    cfg: TrainConfig
    model: object = field(repr=False)
    #: a copy of E before the first step, (V, d) float32
    init_table: np.ndarray = field(repr=False)
    last_step: int = 0


_SYNTHETIC: dict[tuple[int, int], object] = {}


def synthetic_corpus(n_sentences: int = 20000, seed: int = 0):
    """The bundled model's synthetic corpus (made once per process, ~1 s)."""
    from .corpus import make_corpus

    key = (n_sentences, seed)
    if key not in _SYNTHETIC:
        _SYNTHETIC[key] = make_corpus(n_sentences, seed=seed)
    return _SYNTHETIC[key]


def live_training_job(corpus_factory, cfg: TrainConfig, control: TrainingControl | None = None,
                      batch_seconds: float = 0.03):
    """Build the corpus and the model, then train with :func:`training_job`.

    Yields ``(fraction, message)`` while preparing, then one
    :class:`TrainingRun`, then lists of :class:`StepMetrics`. Returns the
    TrainingRun with ``last_step`` set. ``corpus_factory()`` returns a
    Corpus (called here, off the GUI thread: tokenizing can take seconds).
    """
    cfg.validate()
    yield 0.0, "Preparing the corpus…"
    corpus = corpus_factory()
    if control is not None and control.stopped:
        return None
    yield 0.5, "Building the model…"
    torch = _torch()
    limit_torch_threads()
    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    run = TrainingRun(corpus, cfg, model, model.embed_tokens.weight.detach().numpy().copy())
    yield run
    run.last_step = yield from training_job(corpus.ids, corpus.vocab_size, cfg, model=model, control=control,
                                            batch_seconds=batch_seconds)
    return run
