"""Command line: launch the GUI, or run a headless command.

    python -m explorer [--model SPEC] [--text TEXT] [--token N] [--view NAME] [--screenshot FILE.png]
    python -m explorer --install-desktop | --version
    python -m explorer models [--json]
    python -m explorer inspect --model SPEC --text TEXT [--json] [--input-layer]
    python -m explorer health --model SPEC [--top N] [--json]
    python -m explorer project --model SPEC --method pca|tsne|umap [--sample N] [--seed S] [--dims 2|3] [--json]
    python -m explorer bench [--open SPEC] [--json]
    python -m explorer train [...]
    python -m explorer build-default [--out DIR]
    python -m explorer analogy --model SPEC A B C [--top N] [--json]
    python -m explorer grad --model SPEC --text TEXT [--seed S] [--json]
    python -m explorer runs LOGDIR [--json]
    python -m explorer --watch LOGDIR

Each command lives in its own module of explorer/cli (the window's in
gui.py); parser.py builds the parser, and :func:`main` runs the command.
Errors print one line ``error: ...`` and exit with status 2.
"""

from __future__ import annotations

import sys

from explorer.cli.bench import cmd_bench
from explorer.cli.errors import CliError
from explorer.cli.gui import cmd_gui
from explorer.cli.health import cmd_health
from explorer.cli.inspect import cmd_inspect
from explorer.cli.models import cmd_models
from explorer.cli.output import one_line
from explorer.cli.parser import parse_args
from explorer.cli.train import cmd_build_default, cmd_train
from explorer.core.errors import ExplorerError, user_message

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
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
        if args.command == "runs":
            from explorer.cli.runs import cmd_runs

            return cmd_runs(args)
        if args.install_desktop:
            from explorer.cli.desktop import cmd_install_desktop

            return cmd_install_desktop(args)
        return cmd_gui(args)
    except CliError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except (ExplorerError, MemoryError) as exc:
        print(f"error: {user_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
