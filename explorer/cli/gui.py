"""``python -m explorer [--model SPEC] [--text TEXT] [--token N] [--view NAME] [--screenshot FILE.png] ...``:
the window, when no subcommand is given. Its options are the top-level ones."""

from __future__ import annotations

from explorer.cli.errors import CliError

__all__ = ["VIEWS", "add_gui_arguments", "cmd_gui"]

VIEWS = ("matrix", "lookup", "projection", "similarity", "training", "cost", "health", "positions")


def add_gui_arguments(p, text_help: str) -> None:
    """The window's options, on the top-level parser ``p``."""
    p.add_argument("--model", default=None, help="model spec to open (default: the last one, or the bundled model)")
    p.add_argument("--text", default=None, help=f"text to tokenize; {text_help}")
    p.add_argument("--token", type=int, default=None, help="position of the token to select (from 0)")
    p.add_argument("--view", default=None, help=f"view to bring to the front: {', '.join(VIEWS)}; "
                   "VIEW:PAGE also opens a page of it (cost:famous, similarity:random)")
    p.add_argument("--screenshot", default=None, metavar="FILE.png", help="save a screenshot once loaded, then exit")
    p.add_argument("--screenshot-timeout", type=float, default=None, metavar="SECONDS",
                   help="with --screenshot: the longest wait for the model, the tour's step, the training and the "
                        "background jobs (default 120); past it the window is saved as it is, a warning says what "
                        "never came, and the exit code is 3")
    p.add_argument("--size", default=None, metavar="WxH", help="window size, e.g. 1280x800")
    p.add_argument("--train-steps", type=int, default=0, help="with --view training: steps to run first")
    p.add_argument("--tour", type=int, default=None, metavar="N", help="open the guided tour at step N")
    p.add_argument("--watch", default=None, metavar="LOGDIR",
                   help="follow a training run recorded with explorer.record in the Training tab (live charts, "
                        "the latest snapshot as the table)")


def cmd_gui(args) -> int:
    if args.view is not None and args.view.partition(":")[0] not in VIEWS:
        raise CliError(f"unknown view {args.view!r}; choose one of {', '.join(VIEWS)}")
    if args.screenshot_timeout is not None and not args.screenshot_timeout > 0:
        raise CliError("--screenshot-timeout takes a number of seconds above 0")
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
    if args.watch is not None:
        from explorer.core.recording.reader import read_header

        read_header(args.watch)  # a missing or empty directory: one error line, before any window
    from explorer.launch import run
    from explorer.screenshot import LIMIT_S

    return run(model=args.model, text=args.text, token=args.token, view=args.view,
               screenshot=args.screenshot, size=size, train_steps=args.train_steps, tour=args.tour,
               watch=args.watch, screenshot_limit_s=args.screenshot_timeout or LIMIT_S)
