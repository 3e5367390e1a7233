"""The argument parser: the window's options at the top level, and one
subcommand per module of explorer/cli, each adding its own parser.

argparse's own errors raise :class:`~explorer.cli.errors.CliError`, so they
follow the one-line ``error: ...`` rule. A ``--text`` value starting with a
dash is taken as the text (see :func:`_text_values_with_dashes`).
"""

from __future__ import annotations

import argparse

from explorer.cli.bench import add_bench_parser
from explorer.cli.desktop import add_desktop_arguments
from explorer.cli.errors import CliError
from explorer.cli.gui import add_gui_arguments
from explorer.cli.health import add_health_parser
from explorer.cli.inspect import add_inspect_parser
from explorer.cli.models import add_models_parser
from explorer.cli.project import add_project_parser
from explorer.cli.train import add_build_default_parser, add_train_parser

__all__ = ["DASH_HELP", "build_parser", "parse_args"]

#: argparse takes "-x" for an option; --text takes it as text (see _text_values_with_dashes)
DASH_HELP = "text starting with a dash is taken as it is (--text -x), or write --text=-x"
_TEXT_OPTIONS = ("--text",)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors follow our one-line rule
        raise CliError(message)


class _Version(str):
    """argparse's version string, read from the package metadata only when --version is asked for."""

    def __mod__(self, values):  # argparse formats it with %(prog)s
        import explorer

        return f"{values.get('prog', 'embedding-explorer')} {explorer.__version__}"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="embedding-explorer", description="See and understand token embedding matrices.")
    add_gui_arguments(p, DASH_HELP)
    add_desktop_arguments(p)
    p.add_argument("--version", action="version", version=_Version("%(prog)s"))
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    add_models_parser(sub)
    add_inspect_parser(sub, DASH_HELP)
    add_health_parser(sub)
    add_project_parser(sub)
    add_bench_parser(sub)
    add_train_parser(sub)
    add_build_default_parser(sub)

    from explorer.cli.analogy import add_analogy_parser
    from explorer.cli.grad import add_grad_parser

    add_analogy_parser(sub)
    add_grad_parser(sub, DASH_HELP)
    from explorer.cli.runs import add_runs_parser

    add_runs_parser(sub)
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line ``argv`` (without the program name), parsed; raises CliError."""
    parser = build_parser()
    return parser.parse_args(_text_values_with_dashes(list(argv), _option_strings(parser)))


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
