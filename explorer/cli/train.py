"""``python -m explorer train [...]``: train the toy model headless, printing
its steps (one JSON object per step with ``--json``); and
``python -m explorer build-default [--out DIR]``: regenerate the bundled default model."""

from __future__ import annotations

import json

from explorer.cli.errors import CliError
from explorer.cli.paths import read_text_file, writable_folder

__all__ = ["add_build_default_parser", "add_train_parser", "cmd_build_default", "cmd_train"]


def add_train_parser(sub) -> None:
    t = sub.add_parser("train", help="train the toy model headless")
    t.add_argument("--steps", type=int, default=500)
    g = t.add_mutually_exclusive_group()
    g.add_argument("--tied", dest="tied", action="store_true", default=False,
                   help="the output projection reuses E (its gradient is then dense)")
    g.add_argument("--untied", dest="tied", action="store_false", help="a separate output matrix (default)")
    t.add_argument("--sparse", action="store_true", help="nn.Embedding(sparse=True): sparse gradients")
    t.add_argument("--optimizer", default="adam", help="sgd, adam, adamw or sparse_adam")
    t.add_argument("--lr", type=float, default=None, help="learning rate (default: 1.0 for sgd, 0.01 for the others)")
    t.add_argument("--weight-decay", type=float, default=0.0)
    t.add_argument("--dim", type=int, default=32)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--corpus", default=None, metavar="FILE",
                   help="train on a text file, word by word (default: the synthetic language)")
    t.add_argument("--save", default=None, metavar="DIR")
    t.add_argument("--json", action="store_true",
                   help="one JSON object per step: step, loss, vocab_size, batch_distinct_ids, grad_rows, "
                        "input_grad_rows, changed_rows, grad_fraction, changed_fraction, tied, sparse, optimizer")


def add_build_default_parser(sub) -> None:
    d = sub.add_parser("build-default", help="regenerate the bundled default model (bit for bit on the same CPU)")
    d.add_argument("--out", default=None, help="folder to write (default: the package's resources/default)")


def cmd_train(args) -> int:
    from explorer.core.training.config import default_lr
    from explorer.core.training.corpus import MAX_CORPUS_CHARS
    from explorer.core.training.model import (
        ConfigError,
        ToyLM,
        TrainConfig,
        save_model_folder,
        synthetic_corpus,
        text_corpus,
        train,
    )

    cfg = TrainConfig(
        steps=args.steps, dim=args.dim, batch_size=args.batch_size,
        lr=args.lr if args.lr is not None else default_lr(args.optimizer),
        optimizer=args.optimizer, weight_decay=args.weight_decay, tied=args.tied,
        sparse=args.sparse, seed=args.seed,
    )
    try:
        cfg.validate()
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.save is not None:
        writable_folder(args.save, "--save")  # before training, not after it
    if args.corpus is not None:
        text = read_text_file(args.corpus, "--corpus", 4 * MAX_CORPUS_CHARS)  # UTF-8: at most 4 bytes a character
        try:
            corpus = text_corpus(text)
        except ConfigError as exc:
            raise CliError(str(exc)) from None
    else:
        corpus = synthetic_corpus()
    import torch

    torch.manual_seed(cfg.seed)
    model = ToyLM.build(corpus.vocab_size, cfg)
    last = None
    try:
        for m in train(corpus.ids, corpus.vocab_size, cfg, model=model):
            last = m
            if args.json:
                row = m.as_json()
                row.update(grad_fraction=m.grad_rows / m.vocab_size, changed_fraction=m.changed_rows / m.vocab_size,
                           tied=cfg.tied, sparse=cfg.sparse, optimizer=cfg.optimizer)
                print(json.dumps(row), flush=True)
            elif m.step % max(1, cfg.steps // 20) == 0 or m.step == cfg.steps:
                print(f"step {m.step:6d}  loss {m.loss:.4f}  rows with gradient {m.grad_rows:4d}/{m.vocab_size}  "
                      f"rows changed {m.changed_rows:4d}", flush=True)
    except (FloatingPointError, ConfigError) as exc:
        raise CliError(str(exc)) from None
    if args.save:
        save_model_folder(model, cfg, corpus.words, corpus.classes, args.save)
        if not args.json:
            print(f"saved to {args.save}; open it with: python -m explorer --model {args.save}")
    return 0 if last is not None or cfg.steps == 0 else 1


def cmd_build_default(args) -> int:
    from explorer.core.sources import resources_dir
    from explorer.core.training.bundled import build_default

    out = writable_folder(args.out, "--out") if args.out is not None else str(resources_dir() / "default")
    build_default(out, progress=lambda f, loss: print(f"{f:4.0%}  loss {loss:.3f}", flush=True))
    print(f"wrote {out}")
    return 0
