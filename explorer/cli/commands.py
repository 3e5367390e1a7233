"""Command line: launch the GUI, or run a headless command.

    python -m explorer [--model SPEC] [--text TEXT] [--token N] [--view NAME] [--screenshot FILE.png]
    python -m explorer models [--json]
    python -m explorer inspect --model SPEC --text TEXT [--json] [--input-layer]
    python -m explorer health --model SPEC [--top N] [--json]
    python -m explorer project --model SPEC --method pca|tsne|umap [--sample N] [--seed S] [--dims 2|3] [--json]
    python -m explorer bench [--open SPEC] [--json]
    python -m explorer train [...]
    python -m explorer build-default [--out DIR]
    python -m explorer analogy --model SPEC A B C [--top N] [--json]
    python -m explorer grad --model SPEC --text TEXT [--seed S] [--json]

Errors print one line ``error: ...`` and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile

from explorer.cli.project import add_project_parser
from explorer.core.errors import ExplorerError, user_message

VIEWS = ("matrix", "lookup", "projection", "similarity", "training", "cost", "health", "positions")


class CliError(Exception):
    """A user error: printed as ``error: ...``, exit status 2."""


#: argparse takes "-x" for an option; --text takes it as text (see _text_values_with_dashes)
_DASH_HELP = "text starting with a dash is taken as it is (--text -x), or write --text=-x"
_TEXT_OPTIONS = ("--text",)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors follow our one-line rule
        raise CliError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="embedding-explorer", description="See and understand token embedding matrices.")
    p.add_argument("--model", default=None, help="model spec to open (default: the last one, or the bundled model)")
    p.add_argument("--text", default=None, help=f"text to tokenize; {_DASH_HELP}")
    p.add_argument("--token", type=int, default=None, help="position of the token to select (from 0)")
    p.add_argument("--view", default=None, help=f"view to bring to the front: {', '.join(VIEWS)}; "
                   "VIEW:PAGE also opens a page of it (cost:famous, similarity:random)")
    p.add_argument("--screenshot", default=None, metavar="FILE.png", help="save a screenshot once loaded, then exit")
    p.add_argument("--size", default=None, metavar="WxH", help="window size, e.g. 1280x800")
    p.add_argument("--train-steps", type=int, default=0, help="with --view training: steps to run first")
    p.add_argument("--tour", type=int, default=None, metavar="N", help="open the guided tour at step N")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    m = sub.add_parser("models", help="list the models this machine can open")
    m.add_argument("--json", action="store_true")

    i = sub.add_parser("inspect", help="tokenize a text and show its rows and neighbours")
    i.add_argument("--model", default="default")
    i.add_argument("--text", required=True, help=f"the text; {_DASH_HELP}")
    i.add_argument("--k", type=int, default=5, help="neighbours per token")
    i.add_argument("--json", action="store_true")
    i.add_argument("--input-layer", action="store_true",
                   help="add each token's position id and the model's input vectors (positions, token types, LayerNorm)")

    h = sub.add_parser("health", help="rows that training left behind, and the tokenizer's round trip")
    h.add_argument("--model", default="default")
    h.add_argument("--top", type=int, default=100, help="candidates to list, most under-trained first")
    h.add_argument("--json", action="store_true")

    add_project_parser(sub)

    b = sub.add_parser("bench", help="measure speed")
    b.add_argument("--open", dest="open_spec", default=None, metavar="SPEC",
                   help="embedding-only opening versus a full transformers load")
    b.add_argument("--big", action="store_true",
                   help="also open a 128,256 x 8,192 bf16 table written to a temp file and search its neighbours, "
                        "and check the token health of a 128,256 x 4,096 one and of MiniLM")
    b.add_argument("--layouts", action="store_true",
                   help="t-SNE of 5,000 MiniLM rows (total, first layout) and UMAP of 2,000, with trustworthiness")
    b.add_argument("--lookup", dest="lookup_spec", default=None, metavar="SPEC", help="gather vs one-hot on SPEC")
    b.add_argument("--gui", action="store_true", help="selection latency, start-up and model opening in the window")
    b.add_argument("--training", action="store_true",
                   help="training steps per second headless and with the view's live charts")
    b.add_argument("--json", action="store_true")

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

    d = sub.add_parser("build-default", help="regenerate the bundled default model (bit for bit on the same CPU)")
    d.add_argument("--out", default=None, help="folder to write (default: the package's resources/default)")

    from explorer.cli.analogy import add_analogy_parser
    from explorer.cli.grad import add_grad_parser

    add_analogy_parser(sub)
    add_grad_parser(sub, _DASH_HELP)
    return p


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    names = set()
    for action in parser._actions:
        names.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names |= _option_strings(sub)
    return names


def _text_values_with_dashes(argv: list[str], options: set[str]) -> list[str]:
    """Join ``--text VALUE`` into ``--text=VALUE`` when VALUE starts with a
    dash, so argparse takes it as the text ("expected one argument"
    otherwise). A value that is itself one of our options (``--text --json``)
    is left alone: the text was forgotten, and argparse says so; so is
    ``--``, which argparse drops from any value (the text became a list)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _TEXT_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1] != "--" and argv[i + 1].split("=", 1)[0] not in options:
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser()
        args = parser.parse_args(_text_values_with_dashes(list(argv), _option_strings(parser)))
        if args.command == "models":
            return cmd_models(args)
        if args.command == "inspect":
            return cmd_inspect(args)
        if args.command == "health":
            return cmd_health(args)
        if args.command == "project":
            from explorer.cli.project import cmd_project

            return cmd_project(args)
        if args.command == "bench":
            return cmd_bench(args)
        if args.command == "train":
            return cmd_train(args)
        if args.command == "build-default":
            return cmd_build_default(args)
        if args.command == "analogy":
            from explorer.cli.analogy import cmd_analogy

            return cmd_analogy(args, CliError)
        if args.command == "grad":
            from explorer.cli.grad import cmd_grad

            return cmd_grad(args, CliError)
        return cmd_gui(args)
    except CliError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except (ExplorerError, MemoryError) as exc:
        print(f"error: {user_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _open(spec: str):
    from explorer.core.sources import open_table

    return open_table(spec)


# -- models ---------------------------------------------------------------------


def cmd_models(args) -> int:
    from explorer.core.sources import list_sources, recent

    infos = list_sources(recent.load())
    if args.json:
        print(json.dumps([i.as_dict() for i in infos], indent=1))
        return 0
    rows = [("spec", "V", "d", "dtype", "tied", "origin", "name")]
    for i in infos:
        rows.append((
            i.spec,
            f"{i.vocab_size:,}" if i.vocab_size else "?",
            f"{i.dim:,}" if i.dim else "?",
            i.dtype or "?",
            {True: "yes", False: "no", None: "-"}[i.tied],
            i.origin,
            i.name if not i.error else f"cannot open: {i.error}",
        ))
    _print_table(rows, right=(1, 2))
    return 0


def _print_table(rows, right=()):
    widths = [max(len(str(r[c])) for r in rows) for c in range(len(rows[0]))]
    for n, r in enumerate(rows):
        cells = [str(v).rjust(w) if c in right else str(v).ljust(w) for c, (v, w) in enumerate(zip(r, widths))]
        print("  ".join(cells).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


# -- inspect ----------------------------------------------------------------------


def inspect_data(spec: str, text: str, k: int = 5, input_layer: bool = False) -> dict:
    """Everything `inspect --json` prints, as strict JSON data (no NaN or
    Infinity: non-finite values are None). See :func:`explorer.core.tokens.inspection.inspect_text`;
    ``input_layer``: :func:`explorer.cli.input_layer.add_input_layer`."""
    from explorer.core.tokens.inspection import inspect_text

    table = _open(spec)
    with _native_stderr_held():
        result = inspect_text(table, text, k)
    if input_layer:
        from explorer.cli.input_layer import add_input_layer

        return add_input_layer(result.as_json(), table, result.tokens)
    return result.as_json()


@contextlib.contextmanager
def _native_stderr_held():
    """Hold what native code writes to stderr while a tokenizer runs.

    A Rust panic in a tokenizer prints its own message and backtrace on
    file descriptor 2 before Python sees the exception (which becomes our
    one-line error). On failure that noise is dropped; on success anything
    written is passed on, so no warning is lost.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        ok = False
        try:
            yield
            ok = True
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if ok:
                held.seek(0)
                data = held.read()
                if data:
                    sys.stderr.write(data.decode("utf-8", "replace"))
                    sys.stderr.flush()


def cmd_inspect(args) -> int:
    if args.k < 1:
        raise CliError("--k must be at least 1")
    data = inspect_data(args.model, args.text, args.k, args.input_layer)
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    tied = {True: "tied", False: "untied", None: "no output projection / unknown"}[data["tied"]]
    print(f"{data['name']}  [{data['model']}]")
    print(f"E: {data['vocab_size']:,} x {data['dim']:,} {data['dtype']}, {data['params']:,} parameters, "
          f"{data['bytes']:,} bytes, row stride {data['row_bytes']:,} bytes, {tied}")
    for note in data["notes"]:
        print(f"note: {note}")
    if not data["tokens"]:
        print("(no tokens: the text is empty)")
        return 0
    rows = [("#", "piece", "id", "byte offset", "row (first values)", "nearest by cosine")]
    for t, nb in zip(data["tokens"], data["neighbors"]):
        piece = t["shown"] + (" (special)" if t["special"] else "")
        ident = "-" if t["id"] is None else f"{t['id']:,}"
        if t["problem"] is not None:
            rows.append((t["position"], piece, ident, "-", f"no row: {t['problem']['label']}", "-"))
            continue
        rows.append((t["position"], piece, ident, f"{t['byte_offset']:,} = 0x{t['byte_offset']:X}",
                     _first_values(t["row"]),
                     "(not searched)" if nb is None else
                     ", ".join(f"{n['shown']} {n['cosine']:.2f}" for n in nb[:3])))
    _print_table(rows, right=(0, 2, 3))
    # the notes count every kind of bad token; the first few are explained in full
    for t in [t for t in data["tokens"] if t["problem"] is not None][:3]:
        print(f"token {t['position']}: {t['problem']['message']}")
    for w in data["words"]:
        print(f"word {w['text']!r} is split into {len(w['positions'])} pieces; their mean pooled row starts "
              f"{_first_values(w['mean'])}")
    if args.input_layer:
        from explorer.cli.input_layer import print_input_layer

        print_input_layer(data)
    return 0


def _first_values(row: list | None) -> str:
    if row is None:
        return "(not printed)"
    vals = ", ".join("nan/inf" if x is None else f"{x:+.3f}" for x in row[:4])
    return f"[{vals}{', ...' if len(row) > 4 else ''}]"


# -- health -------------------------------------------------------------------------


def cmd_health(args) -> int:
    if args.top < 0:
        raise CliError("--top must be 0 or more")
    from explorer.core.health import health_report
    from explorer.core.health.text import format_report

    table = _open(args.model)
    with _native_stderr_held():
        report = health_report(table)
    if args.json:
        print(json.dumps(report.as_json(args.top, table.piece, lambda i: table.shown_piece(i).text), allow_nan=False))
    else:
        print(format_report(report, args.top, table))
    return 0


# -- bench --------------------------------------------------------------------------


def cmd_bench(args) -> int:
    from explorer.core import bench

    results = {}
    if args.open_spec:
        try:
            results["open"] = bench.bench_open(args.open_spec)
        except bench.BenchError as exc:
            raise CliError(str(exc)) from None
    if args.big:
        results["big_table"] = bench.bench_big_table()
    if args.layouts:
        from explorer.core.bench.layouts import bench_layouts

        results["layouts"] = bench_layouts()
    if args.lookup_spec:
        table = _open(args.lookup_spec)
        results["lookup"] = bench.bench_lookup(table)
    if args.gui:
        from explorer.benchmarks.gui import bench_gui

        results["gui"] = bench_gui()
    if args.training:
        from explorer.benchmarks.training import bench_training

        results["training"] = bench_training()
    if not results:
        results = bench.bench_default()
        from explorer.benchmarks.gui import bench_gui

        results["gui"] = bench_gui()
    if args.json:
        print(json.dumps(bench.results_as_json(results), indent=1))
        return 0
    gui = results.pop("gui", None)
    training = results.pop("training", None)
    if training is not None:
        from explorer.benchmarks.training import format_training

        print(format_training(training))
    if results:
        print(bench.format_results(results))
    if gui is not None:
        from explorer.benchmarks.gui import format_gui

        print(format_gui(gui))
    return 0


# -- train ---------------------------------------------------------------------------


def cmd_train(args) -> int:
    from explorer.core.training.config import default_lr
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
    if args.corpus:
        try:
            with open(args.corpus, encoding="utf-8", errors="replace") as f:
                corpus = text_corpus(f.read())
        except OSError as exc:
            raise CliError(f"cannot read {args.corpus}: {exc.strerror or exc}") from None
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

    out = args.out or str(resources_dir() / "default")
    build_default(out, progress=lambda f, loss: print(f"{f:4.0%}  loss {loss:.3f}", flush=True))
    print(f"wrote {out}")
    return 0


# -- GUI ------------------------------------------------------------------------------


def cmd_gui(args) -> int:
    if args.view is not None and args.view.partition(":")[0] not in VIEWS:
        raise CliError(f"unknown view {args.view!r}; choose one of {', '.join(VIEWS)}")
    if args.token is not None and args.token < 0:
        raise CliError("--token is a position in the text, counting from 0")
    size = None
    if args.size:
        try:
            w, h = (int(x) for x in args.size.lower().split("x"))
            size = (w, h)
        except ValueError:
            raise CliError(f"bad --size {args.size!r}; write WIDTHxHEIGHT, e.g. 1280x800") from None
    from explorer.core.tour.steps import STEPS

    if args.tour is not None and not 1 <= args.tour <= len(STEPS):
        raise CliError(f"--tour takes a step from 1 to {len(STEPS)}")
    from explorer.launch import run

    return run(model=args.model, text=args.text, token=args.token, view=args.view,
               screenshot=args.screenshot, size=size, train_steps=args.train_steps, tour=args.tour)
